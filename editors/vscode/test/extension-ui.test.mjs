// The extension UI of pi extensions, end to end: the real extension bundle
// (under Node, with the stubbed `vscode` module) starts the real gopi
// binary with pi's example extensions loaded (`gopi.args: ["-e", file]`,
// the runtime given in `gopi.env`, as a user would), and the test checks
// what reaches VS Code: the title, the widgets, the status bar items, the
// composer's text, the input box, the editor dialog, select and confirm,
// and the notifications that tell whether an answer got back to the
// extension. The last test replays what the extension posted into the
// real chat page in Chromium.
//
// It needs pi's extension runtime and examples (else every test skips):
//
//   eval "$(testdata/pi/ext-env.sh)"   # GOPI_NODE, GOPI_PI_PACKAGE, GOPI_PI_EXAMPLES
//   GOPI_BIN=/path/to/gopi node --test test/extension-ui.test.mjs
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { findChromium, isEvent, loadExtension, vscode, waitFor } from "./harness.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const extDir = path.resolve(here, "..");
const require = createRequire(import.meta.url);
const gopiBin = path.resolve(process.env.GOPI_BIN ?? path.join(extDir, "../../bin/gopi"));

const examples = process.env.GOPI_PI_EXAMPLES ?? "";
const runtime = { GOPI_NODE: process.env.GOPI_NODE ?? "", GOPI_PI_PACKAGE: process.env.GOPI_PI_PACKAGE ?? "" };
const unset = ["GOPI_NODE", "GOPI_PI_PACKAGE", "GOPI_PI_EXAMPLES"].filter((k) => !process.env[k]);
const skip = unset.length
	? `pi's extension runtime is not set up (${unset.join(", ")} unset; eval "$(testdata/pi/ext-env.sh)" sets them)`
	: !existsSync(path.join(examples, "rpc-demo.ts"))
		? `GOPI_PI_EXAMPLES (${examples}) holds no rpc-demo.ts`
		: false;
// gopi gets the runtime only from the gopi.env setting, not by inheritance.
delete process.env.GOPI_NODE;
delete process.env.GOPI_PI_PACKAGE;

if (!skip) {
	if (!existsSync(gopiBin)) throw new Error(`gopi binary not found at ${gopiBin}; run make build or set GOPI_BIN`);
	if (!existsSync(path.join(extDir, "dist/extension.js"))) throw new Error("dist/extension.js is missing; run node esbuild.mjs");
}

const ext = skip ? undefined : loadExtension();
const { calls, answers, settings, providers, bus, fakeWebview, statusItems } = vscode.__stub;

/** A call the extension made of VS Code (a dialog, a document, a command). */
const called = (what, pred) => waitFor(what, pred, { event: "call", past: calls });

/**
 * A notification (ctx.ui.notify) as VS Code shows it: window/showMessage
 * becomes a message without buttons, info 3, warning 2, error 1.
 */
const notified = (text, kind = "showInformationMessage") =>
	called(`the notification "${text}"`, (c) => c.kind === kind && c.message === text && c.items.length === 0);

/** The live status bar item an extension's key made (gopi.ext.<key>). */
const extStatus = (key) => statusItems.filter((i) => i.id === `gopi.ext.${key}` && !i.disposed).at(-1);

/** Resolves when the extension's status item for key shows text. */
const statusShows = (key, text) =>
	waitFor(`status ${key} = "${text}"`, (i) => i.id === `gopi.ext.${key}` && !i.disposed && i.visible && i.text === text, {
		event: "status",
		past: statusItems,
	}).catch((err) => {
		const seen = statusItems.filter((i) => i.id === `gopi.ext.${key}`).map((i) => i.texts);
		throw new Error(`${err.message}; it showed ${JSON.stringify(seen)}`);
	});

/**
 * Activates the extension in a fresh workspace, with gopi started with
 * the given pi example extensions, and (unless openView is false) opens
 * the side bar's chat. The test's cleanup deactivates and removes the
 * directories.
 */
