// Runs the real extension bundle (dist/extension.js) under Node with a
// stubbed `vscode` module, against the real gopi binary on the offline
// faux model: activation, a prompt streamed to the webview, steering,
// follow-ups and abort, the approval diff accepted and rejected, sessions,
// the model switch, restart after gopi is killed, and the doctor.
//
//   GOPI_BIN=/path/to/gopi node --test test/extension.test.mjs
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { isEvent, loadExtension, vscode, WAIT_MS, waitFor } from "./harness.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const extDir = path.resolve(here, "..");
const require = createRequire(import.meta.url);
const gopiBin = path.resolve(process.env.GOPI_BIN ?? path.join(extDir, "../../bin/gopi"));
if (!existsSync(gopiBin)) throw new Error(`gopi binary not found at ${gopiBin}; run make build or set GOPI_BIN`);
if (!existsSync(path.join(extDir, "dist/extension.js"))) throw new Error("dist/extension.js is missing; run node esbuild.mjs");

const ext = loadExtension();
const { calls, answers, settings, providers, bus, fakeWebview } = vscode.__stub;
const textOf = (msg) =>
	typeof msg?.content === "string" ? msg.content : (msg?.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
/** The status bar item of the newest activation. */
const statusItem = () => vscode.__stub.statusItems.filter((i) => i.id === "gopi.status").at(-1);

/**
 * Activates the extension in a fresh workspace and agent directory, opens
 * the side bar's chat and waits until its gopi answered. The test's
 * cleanup deactivates (stopping gopi) and removes the directories.
 */
async function start(t, { model = "faux-fast", approval = "writes", extensionDir = extDir, binary = gopiBin, files = {}, agentFiles = {}, env = {}, extra = {} } = {}) {
	const root = await realpath(await mkdtemp(path.join(tmpdir(), "gopi-vscode-")));
	const work = path.join(root, "work");
	const agentDir = path.join(root, "agent");
	await mkdir(work, { recursive: true });
	await mkdir(agentDir, { recursive: true });
	for (const [name, text] of Object.entries(files)) {
		await mkdir(path.dirname(path.join(work, name)), { recursive: true });
		await writeFile(path.join(work, name), text);
	}
	for (const [name, text] of Object.entries(agentFiles)) await writeFile(path.join(agentDir, name), text);
	for (const k of Object.keys(settings)) delete settings[k];
	Object.assign(settings, {
		"gopi.path": binary,
		"gopi.env": { PI_CODING_AGENT_DIR: agentDir, ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "", GEMINI_API_KEY: "", GOOGLE_API_KEY: "", ...env },
		"gopi.provider": "faux",
		"gopi.model": model,
		"gopi.approval": approval,
		"gopi.resumeLastSession": false,
		...extra,
	});
	for (const k of Object.keys(answers)) answers[k] = undefined;
	calls.length = 0;
	vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(work), name: "work", index: 0 }];
	const context = { extensionUri: vscode.Uri.file(extensionDir), subscriptions: [], extensionPath: extensionDir, secrets: vscode.__stub.secrets };
	const m = ext.activate(context);
	const view = { webview: fakeWebview(), onDidDispose: () => ({ dispose() {} }), description: "" };
	await providers.webviewView.get("gopi.chat").resolveWebviewView(view);
	const session = await m.sidebarCurrent();
	t.after(async () => {
		await ext.deactivate();
		for (const d of context.subscriptions) d.dispose?.();
		await new Promise((r) => setTimeout(r, 100));
		await rm(root, { recursive: true, force: true });
	});
	assert.ok(session.client.running, `gopi did not start; log:\n${vscode.__stub.outputLines.join("")}\n${JSON.stringify(calls.filter((c) => /show/.test(c.kind)))}\n${JSON.stringify(view.webview.posted.filter((p) => p.type === "notice"))}`);
	return { m, view, session, work, root, posted: view.webview.posted };
}

