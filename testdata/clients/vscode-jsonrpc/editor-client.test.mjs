// Drives the gopi binary through Microsoft's vscode-jsonrpc (the message
// layer under VS Code's language client) in gopi's JSON-RPC 2.0 dialect:
// LSP lifecycle, pi/* requests, pi/event notifications, the approval gate
// as window/showMessageRequest, work-done progress and $/cancelRequest.
// Run through run.sh, which installs the pinned package first; directly:
//
//   GOPI_BIN=/path/to/gopi node --test editor-client.test.mjs
//
// Every test starts its own gopi in a fresh working directory with a fresh
// PI_CODING_AGENT_DIR and no API keys, so the offline faux model answers
// (directives: core/llm/faux/README.md).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

// The package is CommonJS without an exports map: the file name is needed.
import jsonrpc from "vscode-jsonrpc/node.js";

const { createMessageConnection, StreamMessageReader, StreamMessageWriter, ProgressType } = jsonrpc;

const here = path.dirname(fileURLToPath(import.meta.url));
const gopiBin = path.resolve(process.env.GOPI_BIN ?? path.join(here, "../../../bin/gopi"));
if (!existsSync(gopiBin)) {
	throw new Error(`gopi binary not found at ${gopiBin}; build it (make build) or set GOPI_BIN`);
}

// How long a single wait may take before the test fails instead of hanging.
const WAIT_MS = 30_000;

/**
 * Settles like promise, or rejects after WAIT_MS; a failure names what was
 * awaited and carries gopi's stderr.
 */
function bounded(promise, what, g) {
	let timer;
	const timeout = new Promise((_, reject) => {
		timer = setTimeout(() => reject(new Error(`timed out after ${WAIT_MS} ms`)), WAIT_MS);
	});
	return Promise.race([promise, timeout])
		.catch((err) => {
			throw new Error(`${what}: ${err.message}; gopi stderr:\n${g.stderr()}`, { cause: err });
		})
		.finally(() => clearTimeout(timer));
}

/**
 * Starts gopi --mode rpc under a vscode-jsonrpc connection, in a fresh temp
 * working directory and agent directory. Every pi/event is recorded; the
 * test's cleanup ends the connection, kills gopi if it still runs, and
 * removes the directories.
 */
async function start(t, { args = [] } = {}) {
	const root = await realpath(await mkdtemp(path.join(tmpdir(), "gopi-vscode-jsonrpc-")));
	const cwd = path.join(root, "work");
	const agentDir = path.join(root, "agent");
	await mkdir(cwd);
	await mkdir(agentDir);

	const child = spawn(gopiBin, ["--mode", "rpc", "--model", "faux/faux-1", ...args], {
		cwd,
		env: {
			...process.env,
			PI_CODING_AGENT_DIR: agentDir,
			GOPI_NODE: process.env.GOPI_NODE ?? "",
			GOPI_PI_PACKAGE: process.env.GOPI_PI_PACKAGE ?? "",
			ANTHROPIC_API_KEY: "",
			OPENAI_API_KEY: "",
			GEMINI_API_KEY: "",
		},
		stdio: ["pipe", "pipe", "pipe"],
	});
	let stderr = "";
	child.stderr.setEncoding("utf8");
	child.stderr.on("data", (s) => (stderr += s));
	const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
	let exitInfo;
	exited.then((info) => (exitInfo = info));

	// The writer is wrapped to learn the ids vscode-jsonrpc gives requests:
	// $/cancelRequest for a pi/prompt's run names an id whose response has
	// long arrived, which the library's CancellationToken cannot do.
	const writer = new StreamMessageWriter(child.stdin);
	const sent = [];
	const write = writer.write.bind(writer);
	writer.write = (msg) => {
		sent.push(msg);
		return write(msg);
	};
	const conn = createMessageConnection(new StreamMessageReader(child.stdout), writer);

	const g = {
		child,
		conn,
		cwd,
		agentDir,
		sent,
		events: [],
		eventWaiters: [],
		exited,
		stderr: () => stderr,
	};
	conn.onNotification("pi/event", (ev) => {
		g.events.push(ev);
		for (const w of [...g.eventWaiters]) w(ev);
	});

	t.after(async () => {
		conn.dispose();
		if (!exitInfo) {
			child.kill("SIGKILL");
			await exited;
		}
		await rm(root, { recursive: true, force: true });
	});
	conn.listen();
	return g;
}