async function start(t, { extensions = ["rpc-demo.ts"], approval = "off", openView = true } = {}) {
	const root = await realpath(await mkdtemp(path.join(tmpdir(), "gopi-vscode-ui-")));
	const work = path.join(root, "work");
	const agentDir = path.join(root, "agent");
	await mkdir(work, { recursive: true });
	await mkdir(agentDir, { recursive: true });
	for (const k of Object.keys(settings)) delete settings[k];
	Object.assign(settings, {
		"gopi.path": gopiBin,
		"gopi.args": extensions.flatMap((e) => ["-e", path.isAbsolute(e) ? e : path.join(examples, e)]),
		"gopi.env": {
			...runtime,
			PI_CODING_AGENT_DIR: agentDir,
			ANTHROPIC_API_KEY: "",
			OPENAI_API_KEY: "",
			GEMINI_API_KEY: "",
			GOOGLE_API_KEY: "",
		},
		"gopi.provider": "faux",
		"gopi.model": "faux-fast",
		"gopi.approval": approval,
		"gopi.resumeLastSession": false,
	});
	for (const k of Object.keys(answers)) answers[k] = undefined;
	calls.length = 0;
	vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(work), name: "work", index: 0 }];
	const context = { extensionUri: vscode.Uri.file(extDir), subscriptions: [], extensionPath: extDir, secrets: vscode.__stub.secrets };
	const m = ext.activate(context);
	t.after(async () => {
		await ext.deactivate();
		for (const d of context.subscriptions) d.dispose?.();
		await new Promise((r) => setTimeout(r, 100));
		await rm(root, { recursive: true, force: true });
	});
	const view = { webview: fakeWebview(), onDidDispose: () => ({ dispose() {} }), description: "" };
	const openSidebar = () => providers.webviewView.get("gopi.chat").resolveWebviewView(view);
	if (openView) await openSidebar();
	const session = await m.sidebarCurrent();
	assert.ok(session.client.running, `gopi did not start; log:\n${vscode.__stub.outputLines.join("")}`);
	return { m, view, session, work, openSidebar, posted: view.webview.posted };
}

/** Sends text from the chat's composer, as Enter does. */
const send = (view, text) => view.webview.send({ type: "send", text, images: [], mode: "prompt" });

test("rpc-demo's title, widget and status: the view's title, the chat's widget area and a status bar item that follows the turns", { skip }, async (t) => {
	const { view, posted } = await start(t);
	const title = await waitFor("the title", (m) => m.type === "title", { past: posted });
	assert.equal(title.title, "pi RPC Demo");
	assert.equal(view.description, "pi RPC Demo", "the side bar view's title");
	const widget = await waitFor("the widget", (m) => m.type === "widget", { past: posted });
	assert.deepEqual(widget, { type: "widget", key: "rpc-demo", lines: ["--- RPC Extension UI Demo ---", "Loaded and ready."], placement: undefined });
	const item = await statusShows("rpc-demo", "Turns: 0");
	assert.equal(item.alignment, vscode.StatusBarAlignment.Left);
	assert.equal(item.name, "gopi: rpc-demo");

	// A reply is one turn; a tool call and the answer to its result are two.
	// (Each prompt after the run settled: one sent sooner would be a steer.)
	send(view, "reply: hello");
	await statusShows("rpc-demo", "Turn 1 done");
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	const mark = posted.length;
	send(view, "bash: echo hi");
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted.slice(mark) });
	await statusShows("rpc-demo", "Turn 3 done");
	assert.deepEqual(item.texts, ["Turns: 0", "Turn 1 running...", "Turn 1 done", "Turn 2 running...", "Turn 2 done", "Turn 3 running...", "Turn 3 done"]);
	assert.equal(extStatus("rpc-demo"), item, "one item per key, updated in place");

	// The item goes with its session.
	await ext.deactivate();
	assert.equal(item.disposed, true);
});

test("a title set before the side bar was opened still becomes the view's title", { skip }, async (t) => {
	// A command started the side bar's session before its view was shown.
	const { view, openSidebar } = await start(t, { openView: false });
	await statusShows("rpc-demo", "Turns: 0"); // set after the title, by the same handler
	await openSidebar();
	assert.equal(view.description, "pi RPC Demo");
	const posted = view.webview.posted;
	await waitFor("the title in the page", (m) => m.type === "title" && m.title === "pi RPC Demo", { past: posted });
	await waitFor("the widget in the page", (m) => m.type === "widget" && m.key === "rpc-demo", { past: posted });
});