test("activation: the side bar's chat starts gopi and shows a streamed reply", async (t) => {
	const { view, posted } = await start(t);
	assert.match(view.webview.html, /Content-Security-Policy/);
	assert.match(view.webview.html, /script-src 'nonce-/);
	assert.doesNotMatch(view.webview.html, /unsafe-inline|unsafe-eval/);
	await waitFor("the session's history", (m) => m.type === "history", { past: posted });
	view.webview.send({ type: "send", text: "stream: 50", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	const kinds = posted.filter((m) => m.type === "event").map((m) => m.event.type);
	assert.ok(kinds.indexOf("agent_start") < kinds.indexOf("message_update"));
	const deltas = posted.filter(isEvent("message_update", (e) => e.assistantMessageEvent?.type === "text_delta"));
	assert.ok(deltas.length >= 1, "the reply streamed");
	assert.ok(deltas.every((m) => m.event.message === undefined), "updates are lean");
	// Deltas arrive merged (coalesceDeltasMs); together they are the reply.
	assert.equal(deltas.map((m) => m.event.assistantMessageEvent.delta).join(""), Array.from({ length: 50 }, (_, i) => i + 1).join(" "));
	const end = posted.find(isEvent("message_end", (e) => e.message.role === "assistant"));
	assert.match(textOf(end.event.message), /^1 2 3 .* 50$/);
	// The webview's Copy button writes VS Code's clipboard.
	view.webview.send({ type: "copy", text: "go test ./..." });
	await waitFor("the clipboard", (c) => c.kind === "clipboard" && c.text === "go test ./...", { event: "call", past: calls });
	// The status bar follows the session.
	assert.match(statusItem().text, /faux-fast/);
});

test("while a reply streams, Enter steers, Alt+Enter queues a follow-up, and Stop aborts", async (t) => {
	const { view, posted } = await start(t, { model: "faux-1" });
	view.webview.send({ type: "send", text: "stream: 400", images: [], mode: "prompt" });
	await waitFor("the first delta", isEvent("message_update"), { past: posted });
	view.webview.send({ type: "send", text: "reply: queued later", images: [], mode: "followUp" });
	const q = await waitFor("queue_update with the follow-up", isEvent("queue_update", (e) => e.followUp?.includes("reply: queued later")), { past: posted });
	assert.deepEqual(q.event.steering, []);
	// Removing it from the queue (the × in the webview) leaves it empty.
	view.webview.send({ type: "dequeue", kind: "followUp", index: 0 });
	await waitFor("the emptied queue", (m) => m.type === "event" && m.event.type === "queue_update" && m.event.followUp.length === 0 && m !== q, { past: posted.slice(posted.indexOf(q) + 1) });
	view.webview.send({ type: "abort" });
	const end = await waitFor("the aborted reply", isEvent("message_end", (e) => e.message.role === "assistant"), { past: posted });
	assert.equal(end.event.message.stopReason, "aborted");
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	assert.ok(!posted.some(isEvent("message_start", (e) => textOf(e.message) === "reply: queued later")), "the removed follow-up never ran");

	// Steering: the steer arrives while faux-1 streams and runs next.
	const mark = posted.length;
	view.webview.send({ type: "send", text: "stream: 300", images: [], mode: "prompt" });
	await waitFor("streaming again", isEvent("message_update"), { past: posted.slice(mark) });
	view.webview.send({ type: "send", text: "reply: steered", images: [], mode: "steer" });
	await waitFor("the steered reply", isEvent("message_end", (e) => e.message.role === "assistant" && textOf(e.message) === "steered"), { past: posted.slice(mark) });
});

/** Answers each approval the chat is shown, in order, with the next of answers (gopi's words), from its card. */
function answerCards(view, posted, answers) {
	const seen = new Set();
	const asked = [];
	const on = (m, w) => {
		if (w !== view.webview || m.type !== "approval" || seen.has(m.id)) return;
		seen.add(m.id);
		asked.push(m);
		const a = answers.shift();
		if (a) setTimeout(() => view.webview.send({ type: "approve", id: m.id, answer: a }), 20);
	};
	bus.on("posted", on);
	return { asked, stop: () => bus.off("posted", on) };
}

const approvalItem = () => vscode.__stub.statusItems.filter((i) => i.id === "gopi.approval").at(-1);
/** The sandbox's status bar mark of the newest activation. */
const sandboxItem = () => vscode.__stub.statusItems.filter((i) => i.id === "gopi.sandbox").at(-1);
/** The arguments the session's gopi was started with. */
const gopiArgs = (session) => session.client.lc?._serverProcess?.spawnargs.slice(1) ?? [];

test("approval: a write opens an editable proposal; Accept on the card writes it, Reject leaves the file", async (t) => {
	const { view, posted, work } = await start(t);
	const cards = answerCards(view, posted, ["Allow", "Deny"]);
	t.after(cards.stop);
	view.webview.send({ type: "send", text: "write: notes.txt :: hello from gopi", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	assert.equal(await readFile(path.join(work, "notes.txt"), "utf8"), "hello from gopi");
	const q = cards.asked[0];
	assert.match(q.title, /notes\.txt/);
	assert.deepEqual(
		q.options.map((o) => o.label),
		["Accept", "Always", "Reject"],
	);
	const start1 = posted.find(isEvent("tool_execution_start"));
	assert.equal(q.toolCallId, start1.event.toolCallId, "the question is on its tool's card");
	const done = posted.find((m) => m.type === "approvalDone" && m.id === q.id);
	assert.equal(done.outcome, "accepted");
	assert.ok(approvalItem().texts.some((x) => /notes\.txt/.test(x)), "the status bar showed the question");
	assert.equal(approvalItem().visible, false, "and hid it once answered");
	const diff = calls.find((c) => c.kind === "executeCommand" && c.id === "vscode.diff");
	assert.ok(diff, "a diff editor was opened");
	const [left, right] = diff.args;
	assert.equal(left.scheme, "gopi-review", "a new file is compared with an empty document");
	assert.equal(right.scheme, "gopi-proposal", "the proposal is an editable document");
	const changes = posted.find((m) => m.type === "changes");
	assert.ok(changes?.files.includes("notes.txt"), "the run's changed files are listed");

	// An edit shows the file against its edited text; rejecting keeps it,
	// and a rejected edit is not listed as a change.
	const mark = posted.length;
	calls.length = 0;
	view.webview.send({ type: "send", text: "edit: notes.txt :: hello => goodbye", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted.slice(mark) });
	const diff2 = calls.find((c) => c.kind === "executeCommand" && c.id === "vscode.diff");
	assert.equal(diff2.args[0].fsPath, path.join(work, "notes.txt"));
	const fsp = providers.fileSystem.get("gopi-proposal");
	assert.ok(fsp, "proposals live in the extension's file system");
	assert.equal(await readFile(path.join(work, "notes.txt"), "utf8"), "hello from gopi", "rejected: unchanged");
	const end = posted.slice(mark).find(isEvent("tool_execution_end"));
	assert.equal(end.event.isError, true);
	assert.equal(
		posted.slice(mark).find((m) => m.type === "changes"),
		undefined,
		"a rejected edit changed nothing, and the chat says nothing changed",
	);
	assert.equal(posted.find((m) => m.type === "approvalDone" && m.id === cards.asked[1].id).outcome, "rejected");
});

test("each run's Changed link shows that run's change, not the file's latest", async (t) => {
	const { view, posted, work } = await start(t);
	const cards = answerCards(view, posted, ["Allow", "Allow"]);
	t.after(cards.stop);
	view.webview.send({ type: "send", text: "write: a.txt :: hello", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	const first = posted.find((m) => m.type === "changes");
	const mark = posted.length;
	view.webview.send({ type: "send", text: "edit: a.txt :: hello => bye", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted.slice(mark) });
	const second = posted.slice(mark).find((m) => m.type === "changes");
	assert.notEqual(first.run, second.run);
	assert.equal(await readFile(path.join(work, "a.txt"), "utf8"), "bye");
	const text = (u) => providers.textDocumentContent.get("gopi-review").provideTextDocumentContent(u);
	for (const [c, before, after] of [
		[first, "", "hello"],
		[second, "hello", "bye"],
	]) {
		calls.length = 0;
		view.webview.send({ type: "openChange", path: "a.txt", run: c.run });
		const d = await waitFor("the change's diff", (x) => x.kind === "executeCommand" && x.id === "vscode.diff", { event: "call", past: calls });
		assert.equal(text(d.args[0]), before, `run ${c.run}: before`);
		assert.equal(text(d.args[1]), after, `run ${c.run}: after`);
	}
	// Review all: the run's files in VS Code's multi-file diff, each its own before and after.
	calls.length = 0;
	view.webview.send({ type: "reviewRun", run: second.run });
	const multi = await waitFor("the multi-file diff", (x) => x.kind === "executeCommand" && x.id === "vscode.changes", { event: "call", past: calls });
	const [title, entries] = multi.args;
	assert.match(title, /1 file/);
	assert.equal(entries.length, 1);
	assert.equal(entries[0][0].fsPath, path.join(work, "a.txt"));
	assert.equal(text(entries[0][1]), "hello");
	assert.equal(text(entries[0][2]), "bye");
});

test("Stop while a question waits: the card says aborted, the file is not written, nothing is left open", async (t) => {
	const { view, posted, work } = await start(t);
	const cards = answerCards(view, posted, []);
	t.after(cards.stop);
	view.webview.send({ type: "send", text: "write: held.txt :: never", images: [], mode: "prompt" });
	await waitFor("the question", (m) => m.type === "approval", { past: posted });
	assert.equal(approvalItem().visible, true, "the status bar shows the waiting question");
	view.webview.send({ type: "abort" });
	const done = await waitFor("the question withdrawn", (m) => m.type === "approvalDone", { past: posted });
	assert.equal(done.outcome, "aborted");
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	const end = posted.find(isEvent("tool_execution_end"));
	assert.match(JSON.stringify(end.event.result), /aborted/i);
	assert.doesNotMatch(JSON.stringify(end.event.result), /denied/i);
	assert.equal(existsSync(path.join(work, "held.txt")), false);
	assert.equal(approvalItem().visible, false);
	assert.ok(
		calls.some((c) => c.kind === "executeCommand" && c.id === "setContext" && c.args[0] === "gopi.approvalPending" && c.args[1] === false),
		"the editor toolbar's buttons went",
	);
});

test("the proposal's toolbar answers too: what the user typed into the proposal is what gets written", async (t) => {
	const { view, posted, work } = await start(t);
	view.webview.send({ type: "send", text: "write: mine.txt :: gopi's words", images: [], mode: "prompt" });
	const q = await waitFor("the question", (m) => m.type === "approval", { past: posted });
	const diff = calls.find((c) => c.kind === "executeCommand" && c.id === "vscode.diff");
	const right = diff.args[1];
	// The user edits the proposal (the diff editor writes it through the provider).
	providers.fileSystem.get("gopi-proposal").writeFile(right, Buffer.from("the user's words\n"));
	await vscode.commands.executeCommand("gopi.approval.accept", right);
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	assert.equal(posted.find((m) => m.type === "approvalDone" && m.id === q.id).outcome, "accepted");
	assert.equal(await readFile(path.join(work, "mine.txt"), "utf8"), "the user's words\n");
	const end = posted.find(isEvent("tool_execution_end"));
	assert.match(JSON.stringify(end.event.result), /user/i, "the model reads that the user changed the proposal");
});

test("bash asks on its card with the whole command; Reject runs nothing", async (t) => {
	const { view, posted, work } = await start(t);
	const cards = answerCards(view, posted, ["Deny"]);
	t.after(cards.stop);
	view.webview.send({ type: "send", text: "bash: touch ran.txt", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	assert.match(cards.asked[0].title, /touch ran\.txt/);
	assert.equal(cards.asked[0].toolName, "bash");
	assert.equal(
		calls.some((c) => c.kind === "showWarningMessage" && c.options?.modal),
		false,
		"no modal dialog takes the user's keyboard",
	);
	assert.equal(existsSync(path.join(work, "ran.txt")), false);
});

test("sessions: a new session, then the old one resumed from the list", async (t) => {
	const { m, view, posted } = await start(t);
	view.webview.send({ type: "send", text: "reply: first session", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	const s2 = await vscode.commands.executeCommand("gopi.newSession");
	assert.ok(s2.client.running);
	// The new session's history is empty.
	const mark = view.webview.posted.findLastIndex((x) => x.type === "history" && x.messages.length > 0);
	await waitFor("the new session's history", (x) => x.type === "history" && x.messages.length === 0, { past: view.webview.posted.slice(mark + 1) });
	answers.showQuickPick = (items) => items.find((i) => /reply: first session/.test(i.label));
	const before = view.webview.posted.length;
	await vscode.commands.executeCommand("gopi.sessions");
	const hist = await waitFor("the resumed history", (x) => x.type === "history" && x.messages.some((mm) => textOf(mm) === "first session"), {
		past: view.webview.posted.slice(before),
	});
	assert.ok(hist);
	assert.equal(await m.active(), s2);
});

test("the model switch and thinking level reach gopi and the status bar", async (t) => {
	const { session } = await start(t);
	answers.showQuickPick = (items) => items.find((i) => i.model?.id === "faux-1");
	await vscode.commands.executeCommand("gopi.switchModel");
	const state = await session.client.request("get_state");
	assert.equal(state.model.id, "faux-1");
	await vscode.commands.executeCommand("gopi.cycleThinking");
	await session.refreshStatus();
	assert.match(statusItem().text, /faux-1/);
	assert.notEqual((await session.client.request("get_state")).thinkingLevel, state.thinkingLevel);
});

test("gopi killed: the chat says so with Restart, and Restart resumes the conversation", async (t) => {
	const { view, posted, session } = await start(t);
	view.webview.send({ type: "send", text: "reply: before the crash", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	await session.refreshStatus();
	assert.ok(session.sessionFile, "the session file is known");
	const proc = session.client.lc?._serverProcess;
	assert.ok(proc?.pid, "gopi's process");
	proc.kill("SIGKILL");
	const notice = await waitFor("the stopped notice", (x) => x.type === "notice" && x.action === "restart", { past: posted });
	assert.match(notice.text, /exited/);
	assert.ok(calls.some((c) => c.kind === "showErrorMessage" && c.items.includes("Restart")));
	await vscode.commands.executeCommand("gopi.restart");
	assert.ok(session.client.running, "running again");
	const hist = await waitFor("the history after restart", (x) => x.type === "history" && x.messages.some((mm) => textOf(mm) === "before the crash"), { past: view.webview.posted });
	assert.ok(hist);
	view.webview.send({ type: "send", text: "reply: after the restart", images: [], mode: "prompt" });
	await waitFor("a reply after the restart", isEvent("message_end", (e) => textOf(e.message) === "after the restart"), { past: view.webview.posted });
});

test("a missing binary: a clear message with Restart and the log, never a dead panel", async (t) => {
	const { view } = await start(t);
	settings["gopi.path"] = path.join(tmpdir(), "no-such-gopi-binary");
	await vscode.commands.executeCommand("gopi.restart");
	const n = await waitFor("the error notice", (x) => x.type === "notice" && /did not start|exited/.test(x.text), { past: view.webview.posted });
	assert.equal(n.action, "restart");
	assert.ok(calls.some((c) => c.kind === "showErrorMessage" && /no-such-gopi-binary/.test(c.message)), "the message names the binary");
	settings["gopi.path"] = gopiBin;
});

test("doctor reports the binary, its version, the handshake and the providers", async (t) => {
	await start(t);
	const text = await vscode.commands.executeCommand("gopi.doctor");
	assert.match(text, new RegExp(`binary: \`${gopiBin.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\``));
	assert.match(text, /version: gopi /);
	assert.match(text, /handshake: ok/);
	assert.match(text, /providers with credentials: .*faux/);
	assert.match(text, /- sandbox: .*\(gopi.sandbox: gopi's default\)/);
});

test("Add Selection to Chat inserts a path#L range; @ completes workspace files", async (t) => {
	const { view, work } = await start(t);
	await mkdir(path.join(work, "src"), { recursive: true });
	await writeFile(path.join(work, "src", "server.go"), "package main\n");
	vscode.window.activeTextEditor = {
		document: { uri: vscode.Uri.file(path.join(work, "src", "server.go")) },
		selection: { start: { line: 9, character: 0 }, end: { line: 19, character: 4 } },
	};
	await vscode.commands.executeCommand("gopi.addSelection");
	vscode.window.activeTextEditor = undefined;
	assert.ok(view.webview.posted.some((m) => m.type === "insert" && m.text === "@src/server.go#L10-20 "));
	view.webview.send({ type: "complete", query: "serv" });
	const files = await waitFor("file completions", (m) => m.type === "files", { past: view.webview.posted });
	assert.deepEqual(files.items, ["src/server.go"]);
});

// GOPI_VSIX_DIR: an unpacked platform .vsix's extension/ folder, whose
// bin/gopi is then the binary tested (run.sh sets it after packaging).
test("with gopi.path unset, the binary shipped in the extension's bin/ is the one started", async (t) => {
	let shipped = process.env.GOPI_VSIX_DIR;
	if (!shipped) {
		shipped = await realpath(await mkdtemp(path.join(tmpdir(), "gopi-ext-")));
		t.after(() => rm(shipped, { recursive: true, force: true }));
		await mkdir(path.join(shipped, "bin"));
		await copyFile(gopiBin, path.join(shipped, "bin", "gopi"));
	}
	const { session } = await start(t, { extensionDir: shipped, binary: "" });
	assert.equal(session.client.binary, path.join(shipped, "bin", "gopi"));
	const text = await vscode.commands.executeCommand("gopi.doctor");
	assert.match(text, /\(from this extension\)/);
	assert.match(text, /handshake: ok/);
});

test("an editor tab is a conversation of its own, with its own gopi; closing it stops that gopi", async (t) => {
	const { view, session } = await start(t);
	const tab = await vscode.commands.executeCommand("gopi.openInTab");
	const panel = calls.find((c) => c.kind === "createWebviewPanel").panel;
	assert.match(panel.webview.html, /Content-Security-Policy/);
	assert.ok(tab.client.running);
	assert.notEqual(tab, session);
	assert.notEqual(tab.client.lc._serverProcess.pid, session.client.lc._serverProcess.pid);
	panel.webview.send({ type: "send", text: "reply: from the tab", images: [], mode: "prompt" });
	await waitFor("the tab's reply", isEvent("message_end", (e) => textOf(e.message) === "from the tab"), { past: panel.webview.posted });
	assert.ok(!view.webview.posted.some(isEvent("message_end", (e) => textOf(e.message) === "from the tab")), "the side bar did not get it");
	const proc = tab.client.lc._serverProcess;
	const exited = new Promise((r) => proc.once("exit", r));
	panel.dispose();
	await exited;
});

test("the workspace's last session is resumed when the window opens again", async (t) => {
	const { view, posted } = await start(t);
	view.webview.send({ type: "send", text: "reply: remember me", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	await ext.deactivate();
	// The window reopens: a new activation in the same workspace.
	settings["gopi.resumeLastSession"] = true;
	const context = { extensionUri: vscode.Uri.file(extDir), subscriptions: [], extensionPath: extDir, secrets: vscode.__stub.secrets };
	ext.activate(context);
	t.after(() => context.subscriptions.forEach((d) => d.dispose?.()));
	const view2 = { webview: fakeWebview(), onDidDispose: () => ({ dispose() {} }), description: "" };
	await providers.webviewView.get("gopi.chat").resolveWebviewView(view2);
	await waitFor("the resumed history", (x) => x.type === "history" && x.messages.some((mm) => textOf(mm) === "remember me"), { past: view2.webview.posted });
});

test("a run shows in VS Code's progress UI; its cancel button aborts the run", async (t) => {
	const { view, posted } = await start(t, { model: "faux-1" });
	view.webview.send({ type: "send", text: "stream: 400", images: [], mode: "prompt" });
	const prog = await waitFor("the progress", (c) => c.kind === "withProgress", { event: "call", past: calls });
	assert.equal(prog.options.title, "gopi");
	assert.equal(prog.options.cancellable, true);
	await waitFor("the first delta", isEvent("message_update"), { past: posted });
	prog.cancel();
	const end = await waitFor("the aborted reply", isEvent("message_end", (e) => e.message.role === "assistant"), { past: posted });
	assert.equal(end.event.message.stopReason, "aborted");
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	await waitFor("the progress ended", () => prog.done, { event: "call", past: [null] }).catch(() => {});
});

test("workspace trust: a trusted folder's .pi prompts load; in Restricted Mode they do not", async (t) => {
	const files = { ".pi/prompts/review.md": "Review $ARGUMENTS.\n" };
	const names = async (trusted) => {
		vscode.workspace.isTrusted = trusted;
		try {
			const { posted } = await start(t, { files });
			const cmds = await waitFor("the commands", (m) => m.type === "commands", { past: posted });
			return cmds.items.map((c) => c.name);
		} finally {
			vscode.workspace.isTrusted = true;
			await ext.deactivate();
		}
	};
	assert.ok((await names(true)).includes("review"), "trusted: the project's template is offered");
	assert.ok(!(await names(false)).includes("review"), "restricted: it is not");
});

test("mentions carry content: @file#L with unsaved editor text, @problems, @git; the chat's / actions come first", async (t) => {
	const { view, posted, work } = await start(t, { files: { "main.go": "package main\n\nfunc a() {}\nfunc b() {}\nfunc c() {}\n" } });
	// The editor holds an unsaved change the model must see.
	const doc = {
		uri: vscode.Uri.file(path.join(work, "main.go")),
		isDirty: true,
		getText: () => "package main\n\nfunc a() {}\nfunc B_UNSAVED() {}\nfunc c() {}\n",
	};
	vscode.workspace.textDocuments.push(doc);
	t.after(() => vscode.workspace.textDocuments.splice(vscode.workspace.textDocuments.indexOf(doc), 1));
	const cmds = await waitFor("the / list", (m) => m.type === "commands", { past: posted });
	assert.deepEqual(
		cmds.items.slice(0, 3).map((c) => [c.name, c.source]),
		[
			["compact", "action"],
			["model", "action"],
			["thinking", "action"],
		],
	);
	for (const want of ["new", "fork", "resume", "export", "help"]) assert.ok(cmds.items.some((c) => c.name === want && c.source === "action"), `/${want}`);
	view.webview.send({ type: "send", text: "reply: ok @main.go#L4-5, @problems", images: [], mode: "prompt" });
	const user = await waitFor("the user's message", isEvent("message_start", (e) => e.message.role === "user"), { past: posted });
	const sent = textOf(user.event.message);
	assert.match(sent, /^reply: ok @main\.go#L4-5, @problems\n\n<file path="main\.go" lines="4-5" modified="true">\n```go\nfunc B_UNSAVED\(\) \{\}\nfunc c\(\) \{\}\n```\n<\/file>/);
	assert.match(sent, /<diagnostics count="0">/);
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	// @git in a folder that is not a repository says why, and the message still goes.
	const mark = posted.length;
	view.webview.send({ type: "send", text: "reply: two @git", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted.slice(mark) });
	assert.ok(posted.slice(mark).some((m) => m.type === "notice" && /@git: git diff failed/.test(m.text)));
});

test("/ actions from the chat: stats show in the chat, not an Untitled editor; /help says what there is", async (t) => {
	const { view, posted } = await start(t);
	view.webview.send({ type: "send", text: "reply: hi", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	view.webview.send({ type: "action", name: "stats", args: "" });
	const st = await waitFor("the stats", (m) => m.type === "stats", { past: posted });
	assert.equal(st.stats.userMessages, 1);
	assert.ok(!calls.some((c) => c.kind === "openTextDocument"), "no Untitled editor");
	view.webview.send({ type: "action", name: "help", args: "" });
	const help = await waitFor("the help", (m) => m.type === "notice" && /@selection/.test(m.text), { past: posted });
	assert.match(help.text, /\/compact/);
});

/** The MCP test server of core/mcp (built once, into a directory removed at exit). */
let mcpServer;
async function mcpServerBinary() {
	if (mcpServer) return mcpServer;
	const dir = await mkdtemp(path.join(tmpdir(), "gopi-mcpserver-"));
	process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
	const out = path.join(dir, "mcpserver");
	execFileSync("go", ["build", "-o", out, "./core/mcp/testdata/mcpserver"], { cwd: path.resolve(extDir, "../..") });
	mcpServer = out;
	return out;
}

test("MCP Servers lists the servers, the failed one first with its error; one picked shows its tools; /mcp opens it too", async (t) => {
	const bin = await mcpServerBinary();
	const mcp = { mcpServers: { test: { command: bin, exposure: "direct" }, broken: { command: "gopi-no-such-mcp-server", exposure: "direct" } } };
	const { view, session } = await start(t, { agentFiles: { "mcp.json": JSON.stringify(mcp) } });
	// Until both have settled, the list would show one connecting.
	const deadline = Date.now() + 20_000;
	for (;;) {
		const res = await session.client.request("get_mcp_servers");
		if (res.servers.length === 2 && res.servers.every((x) => x.state !== "connecting")) break;
		assert.ok(Date.now() < deadline, `servers still connecting: ${JSON.stringify(res)}`);
		await new Promise((r) => setTimeout(r, 50));
	}
	const picks = () => calls.filter((c) => c.kind === "showQuickPick");
	answers.showQuickPick = (items) => items.find((i) => i.server?.name === "test");
	await vscode.commands.executeCommand("gopi.mcpServers");
	const [servers, tools] = picks();
	assert.equal(servers.options.title, "gopi: MCP servers");
	assert.deepEqual(
		servers.items.map((i) => [i.label, i.description]),
		[
			["$(error) broken", "failed · direct"],
			["$(pass) test", `connected · direct · ${tools.items.length} tools`],
		],
	);
	assert.match(servers.items[0].detail, /gopi-no-such-mcp-server/);
	assert.equal(servers.items[1].detail, `global · ${bin}`);
	assert.match(tools.options.title, /tools of MCP server "test"/);
	const echo = tools.items.find((i) => i.detail === "mcp__test__echo");
	assert.deepEqual([echo.label, echo.description], ["$(lock) echo", "direct · read-only"]);
	const slow = tools.items.find((i) => i.detail === "mcp__test__slow");
	assert.deepEqual([slow.label, slow.description], ["$(tools) slow", "direct"]);

	// The failed one: its error, whole, and no second list. From the chat's /mcp.
	calls.length = 0;
	answers.showQuickPick = (items) => items.find((i) => i.server?.name === "broken");
	view.webview.send({ type: "action", name: "mcp", args: "" });
	const err = await waitFor("the server's error", (c) => c.kind === "showErrorMessage", { event: "call", past: calls });
	assert.equal(err.message, 'gopi: MCP server "broken" failed to connect');
	assert.equal(err.options.modal, true);
	assert.match(err.options.detail, /gopi-no-such-mcp-server/);
	assert.equal(picks().length, 1);
});

test("MCP Servers follows gopi's mcp_server_state without asking again; a failed server is a warning whose button opens the list", async (t) => {
	const bin = await mcpServerBinary();
	// "late" connects once the test says so: the list is open meanwhile.
	const gate = path.join(await mkdtemp(path.join(tmpdir(), "gopi-mcp-gate-")), "go");
	t.after(() => rm(path.dirname(gate), { recursive: true, force: true }));
	const late = { command: "sh", args: ["-c", `while [ ! -e '${gate}' ]; do sleep 0.05; done; exec '${bin}'`], exposure: "deferred" };
	const mcp = { mcpServers: { late, broken: { command: "gopi-no-such-mcp-server", exposure: "direct" } } };
	const { session } = await start(t, { agentFiles: { "mcp.json": JSON.stringify(mcp) } });
	// The failure is a warning, not a modal dialog, with a way to the list.
	const warning = await waitFor("the warning", (c) => c.kind === "showWarningMessage" && /MCP server "broken"/.test(c.message), { event: "call", past: calls });
	assert.match(warning.message, /^gopi: MCP server "broken" failed: connecting: .*gopi-no-such-mcp-server/);
	assert.doesNotMatch(warning.message, /\n/, "one line");
	assert.deepEqual(warning.items, ["Show MCP Servers"]);
	assert.ok(!warning.options?.modal);
	const failed = session.events.find((e) => e.type === "mcp_server_state" && e.server.name === "broken");
	assert.equal(failed?.server.state, "failed", "gopi's event brought it");

	// The list is asked for once; it changes as gopi reports.
	const asked = [];
	const request = session.client.request.bind(session.client);
	session.client.request = (command, params) => {
		asked.push(command);
		return request(command, params);
	};
	t.after(() => delete session.client.request);
	let seen;
	answers.showQuickPick = async (items, o) => {
		if (o.title !== "gopi: MCP servers") return undefined;
		const qp = calls.findLast((c) => c.kind === "showQuickPick").quickPick;
		seen = { items: items.map((i) => i.description), busy: qp.busy };
		await writeFile(gate, "");
		const deadline = Date.now() + 20_000;
		while (!qp.items.some((i) => i.server.name === "late" && i.server.state === "connected")) {
			assert.ok(Date.now() < deadline, `the list did not follow: ${JSON.stringify(qp.items.map((i) => i.description))}`);
			await new Promise((r) => setTimeout(r, 20));
		}
		seen.after = { items: qp.items.map((i) => [i.label, i.description]), busy: qp.busy };
		return undefined;
	};
	await vscode.commands.executeCommand("gopi.mcpServers");
	assert.deepEqual(seen.items, ["failed · direct", "connecting · deferred"]);
	assert.equal(seen.busy, true, "busy while one connects");
	assert.equal(seen.after.busy, false);
	assert.deepEqual(seen.after.items[0], ["$(error) broken", "failed · direct"]);
	assert.match(seen.after.items[1][0], /late/);
	assert.match(seen.after.items[1][1], /^connected · deferred · \d+ tools$/);
	assert.deepEqual(asked, ["get_mcp_servers"], "asked once, then told");

	// gopi restarted: its servers start over, and a failure warns again;
	// the warning's button opens this session's list.
	calls.length = 0;
	answers.showWarningMessage = (msg, items) => items[0];
	answers.showQuickPick = () => undefined;
	await session.restart();
	await waitFor("the warning again", (c) => c.kind === "showWarningMessage" && /MCP server "broken"/.test(c.message), { event: "call", past: calls });
	const list = await waitFor("the list it opens", (c) => c.kind === "showQuickPick", { event: "call", past: calls });
	assert.equal(list.options.title, "gopi: MCP servers");
});

test("MCP Servers without servers says where they come from", async (t) => {
	await start(t);
	await vscode.commands.executeCommand("gopi.mcpServers");
	const info = calls.find((c) => c.kind === "showInformationMessage");
	assert.match(info.message, /no MCP servers.*mcp\.json/);
	assert.ok(!calls.some((c) => c.kind === "showQuickPick"));
});

test("settings: the model applies live; gopi.env, args, approval or path offer a restart that keeps the conversation", async (t) => {
	const { view, posted, session } = await start(t);
	view.webview.send({ type: "send", text: "reply: remember me", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	// changeSettings resolves once the extension has applied the change.
	settings["gopi.model"] = "faux-1";
	await vscode.__stub.changeSettings("gopi.model");
	assert.equal((await session.client.request("get_state")).model.id, "faux-1", "the model changed without a restart");
	// A bare id with no gopi.provider is found among gopi's models, as --model finds it at start.
	settings["gopi.provider"] = "";
	settings["gopi.model"] = "faux-fast";
	await vscode.__stub.changeSettings("gopi.model");
	assert.equal((await session.client.request("get_state")).model.id, "faux-fast", "a bare model id applied live");
	assert.ok(!calls.some((c) => c.kind === "showErrorMessage" && /model setting/.test(c.message)), "no error for a bare id");
	settings["gopi.model"] = "no-such-model";
	await vscode.__stub.changeSettings("gopi.model");
	assert.ok(calls.some((c) => c.kind === "showErrorMessage" && /no available model is named no-such-model/.test(c.message)), "an unknown id is named in an error");
	settings["gopi.provider"] = "faux";
	answers.showInformationMessage = (msg, items) => (/gopi\.env changed/.test(msg) ? "Restart gopi" : undefined);
	settings["gopi.env"] = { ...settings["gopi.env"], GOPI_TEST_MARK: "1" };
	const mark = posted.length;
	await vscode.__stub.changeSettings("gopi.env");
	const asked = calls.find((c) => c.kind === "showInformationMessage" && /gopi\.env changed/.test(c.message));
	assert.ok(asked, "the restart was offered");
	const reset = posted.findIndex((m, i) => i >= mark && m.type === "reset");
	assert.ok(reset >= 0, "gopi restarted");
	assert.ok(
		posted.slice(reset).some((m) => m.type === "history" && m.messages.some((x) => textOf(x) === "reply: remember me")),
		"the restarted gopi goes on with the conversation",
	);
	assert.doesNotMatch(vscode.__stub.outputLines.join("\n"), /\[Error[^\]]*\] Server process exited with code 0/, "a restart is not logged as an error");

	// Approval decides whether gopi asks: a change restarts gopi by itself, and the next write asks.
	settings["gopi.approval"] = "writes";
	const cards = answerCards(view, posted, ["Deny"]);
	t.after(cards.stop);
	settings["gopi.approval"] = "off";
	await vscode.__stub.changeSettings("gopi.approval");
	settings["gopi.approval"] = "writes";
	await vscode.__stub.changeSettings("gopi.approval");
	assert.ok(calls.some((c) => c.kind === "setStatusBarMessage" && /approval is writes now/.test(c.text)), "the restart said so");
	const mark2 = posted.length;
	view.webview.send({ type: "send", text: "write: asked.txt :: only if accepted", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted.slice(mark2) });
	assert.equal(cards.asked.length, 1, "the write asked");
});

test("sandbox: gopi.sandbox reaches gopi as --sandbox, the status bar shows what gopi reports, and a change restarts gopi", async (t) => {
	const { view, posted, session, work, root } = await start(t, { approval: "off", extra: { "gopi.sandbox": "read-only" } });
	const args = gopiArgs(session);
	assert.equal(args[args.indexOf("--sandbox") + 1], "read-only", `gopi ran as: ${args.join(" ")}`);
	const item = sandboxItem();
	assert.equal(item.visible, true);
	assert.equal(item.text, "$(shield) read-only");
	assert.match(item.tooltip, /read-only/);
	assert.match(item.tooltip, /write only in their own temporary folder/);
	assert.match(item.tooltip, /Network: off/);
	assert.match(item.tooltip, /landlock-fs/);
	assert.equal(item.backgroundColor, undefined, "an enforced sandbox does not warn");
	assert.equal(item.command, "gopi.sandboxSettings");
	await vscode.commands.executeCommand(item.command);
	assert.ok(
		calls.some((c) => c.kind === "executeCommand" && c.id === "workbench.action.openSettings" && c.args[0] === "gopi.sandbox"),
		"a click opens the setting",
	);

	// A model's command that writes in the project is stopped.
	view.webview.send({ type: "send", text: "bash: echo x > stopped.txt", images: [], mode: "prompt" });
	const end = await waitFor("the command's result", isEvent("tool_execution_end"), { past: posted });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	assert.equal(existsSync(path.join(work, "stopped.txt")), false, "read-only: the command wrote in the project");
	assert.equal(end.event.isError, true);
	assert.match(textOf(end.event.result), /sandbox/, "the model reads that the sandbox stopped it");

	// The setting changes: gopi restarts by itself, and the mark follows gopi.
	settings["gopi.sandbox"] = "off";
	await vscode.__stub.changeSettings("gopi.sandbox");
	assert.ok(calls.some((c) => c.kind === "setStatusBarMessage" && /the sandbox is off now/.test(c.text)), "the restart said so");
	assert.deepEqual(gopiArgs(session).slice(gopiArgs(session).indexOf("--sandbox"), gopiArgs(session).indexOf("--sandbox") + 2), ["--sandbox", "off"]);
	assert.equal((await session.client.request("get_state")).sandbox, undefined);
	assert.equal(sandboxItem().text, "$(unlock) no sandbox");
	assert.match(sandboxItem().tooltip, /no sandbox/);

	// "default": no --sandbox; the mark is whatever gopi decided.
	settings["gopi.sandbox"] = "default";
	await vscode.__stub.changeSettings("gopi.sandbox");
	assert.equal(gopiArgs(session).includes("--sandbox"), false, `gopi ran as: ${gopiArgs(session).join(" ")}`);
	const sb = (await session.client.request("get_state")).sandbox;
	assert.equal(sandboxItem().text, sb ? `$(shield) ${sb.mode}` : "$(unlock) no sandbox");

	// A value that is none of the modes stops the start, saying why, rather than run unconfined.
	settings["gopi.sandbox"] = "none";
	await vscode.commands.executeCommand("gopi.restart");
	const n = await waitFor("the error notice", (x) => x.type === "notice" && /gopi\.sandbox/.test(x.text), { past: view.webview.posted });
	assert.match(n.text, /"none".*default, off, read-only, workspace-write/);
	assert.equal(session.client.running, false);
	assert.equal(sandboxItem().visible, false, "no gopi: no mark");
	assert.ok(root);
});

test("sandbox: a mode gopi cannot enforce here shows as an error in the status bar (every command is refused)", async (t) => {
	// gopi's test hook: it believes the kernel has no Landlock, and refuses the model's commands.
	const { session } = await start(t, { approval: "off", env: { GOPI_SANDBOX_TEST_LANDLOCK_ABI: "0" }, extra: { "gopi.sandbox": "workspace-write" } });
	const sb = (await session.client.request("get_state")).sandbox;
	assert.ok(sb?.problem, "gopi reports the problem");
	const item = sandboxItem();
	assert.equal(item.text, "$(warning) workspace-write: not enforced");
	assert.equal(item.backgroundColor?.id, "statusBarItem.errorBackground");
	assert.ok(item.tooltip.includes(sb.problem), `the tooltip says why: ${item.tooltip}`);
	assert.match(item.tooltip, /refuses every command/);
	const doctor = await vscode.commands.executeCommand("gopi.doctor");
	assert.match(doctor, /- sandbox: workspace-write, NOT ENFORCED, the model's commands are refused: .*no Landlock.* \(gopi.sandbox: `workspace-write`\)/);
});

test("sandbox: the escape question asks on the card with Allow once and Deny; Deny keeps the command in, Ctrl+Alt+Y lets it out once", async (t) => {
	const { view, posted, root } = await start(t, { extra: { "gopi.sandbox": "workspace-write" } });
	const outside = path.join(root, "outside.txt");
	// The bash question first (Accept), then the escape question (Deny).
	const cards = answerCards(view, posted, ["Allow", "Deny"]);
	t.after(cards.stop);
	view.webview.send({ type: "send", text: "bash: echo out > ../outside.txt", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	assert.equal(cards.asked.length, 2, `two questions: ${cards.asked.map((q) => q.title).join(" | ")}`);
	const q = cards.asked[1];
	assert.equal(q.escape, true);
	assert.match(q.title, /^gopi's sandbox stopped bash: echo out > \.\.\/outside\.txt\nRun it once outside the sandbox\?$/);
	assert.deepEqual(
		q.options.map((o) => [o.answer, o.label]),
		[
			["Allow once", "Allow once"],
			["Deny", "Deny"],
		],
	);
	assert.equal(q.toolCallId, cards.asked[0].toolCallId, "on the command's own card");
	assert.ok(approvalItem().texts.some((x) => x.includes("gopi's sandbox stopped bash")), "the status bar showed the question");
	assert.equal(posted.find((m) => m.type === "approvalDone" && m.id === q.id).outcome, "rejected");
	assert.equal(existsSync(outside), false, "Deny: the command stayed in the sandbox");

	// The Accept command (Ctrl+Alt+Y) answers the escape question with Allow once.
	const mark = posted.length;
	cards.stop();
	const first = answerCards(view, posted, ["Allow"]);
	t.after(first.stop);
	view.webview.send({ type: "send", text: "bash: echo out > ../outside.txt", images: [], mode: "prompt" });
	const esc = await waitFor("the escape question", (m) => m.type === "approval" && m.escape === true, { past: posted.slice(mark) });
	assert.match(approvalItem().tooltip, /Click to answer: Allow once, Deny\./);
	await vscode.commands.executeCommand("gopi.approval.accept");
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted.slice(mark) });
	assert.equal(posted.find((m) => m.type === "approvalDone" && m.id === esc.id).outcome, "accepted");
	assert.equal(await readFile(outside, "utf8"), "out\n", "Allow once: the command ran outside the sandbox");
	assert.ok(!calls.some((c) => c.kind === "showInformationMessage" && /no question is waiting|does not offer/.test(c.message)));
});

test("a message sent while gopi restarts waits for the new gopi and runs there", async (t) => {
	const { view, posted, session } = await start(t);
	const restarted = session.restart();
	view.webview.send({ type: "send", text: "reply: sent during the restart", images: [], mode: "prompt" });
	const got = await waitFor("the reply, or an error", (m) => isEvent("agent_settled")(m) || (m.type === "notice" && m.level === "error"), { past: posted });
	assert.equal(got.type, "event", `the message was lost: ${got.text}`);
	await restarted;
	const reset = posted.findIndex((m) => m.type === "reset");
	assert.ok(reset >= 0 && reset < posted.indexOf(got), "it ran in the new gopi");
	const { messages } = await session.client.request("get_messages");
	assert.ok(messages.some((m) => textOf(m) === "reply: sent during the restart"), "and is in the conversation");
});

test("a chat closed while gopi restarts stops the gopi the restart starts", async (t) => {
	const { session } = await start(t);
	const restarted = session.restart();
	session.dispose();
	await restarted;
	// Closed before the restart got to it: the old gopi stopped at once,
	// and the one the restart started goes too.
	const proc = session.client.lc?._serverProcess;
	if (proc && proc.exitCode === null && proc.signalCode === null) {
		let timer;
		const deadline = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("the restarted gopi is still running")), WAIT_MS)));
		await Promise.race([new Promise((r) => proc.once("exit", r)), deadline]).finally(() => clearTimeout(timer));
	}
});

test("New Session starts fresh in the same gopi, on the model gopi's rule gives a new session (as pi 1.6.0)", async (t) => {
	const { session, posted } = await start(t);
	answers.showQuickPick = (items) => items.find((i) => i.model?.id === "faux-1");
	await vscode.commands.executeCommand("gopi.switchModel");
	const picked = calls.findLast((c) => c.kind === "showQuickPick");
	assert.ok(picked.active?.[0]?.current, "the picker put the current model first in focus");
	assert.match(picked.active[0].description, /current/);
	assert.equal((await session.client.request("get_state")).model.id, "faux-1");
	const s2 = await vscode.commands.executeCommand("gopi.newSession");
	assert.equal(s2, session, "the same gopi");
	// pi 1.6.0's new_session goes back to the start-up model (gopi.model here);
	// a switch lasts for its session. The status bar follows.
	assert.equal((await session.client.request("get_state")).model.id, "faux-fast");
	await waitFor("the status bar", () => /faux-fast/.test(statusItem().text), { event: "status", past: [0] });
	assert.doesNotMatch(vscode.__stub.outputLines.join("\n"), /Server process exited with code/, "no process exited");
	const w = await waitFor("the welcome", (m) => m.type === "welcome", { past: posted });
	assert.equal(w.welcome.offline, true);
	assert.deepEqual(w.welcome.providers, ["faux"]);
});

test("Export asks where, writes there, opens the page in VS Code and says where it went", async (t) => {
	const { view, posted, root } = await start(t);
	view.webview.send({ type: "send", text: "reply: exported words", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	const out = path.join(root, "out", "chat.html");
	await mkdir(path.dirname(out), { recursive: true });
	answers.showSaveDialog = (o) => {
		assert.match(o.defaultUri.fsPath, /\.html$/);
		assert.doesNotMatch(o.defaultUri.fsPath, new RegExp(`^${path.join(root, "work")}`), "not the workspace root");
		return vscode.Uri.file(out);
	};
	answers.showInformationMessage = () => undefined;
	await vscode.commands.executeCommand("gopi.export");
	assert.match(await readFile(out, "utf8"), /exported words/);
	const panel = calls.find((c) => c.kind === "createWebviewPanel" && c.panel.viewType === "gopi.export");
	assert.ok(panel, "the page opened in VS Code");
	assert.equal(panel.panel.options.enableScripts, false);
	assert.ok(calls.some((c) => c.kind === "showInformationMessage" && c.message.includes(out)), "and said where it went");
});

test("an API key goes to SecretStorage and into gopi's environment, never into settings", async (t) => {
	const { session } = await start(t);
	const before = await session.client.request("get_available_models");
	assert.ok(!before.models.some((m) => m.provider === "anthropic"));
	answers.showQuickPick = (items) => items.find((i) => i.label === "Anthropic");
	answers.showInputBox = (o) => (o.password ? "sk-ant-test-key" : undefined);
	answers.showInformationMessage = () => undefined;
	const saved = JSON.stringify(settings);
	// gopi.env in the tests blanks the key; the stored one must win over nothing only when the setting is absent.
	delete settings["gopi.env"].ANTHROPIC_API_KEY;
	await vscode.commands.executeCommand("gopi.setApiKey");
	assert.equal(vscode.__stub.secrets.map.get("gopi.apiKey.ANTHROPIC_API_KEY"), "sk-ant-test-key");
	assert.equal(JSON.stringify(settings), saved.replace(',"ANTHROPIC_API_KEY":""', ""), "no setting was written");
	const after = await session.client.request("get_available_models");
	assert.ok(after.models.some((m) => m.provider === "anthropic"), "gopi restarted with the key");
	vscode.__stub.secrets.map.clear();
});

test("Cycle Thinking on a model without levels says so", async (t) => {
	await start(t, { model: "faux-fast" });
	const levels = await (await vscode.commands.executeCommand("gopi.newSession")).client.request("get_available_thinking_levels");
	if (levels.levels.length > 1) t.skip("faux-fast has thinking levels");
	await vscode.commands.executeCommand("gopi.cycleThinking");
	assert.ok(calls.some((c) => c.kind === "showInformationMessage" && /no thinking levels/.test(c.message)));
});

test("@selection carries the active editor's selection; @git carries git diff HEAD", async (t) => {
	const { view, posted, work } = await start(t, { files: { "lib.go": "package lib\n\nfunc One() {}\nfunc Two() {}\n" } });
	const git = (...a) => require("node:child_process").execFileSync("git", a, { cwd: work, env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" } });
	git("init", "-q");
	git("add", "lib.go");
	git("commit", "-qm", "lib");
	await writeFile(path.join(work, "lib.go"), "package lib\n\nfunc One() {}\nfunc Two() { changed() }\n");
	const lines = ["package lib", "", "func One() {}", "func Two() {}"];
	const doc = {
		uri: vscode.Uri.file(path.join(work, "lib.go")),
		languageId: "go",
		getText: (r) => lines.slice(r.start.line, r.end.line + 1).join("\n"),
		lineAt: (i) => ({ text: lines[i] }),
	};
	vscode.window.activeTextEditor = {
		document: doc,
		selection: { isEmpty: false, start: { line: 2, character: 0 }, end: { line: 3, character: 5 } },
	};
	t.after(() => (vscode.window.activeTextEditor = undefined));
	view.webview.send({ type: "send", text: "reply: look @selection and @git", images: [], mode: "prompt" });
	const user = await waitFor("the user's message", isEvent("message_start", (e) => e.message.role === "user"), { past: posted });
	const sent = textOf(user.event.message);
	assert.match(sent, /<selection path="lib\.go" lines="3-4">\n```go\nfunc One\(\) \{\}\nfunc Two\(\) \{\}\n```\n<\/selection>/);
	assert.match(sent, /<diff files="1">\n```diff\n[\s\S]*\+func Two\(\) \{ changed\(\) \}[\s\S]*```\n<\/diff>/);
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
});

test("checkpointText takes a unified diff back: several hunks, a last line without a newline, a deleted and an added file; a file that moved on is refused", () => {
	const before = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm";
	const now = "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n";
	const diff = [
		"--- a/x.txt",
		"+++ b/x.txt",
		"@@ -1,3 +1,3 @@",
		" a",
		"-b",
		"+B",
		" c",
		"@@ -11,3 +11,4 @@",
		" k",
		" l",
		"-m",
		"\\ No newline at end of file",
		"+m",
		"+n",
		"",
	].join("\n");
	assert.equal(ext.checkpointText(now, diff), before);
	assert.equal(ext.checkpointText("", "--- a/d\n+++ b/d\n@@ -1,2 +0,0 @@\n-x\n-y\n"), "x\ny\n", "a deleted file comes back whole");
	assert.equal(ext.checkpointText("x\n", "--- a/n\n+++ b/n\n@@ -0,0 +1 @@\n+x\n"), "", "an added file had nothing");
	assert.equal(ext.checkpointText(now.replace("B", "Z"), diff), undefined, "a line the diff does not know");
});

test("Rewind: the checkpoint before a prompt, its changes in the diff editor, a modal confirm, the restore, the message back in the composer; Undo Rewind puts the files back", async (t) => {
	const { view, posted, work } = await start(t, { approval: "off", files: { "a.txt": "one\ntwo\nthree" } });
	const git = (...a) => execFileSync("git", a, { cwd: work, env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" } });
	git("init", "-q");
	git("add", "a.txt");
	git("commit", "-qm", "a");
	const prompt = "tools: write: a.txt :: one\nTWO\nthree\n; write: b.txt :: new";
	view.webview.send({ type: "send", text: prompt, images: [], mode: "prompt" });
	await waitFor("the prompt's checkpoint", isEvent("checkpoint_created"), { past: posted });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	const a = path.join(work, "a.txt");
	const b = path.join(work, "b.txt");
	assert.equal(await readFile(a, "utf8"), "one\nTWO\nthree\n");
	assert.ok(existsSync(b));

	const asked = [];
	answers.showQuickPick = (items, opts) => {
		asked.push({ title: opts?.title, items: items.map((i) => `${i.label} | ${i.description ?? ""}`) });
		return /checkpoint/.test(opts?.title) ? items[0] : items.find((i) => i.what === "both");
	};
	let confirm;
	answers.showWarningMessage = (msg, items, opts) => {
		confirm = { msg, items, opts };
		return "Rewind";
	};
	await vscode.commands.executeCommand("gopi.rewind");
	assert.match(asked[0].title, /newest first/);
	assert.match(asked[0].items[0], /^tools: write: a\.txt/, "the row names the message the checkpoint precedes");
	assert.match(asked[1].title, /rewind to before “tools: write: a\.txt/);
	// The changes opened before the question: each file as the checkpoint had it against now.
	const changes = calls.find((c) => c.kind === "executeCommand" && c.id === "vscode.changes");
	assert.ok(changes, "the multi-file diff editor opened");
	const entries = changes.args[1];
	const provider = providers.textDocumentContent.get("gopi-checkpoint");
	const byName = Object.fromEntries(entries.map(([res, left, right]) => [path.basename(res.fsPath), { left: provider.provideTextDocumentContent(left), right }]));
	assert.equal(byName["a.txt"].left, "one\ntwo\nthree", "a.txt as the checkpoint has it, byte for byte");
	assert.equal(byName["a.txt"].right.fsPath, a);
	assert.equal(byName["b.txt"].left, "", "b.txt did not exist");
	assert.ok(calls.indexOf(changes) < calls.findIndex((c) => c.kind === "showWarningMessage"), "the diff shows before the question");
	assert.equal(confirm.opts.modal, true);
	assert.match(confirm.opts.detail, /2 files go back/);
	assert.match(confirm.opts.detail, /b\.txt \(added since: removed\)/);

	// Restored: the files, the chat (history again) and the message in the composer.
	assert.equal(await readFile(a, "utf8"), "one\ntwo\nthree");
	assert.ok(!existsSync(b), "the file added since is gone");
	await waitFor("the message back in the composer", (m) => m.type === "insert" && m.replace && m.text === prompt, { past: posted });
	const reset = posted.findLastIndex((m) => m.type === "reset");
	assert.ok(reset >= 0 && posted.slice(reset).some((m) => m.type === "history" && !m.messages.some((x) => x.role === "user")), "the chat shows the rewound conversation");
	await waitFor("Undo enabled", (c) => c.kind === "executeCommand" && c.id === "setContext" && c.args[0] === "gopi.canUndoRewind" && c.args[1] === true, { event: "call", past: calls });
	const note = calls.find((c) => c.kind === "showInformationMessage" && /restored/.test(c.message));
	assert.deepEqual(note.items, ["Undo Rewind"]);

	await vscode.commands.executeCommand("gopi.undoRewind");
	assert.equal(await readFile(a, "utf8"), "one\nTWO\nthree\n", "Undo Rewind brings the change back");
	assert.equal(await readFile(b, "utf8"), "new");
	assert.ok(calls.some((c) => c.kind === "executeCommand" && c.id === "setContext" && c.args[0] === "gopi.canUndoRewind" && c.args[1] === false), "and is disabled again");
});

test("Rewind to here from the chat: that message's checkpoint, code only; an unsaved editor of a restored file is named in the question", async (t) => {
	const { view, posted, work } = await start(t, { approval: "off", files: { "a.txt": "v0\n" } });
	execFileSync("git", ["init", "-q"], { cwd: work });
	view.webview.send({ type: "send", text: "write: a.txt :: v1\n", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	const mark = posted.length;
	view.webview.send({ type: "send", text: "write: a.txt :: v2\n", images: [], mode: "prompt" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted.slice(mark) });
	const users = posted.filter(isEvent("message_start", (e) => e.message.role === "user"));
	assert.equal(users.length, 2);
	const a = path.join(work, "a.txt");
	const dirty = { uri: vscode.Uri.file(a), isDirty: true, getText: () => "typing" };
	vscode.workspace.textDocuments.push(dirty);
	t.after(() => vscode.workspace.textDocuments.splice(vscode.workspace.textDocuments.indexOf(dirty), 1));
	answers.showQuickPick = (items) => items.find((i) => i.what === "code");
	let confirm;
	answers.showWarningMessage = (msg, items, opts) => {
		confirm = opts.detail;
		return "Rewind";
	};
	calls.length = 0;
	// The second message's Rewind to here: a.txt goes back to v1, the chat stays.
	view.webview.send({ type: "rewind", timestamp: users[1].event.message.timestamp });
	await waitFor("the restore", (c) => c.kind === "showInformationMessage" && /restored/.test(c.message), { event: "call", past: calls });
	assert.equal(await readFile(a, "utf8"), "v1\n");
	assert.match(confirm, /Unsaved changes in a\.txt stay in their editors/);
	assert.doesNotMatch(confirm, /conversation/);
	assert.ok(!calls.some((c) => c.kind === "executeCommand" && c.id === "gopi.undoRewind"));
	assert.equal(posted.slice(mark).filter((m) => m.type === "reset").length, 0, "a code-only rewind leaves the chat as it is");
});