/** Resolves with the first recorded pi/event at index >= from matching pred. */
function waitEvent(g, pred, what, from = 0) {
	const found = g.events.slice(from).find(pred);
	if (found) return Promise.resolve(found);
	let stop;
	const p = new Promise((resolve) => {
		const w = (ev) => {
			if (pred(ev)) {
				stop();
				resolve(ev);
			}
		};
		stop = () => g.eventWaiters.splice(g.eventWaiters.indexOf(w), 1);
		g.eventWaiters.push(w);
	});
	return bounded(p, what, g).finally(() => stop?.());
}

/** The id vscode-jsonrpc gave the latest request for method. */
function lastRequestId(g, method) {
	const msg = g.sent.findLast((m) => m.method === method && "id" in m);
	assert.ok(msg, `no ${method} request was written`);
	return msg.id;
}

function textOf(message) {
	if (typeof message.content === "string") return message.content;
	return message.content
		.filter((b) => b.type === "text")
		.map((b) => b.text)
		.join("");
}

const isType = (type) => (ev) => ev.type === type;
const isTextDelta = (ev) => ev.type === "message_update" && ev.assistantMessageEvent?.type === "text_delta";

/** initialize as an editor that shows dialogs and progress, then initialized. */
async function initialize(g, capabilities) {
	const result = await bounded(
		g.conn.sendRequest("initialize", {
			processId: process.pid,
			clientInfo: { name: "vscode-jsonrpc test", version: "1" },
			rootUri: pathToFileURL(g.cwd).href,
			capabilities,
		}),
		"the initialize result",
		g,
	);
	await g.conn.sendNotification("initialized", {});
	return result;
}

const EDITOR_CAPS = {
	window: { showMessage: { messageActionItem: { additionalPropertiesSupport: false } }, workDoneProgress: true },
	experimental: { pi: { ui: true } },
};