test("an editor tab takes rpc-demo's title; closing the tab removes its status item", { skip }, async (t) => {
	await start(t);
	const sidebarItem = await statusShows("rpc-demo", "Turns: 0");
	const tab = await vscode.commands.executeCommand("gopi.openInTab");
	assert.ok(tab.client.running);
	const panel = calls.find((c) => c.kind === "createWebviewPanel").panel;
	await waitFor("the tab's title", (m) => m.type === "title" && m.title === "pi RPC Demo", { past: panel.webview.posted });
	assert.equal(panel.title, "gopi: pi RPC Demo");
	// Each session has its own item.
	const tabItem = await waitFor("the tab's status item", (i) => i.id === "gopi.ext.rpc-demo" && i !== sidebarItem && i.text === "Turns: 0", {
		event: "status",
		past: statusItems,
	});
	const proc = tab.client.lc._serverProcess;
	const exited = new Promise((r) => proc.once("exit", r));
	panel.dispose();
	await exited;
	assert.equal(tabItem.disposed, true);
	assert.equal(sidebarItem.disposed, false);
});

test("/rpc-input: the input box's answer reaches the extension; a dismissed box is a cancel", { skip }, async (t) => {
	const { view } = await start(t);
	answers.showInputBox = () => "42";
	send(view, "/rpc-input");
	await notified("You entered: 42");
	const box = calls.find((c) => c.kind === "showInputBox");
	assert.deepEqual(box.options, { title: "Enter a value", placeHolder: "type something...", ignoreFocusOut: true });

	calls.length = 0;
	answers.showInputBox = undefined; // Escape
	send(view, "/rpc-input");
	await notified("Input cancelled");
	assert.equal(calls.filter((c) => c.kind === "showInputBox").length, 1);
});

test("/rpc-editor: the text opens in an editor; Done sends the edited text back, Cancel cancels", { skip }, async (t) => {
	const { view } = await start(t);
	let prefill;
	answers.showInformationMessage = (msg, items) => {
		if (!items.includes("Done")) return undefined; // a notification
		const doc = calls.findLast((c) => c.kind === "openTextDocument").doc;
		prefill = doc.getText();
		doc._set("one\ntwo\nthree\nfour\nfive"); // the user edits it
		return "Done";
	};
	send(view, "/rpc-editor");
	await notified("Editor submitted (5 lines)");
	assert.equal(prefill, "Line 1\nLine 2\nLine 3");
	const ask = calls.find((c) => c.kind === "showInformationMessage" && c.items.includes("Done"));
	assert.match(ask.message, /^Edit some text/);
	assert.deepEqual(ask.items, ["Done", "Cancel"]);
	const doc = calls.find((c) => c.kind === "openTextDocument").doc;
	const shown = calls.find((c) => c.kind === "showTextDocument");
	assert.equal(shown.target, doc, "the document was shown to edit");
	assert.ok(calls.indexOf(shown) < calls.indexOf(ask), "before the question");

	calls.length = 0;
	answers.showInformationMessage = (msg, items) => (items.includes("Cancel") ? "Cancel" : undefined);
	send(view, "/rpc-editor");
	await notified("Editor cancelled");
});

test("/rpc-prefill: the extension's text replaces the composer's", { skip }, async (t) => {
	const { view, posted } = await start(t);
	send(view, "/rpc-prefill");
	await notified("Editor prefilled");
	const insert = await waitFor("the composer's text", (m) => m.type === "insert", { past: posted });
	assert.deepEqual(insert, { type: "insert", text: "This text was set by the rpc-demo extension.", replace: true });
});