test("round trip: initialize, approved write, progress, cancelled run, shutdown and exit", async (t) => {
	const g = await start(t, { args: ["--approval", "writes"] });

	// Dialogs and progress tokens the server asks for.
	const dialogs = [];
	g.conn.onRequest("window/showMessageRequest", (params) => {
		dialogs.push(params);
		return { title: "Allow" };
	});
	const created = [];
	const progress = new Map(); // token -> values in arrival order
	const progressEnded = [];
	g.conn.onRequest("window/workDoneProgress/create", ({ token }) => {
		created.push(token);
		const values = [];
		progress.set(token, values);
		g.conn.onProgress(new ProgressType(), token, (value) => {
			values.push(value);
			if (value.kind === "end") for (const w of progressEnded.splice(0)) w(token);
		});
		return null;
	});
	const stray = [];
	g.conn.onUnhandledProgress((p) => stray.push(p));

	const init = await initialize(g, EDITOR_CAPS);
	assert.equal(init.serverInfo.name, "gopi");
	assert.equal(typeof init.serverInfo.version, "string");
	const pi = init.capabilities.experimental.pi;
	assert.equal(pi.protocolVersion, 1);
	assert.ok(pi.commands.includes("pi/prompt") && pi.commands.includes("pi/get_state"), `commands: ${pi.commands}`);
	assert.ok(pi.events.includes("agent_end") && pi.events.includes("tool_execution_start"), `events: ${pi.events}`);

	const state = await bounded(g.conn.sendRequest("pi/get_state", {}), "pi/get_state", g);
	assert.equal(state.model.id, "faux-1");
	assert.equal(state.isStreaming, false);

	// An approved write: the question arrives as window/showMessageRequest.
	const firstEnd = new Promise((resolve) => progressEnded.push(resolve));
	const res = await bounded(g.conn.sendRequest("pi/prompt", { message: "write: notes.txt :: hello" }), "pi/prompt", g);
	assert.deepEqual(res, { disposition: "started" });
	const end1 = await waitEvent(g, isType("agent_end"), "agent_end of the write");
	assert.equal(dialogs.length, 1);
	const [ask] = dialogs;
	assert.equal(ask.type, 3);
	assert.match(ask.message, /notes\.txt/);
	assert.deepEqual(ask.actions, [{ title: "Allow" }, { title: "Allow always" }, { title: "Deny" }]);
	assert.equal(ask.details.toolName, "write");
	assert.deepEqual(ask.details.args, { path: "notes.txt", content: "hello" });
	assert.match(ask.details.diff, /^\+hello$/m);

	const start1 = g.events.find(isType("tool_execution_start"));
	assert.ok(start1, "no tool_execution_start");
	assert.equal(start1.toolName, "write");
	const toolEnd = g.events.find(isType("tool_execution_end"));
	assert.equal(toolEnd.isError, false);
	const types = g.events.map((e) => e.type);
	assert.equal(types[0], "agent_start");
	assert.ok(types.indexOf("tool_execution_start") < types.indexOf("agent_end"));
	// pi 1.5: the first request records the system prompt and tools.
	assert.deepEqual(
		end1.messages.map((m) => m.role),
		["system", "user", "assistant", "toolResult", "assistant"],
	);
	assert.equal(await readFile(path.join(g.cwd, "notes.txt"), "utf8"), "hello");

	// The run's work-done progress: created, then begin, a report for the
	// tool, end. The end may trail agent_end: progress has its own sender.
	const token = await bounded(firstEnd, "the first progress to end", g);
	assert.deepEqual(created, [token]);
	const values = progress.get(token);
	assert.equal(values[0].kind, "begin");
	assert.equal(values[0].title, "gopi");
	assert.equal(values.at(-1).kind, "end");
	assert.ok(
		values.some((v) => v.kind === "report" && /^write: .*notes\.txt/.test(v.message)),
		`no report for the write: ${JSON.stringify(values)}`,
	);
	assert.deepEqual(
		values.slice(1, -1).map((v) => v.kind),
		values.slice(1, -1).map(() => "report"),
	);

	// A long stream cancelled by $/cancelRequest of its pi/prompt's id.
	const from = g.events.length;
	await bounded(g.conn.sendRequest("pi/prompt", { message: "stream: 2000" }), "the second pi/prompt", g);
	await waitEvent(g, isTextDelta, "the first text delta", from);
	await g.conn.sendNotification("$/cancelRequest", { id: lastRequestId(g, "pi/prompt") });
	const end2 = await waitEvent(g, isType("agent_end"), "agent_end of the cancelled run", from);
	const last = end2.messages.at(-1);
	assert.equal(last.role, "assistant");
	assert.equal(last.stopReason, "aborted");
	assert.ok(!textOf(last).endsWith("2000"), "the stream ran to its end");
	const after = await bounded(g.conn.sendRequest("pi/get_state", {}), "pi/get_state after the cancel", g);
	assert.equal(after.isStreaming, false);
	assert.equal(dialogs.length, 1, "the stream asked for approval");
	assert.deepEqual(stray, [], "progress for a token never created");

	// LSP's way out: shutdown answers null, exit ends the process with 0.
	assert.equal(await bounded(g.conn.sendRequest("shutdown"), "the shutdown result", g), null);
	await g.conn.sendNotification("exit");
	const { code, signal } = await bounded(g.exited, "gopi to exit", g);
	assert.equal(signal, null);
	assert.equal(code, 0, `exit code; stderr:\n${g.stderr()}`);
});

test("exit without shutdown ends the process with code 1", async (t) => {
	const g = await start(t);
	const init = await initialize(g, EDITOR_CAPS);
	assert.equal(init.serverInfo.name, "gopi");
	await g.conn.sendNotification("exit");
	const { code, signal } = await bounded(g.exited, "gopi to exit", g);
	assert.equal(signal, null);
	assert.equal(code, 1);
});