test("a dangerous command: rpc-demo's select offers Allow and Block as it wrote them; Block stops it, Allow lets the approval gate ask", { skip }, async (t) => {
	const { view, posted, work } = await start(t, { approval: "writes" });
	await mkdir(path.join(work, "junk"));
	await writeFile(path.join(work, "junk", "x.txt"), "x");
	answers.showInformationMessage = (msg) => (msg.startsWith("Dangerous command:") ? "Block" : undefined);
	send(view, "bash: rm -rf junk");
	const end = await waitFor("the blocked call", isEvent("tool_execution_end"), { past: posted });
	assert.equal(end.event.isError, true);
	assert.match(JSON.stringify(end.event.result), /Blocked by user/);
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted });
	const select = calls.find((c) => c.kind === "showInformationMessage" && c.message === "Dangerous command: rm -rf junk");
	assert.ok(select, "the extension asked");
	assert.deepEqual(select.items, ["Allow", "Block"], "the extension's own words, not the approval gate's");
	await notified("Command blocked by user", "showWarningMessage");
	assert.ok(!posted.some((m) => m.type === "approval"), "a blocked call never reaches the approval gate");
	assert.ok(existsSync(path.join(work, "junk", "x.txt")));

	// Allow: the extension lets it through, then gopi's own gate asks, on the card, in review words.
	const mark = posted.length;
	calls.length = 0;
	answers.showInformationMessage = (msg) => (msg.startsWith("Dangerous command:") ? "Allow" : undefined);
	send(view, "bash: rm -rf junk");
	const gate = await waitFor("the approval gate's question", (m) => m.type === "approval", { past: posted.slice(mark) });
	assert.deepEqual(
		gate.options.map((o) => o.label),
		["Accept", "Always", "Reject"],
	);
	assert.ok(calls.some((c) => c.message === "Dangerous command: rm -rf junk"), "the extension asked first");
	view.webview.send({ type: "approve", id: gate.id, answer: "Allow" });
	await waitFor("agent_settled", isEvent("agent_settled"), { past: posted.slice(mark) });
	await notified("Command allowed");
	assert.equal(existsSync(path.join(work, "junk")), false, "the command ran");
});

test("confirm and select of timed-confirm.ts: Yes/No as a warning, options as buttons; an unanswered one times out and the command goes on", { skip }, async (t) => {
	const { view } = await start(t, { extensions: ["timed-confirm.ts"] });
	answers.showWarningMessage = (msg, items) => (items.length ? "Yes" : undefined);
	send(view, "/timed");
	await notified("Confirmed by user!");
	const confirm = calls.find((c) => c.kind === "showWarningMessage" && c.items.length);
	assert.equal(confirm.message, "Timed Confirmation\n\nThis dialog will auto-cancel in 5 seconds. Confirm?");
	assert.deepEqual(confirm.items, ["Yes", "No"]);

	calls.length = 0;
	answers.showWarningMessage = (msg, items) => (items.length ? "No" : undefined);
	send(view, "/timed");
	await notified("Cancelled or timed out");

	calls.length = 0;
	answers.showInformationMessage = (msg, items) => (items.length ? "Option B" : undefined);
	send(view, "/timed-select");
	await notified("Selected: Option B");
	const select = calls.find((c) => c.kind === "showInformationMessage" && c.items.length);
	assert.equal(select.message, "Pick an option");
	assert.deepEqual(select.items, ["Option A", "Option B", "Option C"]);

	// Nobody answers: after its 5 s the extension gets the default.
	calls.length = 0;
	answers.showWarningMessage = (msg, items) => (items.length ? new Promise(() => {}) : undefined);
	const t0 = Date.now();
	send(view, "/timed");
	await notified("Cancelled or timed out");
	assert.ok(Date.now() - t0 >= 4000, "it waited for the dialog's timeout");
});

test("status texts styled for pi's terminal show as plain text; widgets go above or below the composer", { skip }, async (t) => {
	const { view, posted } = await start(t, { extensions: ["status-line.ts", "widget-placement.ts", "system-prompt-header.ts"] });
	// status-line.ts colours its texts with ctx.ui.theme.fg (ANSI escapes).
	const item = await statusShows("status-demo", "Ready");
	const above = await waitFor("the widget above", (m) => m.type === "widget" && m.key === "widget-above", { past: posted });
	assert.deepEqual(above.lines, ["Above editor widget"]);
	assert.equal(above.placement, undefined);
	const below = await waitFor("the widget below", (m) => m.type === "widget" && m.key === "widget-below", { past: posted });
	assert.deepEqual(below.lines, ["Below editor widget"]);
	assert.equal(below.placement, "belowEditor");

	send(view, "reply: hi");
	await statusShows("status-demo", "✓ Turn 1 complete");
	assert.ok(item.texts.includes("● Turn 1..."), item.texts.join(" | "));
	assert.ok(!item.texts.some((x) => /[\x00-\x1f]/.test(x)), `no control characters: ${JSON.stringify(item.texts)}`);
	// Two extensions, two keys, two items.
	const prompt = await waitFor("system-prompt-header's status", (i) => i.id === "gopi.ext.system-prompt" && /^System: \d+ chars$/.test(i.text), {
		event: "status",
		past: statusItems,
	});
	assert.notEqual(prompt, item);
});