test("a client that cannot show dialogs is not asked, and the write is not run, saying why", async (t) => {
	const g = await start(t, { args: ["--approval", "writes"] });
	const asked = [];
	g.conn.onRequest("window/showMessageRequest", (params) => {
		asked.push(params);
		return { title: "Allow" };
	});
	// An LSP client without window.showMessage or experimental.pi.ui.
	await initialize(g, { window: { workDoneProgress: false }, general: {} });

	await bounded(g.conn.sendRequest("pi/prompt", { message: "write: notes.txt :: hello" }), "pi/prompt", g);
	const end = await waitEvent(g, isType("agent_end"), "agent_end of the write");
	assert.deepEqual(asked, [], "the server asked a client that declared no dialogs");
	const toolEnd = g.events.find(isType("tool_execution_end"));
	assert.ok(toolEnd, "the write tool never ended");
	assert.equal(toolEnd.toolName, "write");
	assert.equal(toolEnd.isError, true);
	const result = end.messages.find((m) => m.role === "toolResult");
	assert.equal(result.isError, true);
	// Issue 25: not "denied by the user", since nobody was asked.
	assert.match(textOf(result), /not run: approval is required and this client cannot show approval dialogs/);
	assert.doesNotMatch(textOf(result), /denied/i);
	assert.ok(!existsSync(path.join(g.cwd, "notes.txt")), "the refused write created the file");

	assert.equal(await bounded(g.conn.sendRequest("shutdown"), "the shutdown result", g), null);
	await g.conn.sendNotification("exit");
	assert.equal((await bounded(g.exited, "gopi to exit", g)).code, 0);
});

// pi's extensions in the JSON-RPC dialect (issue 14): the permission
// gate's select becomes window/showMessageRequest, and rpc-demo's status,
// widget and title become pi/ui/* notifications. Needs the extension
// host's runtime: GOPI_NODE, GOPI_PI_PACKAGE and GOPI_PI_EXAMPLES (make
// test-editors sets them).
const extEnv = ["GOPI_NODE", "GOPI_PI_PACKAGE", "GOPI_PI_EXAMPLES"].every((k) => process.env[k]);
test("pi extensions: a tool_call dialog as showMessageRequest, status and widget as pi/ui/*", { skip: !extEnv && "GOPI_NODE, GOPI_PI_PACKAGE and GOPI_PI_EXAMPLES are not set" }, async (t) => {
	const examples = process.env.GOPI_PI_EXAMPLES;
	const g = await start(t, {
		args: ["-e", path.join(examples, "permission-gate.ts"), "-e", path.join(examples, "rpc-demo.ts")],
	});
	await mkdir(path.join(g.cwd, "build"));
	const ui = [];
	for (const m of ["setStatus", "setWidget", "setTitle", "notify"]) {
		g.conn.onNotification(`pi/ui/${m}`, (params) => ui.push({ method: m, ...params }));
	}
	const dialogs = [];
	g.conn.onRequest("window/showMessageRequest", (params) => {
		dialogs.push(params);
		// permission-gate asks "Allow?" with Yes and No.
		return { title: "No" };
	});
	await initialize(g, EDITOR_CAPS);

	await bounded(g.conn.sendRequest("pi/prompt", { message: "bash: rm -rf build" }), "the prompt's answer", g);
	const end = await waitEvent(g, isType("tool_execution_end"), "the blocked tool's end");
	assert.equal(end.isError, true);
	assert.match(textOf(end.result), /Blocked by user/);
	await waitEvent(g, isType("agent_settled"), "agent_settled");
	assert.ok(existsSync(path.join(g.cwd, "build")), "the blocked command did not run");

	const gate = dialogs.find((d) => d.message.includes("rm -rf build"));
	assert.ok(gate, `a dialog named the command: ${JSON.stringify(dialogs)}`);
	assert.deepEqual(
		gate.actions.map((a) => a.title),
		["Yes", "No"],
	);
	// rpc-demo: a title and a widget at session_start, a status per turn.
	assert.ok(ui.some((u) => u.method === "setTitle" && u.title === "pi RPC Demo"), JSON.stringify(ui));
	assert.ok(
		ui.some((u) => u.method === "setWidget" && u.widgetKey === "rpc-demo" && u.widgetLines?.[1] === "Loaded and ready."),
		JSON.stringify(ui),
	);
	assert.ok(ui.some((u) => u.method === "setStatus" && u.statusKey === "rpc-demo" && /Turn 1 done/.test(u.statusText)), JSON.stringify(ui));
});