// --- the chat page ---


test("the chat page shows what the extension posted: the title, widgets above and below the composer, the prefilled composer", { skip }, async (t) => {
	const { view, posted } = await start(t, { extensions: ["rpc-demo.ts", "widget-placement.ts"] });
	await waitFor("rpc-demo's widget", (m) => m.type === "widget" && m.key === "rpc-demo", { past: posted });
	await waitFor("the widget below", (m) => m.type === "widget" && m.key === "widget-below", { past: posted });
	send(view, "/rpc-prefill");
	await waitFor("the composer's text", (m) => m.type === "insert", { past: posted });
	const messages = JSON.parse(JSON.stringify(posted));

	const puppeteer = require("puppeteer-core");
	const browser = await puppeteer.launch({ executablePath: findChromium(), headless: true, args: ["--no-sandbox", "--disable-gpu", "--allow-file-access-from-files"] });
	const dir = await mkdtemp(path.join(tmpdir(), "gopi-page-"));
	t.after(async () => {
		await browser.close();
		await rm(dir, { recursive: true, force: true });
	});
	const fileUri = (p) => ({ fsPath: p, toString: () => pathToFileURL(p).href });
	const html = ext.chatHtml(
		{ cspSource: "file:", asWebviewUri: (u) => ({ toString: () => pathToFileURL(u.fsPath).href }) },
		{ script: fileUri(path.join(extDir, "dist/webview.js")), style: fileUri(path.join(extDir, "media/chat.css")), config: { sendKey: "enter", label: "Chat" } },
	);
	const file = path.join(dir, "chat.html");
	await writeFile(file, html);
	const page = await browser.newPage();
	const errors = [];
	page.on("pageerror", (e) => errors.push(String(e)));
	await page.evaluateOnNewDocument(() => {
		window.acquireVsCodeApi = () => ({ postMessage() {} });
	});
	await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
	await page.evaluate((list) => {
		for (const m of list) window.postMessage(m, "*");
	}, messages);
	await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
	const shown = await page.evaluate(() => {
		const widgets = (id) => [...document.querySelectorAll(`#${id} .widget`)].map((w) => ({ id: w.id, text: w.textContent })).sort((a, b) => a.id.localeCompare(b.id));
		const title = document.querySelector("#title");
		return {
			title: { hidden: title.hidden, text: title.textContent },
			above: widgets("widgets-above"),
			below: widgets("widgets-below"),
			composer: document.querySelector("#input").value,
		};
	});
	assert.deepEqual(shown, {
		title: { hidden: false, text: "pi RPC Demo" },
		above: [
			{ id: "widget-rpc-demo", text: "--- RPC Extension UI Demo ---\nLoaded and ready." },
			{ id: "widget-widget-above", text: "Above editor widget" },
		],
		below: [{ id: "widget-widget-below", text: "Below editor widget" }],
		composer: "This text was set by the rpc-demo extension.",
	});
	assert.deepEqual(errors, []);
});

test("a dialog gopi withdraws (its timeout) closes the input box", { skip }, async (t) => {
	const dir = await realpath(await mkdtemp(path.join(tmpdir(), "gopi-vscode-timed-")));
	t.after(() => rm(dir, { recursive: true, force: true }));
	const file = path.join(dir, "timed-input.ts");
	await writeFile(
		file,
		`export default function (pi) {
	pi.registerCommand("name-please", {
		handler: async (_args, ctx) => {
			const name = await ctx.ui.input("Your name?", "", { timeout: 300 });
			ctx.ui.notify("name: " + (name ?? "none"), "info");
		},
	});
}
`,
	);
	const { view } = await start(t, { extensions: [file] });
	let withdrawn = false;
	answers.showInputBox = (_options, token) =>
		new Promise((resolve) => {
			token?.onCancellationRequested(() => {
				withdrawn = true;
				resolve(undefined);
			});
		});
	t.after(() => {
		answers.showInputBox = undefined;
	});
	send(view, "/name-please");
	await notified("name: none");
	assert.equal(withdrawn, true, "the input box was given gopi's cancellation and closed by it");
});
