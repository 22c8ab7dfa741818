// Drives the gopi binary in --mode acp with the official ACP TypeScript
// SDK (@agentclientprotocol/sdk, pinned in package.json / package-lock.json),
// as an editor does. Since 2.4.0 the SDK's client is an app:
// acp.client().onNotification(...).onRequest(...).connect(stream) (it
// replaced ClientSideConnection); its stream parser and typed handlers check
// what gopi sends. Run through run.sh, which installs the package first;
// directly (the MCP test needs the repository's MCP test server, built
// from core/mcp/testdata/mcpserver):
//
//   GOPI_BIN=/path/to/gopi GOPI_MCP_TESTSERVER=/path/to/mcpserver node --test acp-client.test.mjs
//
// Every test starts its own gopi in a fresh working directory, agent
// directory and HOME, with no API keys, so the offline faux model answers
// (directives: core/llm/faux/README.md). The client's side (permission
// answers, buffers, terminals) is served by handlers registered on the
// SDK's app, with the capabilities declared in initialize.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import * as acp from "@agentclientprotocol/sdk";
// The unstable entrypoint, for session/fork (its app checks what gopi
// answers against the unstable schema).
import * as acpUnstable from "@agentclientprotocol/sdk/unstable";

const here = path.dirname(fileURLToPath(import.meta.url));
const gopiBin = path.resolve(process.env.GOPI_BIN ?? path.join(here, "../../../bin/gopi"));
if (!existsSync(gopiBin)) {
	throw new Error(`gopi binary not found at ${gopiBin}; build it (make build) or set GOPI_BIN`);
}

// How long a single wait may take before the test fails instead of hanging.
const WAIT_MS = 30_000;

/** Settles like promise, or fails after WAIT_MS naming what was awaited, with gopi's stderr. */
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

/** A fresh root with a working directory, an agent directory and a HOME. */
async function makeRoot(t) {
	const root = await realpath(await mkdtemp(path.join(tmpdir(), "gopi-acp-client-")));
	const dirs = { root, cwd: path.join(root, "work"), agentDir: path.join(root, "agent"), home: path.join(root, "home") };
	await Promise.all([mkdir(dirs.cwd), mkdir(dirs.agentDir), mkdir(dirs.home)]);
	t.after(() => rm(root, { recursive: true, force: true }));
	return dirs;
}

/**
 * Starts gopi --mode acp in dirs under the SDK's client app. Every
 * session/update is recorded in order. The test's cleanup closes stdin and
 * waits for gopi (killing it if it does not end).
 */
function start(t, dirs, { args = ["--no-session"], serve, sdk = acp } = {}) {
	const child = spawn(gopiBin, ["--mode", "acp", "--model", "faux/faux-fast", ...args], {
		cwd: dirs.cwd,
		env: {
			...process.env,
			HOME: dirs.home,
			PI_CODING_AGENT_DIR: dirs.agentDir,
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

	const updates = [];
	const waiters = [];
	const app = sdk
		.client()
		.onNotification(sdk.methods.client.session.update, ({ params }) => {
			updates.push(params);
			for (const w of waiters.splice(0)) w();
		});
	// The client's requests (session/request_permission, fs/*, terminal/*)
	// are served by handlers serve registers on the app; the test then
	// declares the matching capabilities in initialize.
	serve?.(app);
	const conn = app.connect(sdk.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));

	const g = {
		child,
		agent: conn.agent,
		updates,
		stderr: () => stderr,
		/** Sends request method and awaits its answer, bounded. */
		request: (method, params) => bounded(conn.agent.request(method, params), method, g),
		/** Resolves once some recorded update satisfies pred; returns it. */
		async waitUpdate(pred, what) {
			const find = () => updates.find(pred);
			const wait = (async () => {
				for (;;) {
					const u = find();
					if (u) return u;
					await new Promise((resolve) => waiters.push(resolve));
				}
			})();
			return bounded(wait, what, g);
		},
		/** Closes stdin and waits for gopi to exit. */
		async stop() {
			child.stdin.end();
			return bounded(exited, "gopi's exit", g);
		},
	};
	t.after(async () => {
		conn.close();
		if (child.exitCode === null && child.signalCode === null) {
			child.stdin.end();
			const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
			await exited;
			clearTimeout(timer);
		}
	});
	return g;
}

/** initialize as an editor with clientCapabilities (none by default). */
async function initialize(g, clientCapabilities = {}) {
	const res = await g.request(acp.methods.agent.initialize, {
		protocolVersion: acp.PROTOCOL_VERSION,
		clientCapabilities,
		clientInfo: { name: "gopi-acp-client-test", version: "1.0.0" },
	});
	assert.equal(res.protocolVersion, 1);
	assert.equal(res.agentInfo.name, "gopi");
	return res;
}

const newSession = async (g, cwd) => (await g.request(acp.methods.agent.session.new, { cwd, mcpServers: [] })).sessionId;

const prompt = (g, sessionId, text) =>
	g.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

/** The updates of one session, from index from on. */
const of = (g, sessionId, from = 0) => g.updates.slice(from).filter((n) => n.sessionId === sessionId).map((n) => n.update);

/** The text of the chunks of kind k. */
const text = (ups, k) =>
	ups
		.filter((u) => u.sessionUpdate === k)
		.map((u) => u.content.text)
		.join("");

test("initialize, two sessions, streamed chunks", async (t) => {
	const dirs = await makeRoot(t);
	const g = start(t, dirs);
	const init = await initialize(g);
	assert.equal(init.agentCapabilities.mcpCapabilities?.http, true);
	// No sign-in of its own: one method per provider family says where a key goes.
	assert.deepEqual(
		init.authMethods.map((m) => m.id),
		["anthropic", "openai", "google"],
	);
	assert.match(init.authMethods[0].description, /ANTHROPIC_API_KEY/);

	const s1 = await newSession(g, dirs.cwd);
	const s2 = await newSession(g, dirs.cwd);
	assert.notEqual(s1, s2);

	const res = await prompt(g, s1, "stream: 5");
	assert.equal(res.stopReason, "end_turn");
	const ups = of(g, s1);
	const chunks = ups.filter((u) => u.sessionUpdate === "agent_message_chunk");
	assert.equal(chunks.length, 5, "one chunk per delta");
	assert.equal(text(ups, "agent_message_chunk"), "1 2 3 4 5");
	assert.equal(ups.at(-1).sessionUpdate, "usage_update", "the run's updates end with its usage");
	assert.deepEqual(
		of(g, s2).filter((u) => u.sessionUpdate !== "available_commands_update"),
		[],
		"nothing for the other session but its commands",
	);

	const mark = g.updates.length;
	assert.equal((await prompt(g, s2, "reply: second")).stopReason, "end_turn");
	assert.equal(text(of(g, s2, mark), "agent_message_chunk"), "second");
	assert.deepEqual(await g.stop(), { code: 0, signal: null });
});

test("a tool call: pending, in progress, completed with its output", async (t) => {
	const dirs = await makeRoot(t);
	const g = start(t, dirs);
	await initialize(g);
	const s = await newSession(g, dirs.cwd);
	assert.equal((await prompt(g, s, "bash: echo hi")).stopReason, "end_turn");
	const ups = of(g, s);
	const call = ups.find((u) => u.sessionUpdate === "tool_call");
	assert.ok(call, "a tool_call");
	assert.equal(call.kind, "execute");
	assert.equal(call.title, "echo hi");
	assert.equal(call.status, "pending");
	assert.deepEqual(call.rawInput, { command: "echo hi" });
	const after = ups.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === call.toolCallId);
	assert.deepEqual(
		after.map((u) => u.status),
		["in_progress", "completed"],
	);
	assert.equal(after[1].content[0].content.text.trim(), "hi");
	assert.match(text(ups, "agent_message_chunk"), /hi/, "the model's reply after the tool");
	assert.deepEqual(await g.stop(), { code: 0, signal: null });
});

test("session/cancel answers the prompt cancelled", async (t) => {
	const dirs = await makeRoot(t);
	const g = start(t, dirs);
	await initialize(g);
	const s = await newSession(g, dirs.cwd);
	const pending = prompt(g, s, "bash: sleep 60");
	await g.waitUpdate(
		(n) => n.sessionId === s && n.update.sessionUpdate === "tool_call_update" && n.update.status === "in_progress",
		"the command running",
	);
	await g.agent.notify(acp.methods.agent.session.cancel, { sessionId: s });
	assert.equal((await pending).stopReason, "cancelled");
	// The session is usable again.
	assert.equal((await prompt(g, s, "reply: again")).stopReason, "end_turn");
	assert.deepEqual(await g.stop(), { code: 0, signal: null });
});

test("a prompt sent while one runs waits its turn; cancel ends both", async (t) => {
	const dirs = await makeRoot(t);
	const g = start(t, dirs);
	await initialize(g);
	const s = await newSession(g, dirs.cwd);
	const gate = path.join(dirs.cwd, "gate");
	const first = prompt(g, s, `bash: while [ ! -e ${gate} ]; do sleep 0.05; done; echo first`);
	await g.waitUpdate(
		(n) => n.sessionId === s && n.update.sessionUpdate === "tool_call_update" && n.update.status === "in_progress",
		"the first prompt's command running",
	);
	const second = prompt(g, s, "reply: second");
	await writeFile(gate, "");
	assert.equal((await first).stopReason, "end_turn");
	assert.equal((await second).stopReason, "end_turn");
	const replies = text(of(g, s), "agent_message_chunk");
	assert.match(replies, /Tool said: first.*second$/s, "each reply in its turn, in order");

	// Cancelled while the second waits: both answer cancelled.
	const mark = g.updates.length;
	const running = prompt(g, s, "bash: sleep 60");
	await g.waitUpdate(
		(n) =>
			g.updates.indexOf(n) >= mark &&
			n.sessionId === s &&
			n.update.sessionUpdate === "tool_call_update" &&
			n.update.status === "in_progress",
		"the third prompt's command running",
	);
	const waiting = prompt(g, s, "reply: never");
	await g.agent.notify(acp.methods.agent.session.cancel, { sessionId: s });
	assert.equal((await running).stopReason, "cancelled");
	assert.equal((await waiting).stopReason, "cancelled");
	assert.equal((await prompt(g, s, "reply: again")).stopReason, "end_turn");
	assert.deepEqual(await g.stop(), { code: 0, signal: null });
});

test("session/fork (unstable): a copy of the history that goes on apart", async (t) => {
	const dirs = await makeRoot(t);
	const g = start(t, dirs, { args: [], sdk: acpUnstable });
	const init = await g.request(acpUnstable.methods.agent.initialize, { protocolVersion: acpUnstable.PROTOCOL_VERSION, clientCapabilities: {} });
	assert.ok(init.agentCapabilities.sessionCapabilities.fork, "fork is advertised");
	const s = (await g.request(acpUnstable.methods.agent.session.new, { cwd: dirs.cwd, mcpServers: [] })).sessionId;
	assert.equal((await prompt(g, s, "reply: before the fork")).stopReason, "end_turn");
	const forked = await g.request(acpUnstable.methods.agent.session.fork, { sessionId: s, cwd: dirs.cwd, mcpServers: [] });
	assert.notEqual(forked.sessionId, s);
	assert.ok(forked.configOptions.length > 0);
	const mark = g.updates.length;
	assert.equal((await prompt(g, forked.sessionId, "reply: in the fork")).stopReason, "end_turn");
	assert.equal(text(of(g, forked.sessionId, mark), "agent_message_chunk"), "in the fork");
	assert.equal(of(g, s, mark).length, 0, "the original hears nothing of the fork");
	assert.deepEqual(await g.stop(), { code: 0, signal: null });

	// Loaded in another gopi, the fork has the shared history and its own turn.
	const second = start(t, dirs, { args: [] });
	await initialize(second);
	await second.request(acp.methods.agent.session.load, { sessionId: forked.sessionId, cwd: dirs.cwd, mcpServers: [] });
	const users = of(second, forked.sessionId)
		.filter((u) => u.sessionUpdate === "user_message_chunk")
		.map((u) => u.content.text);
	assert.deepEqual(users, ["reply: before the fork", "reply: in the fork"]);
	assert.deepEqual(await second.stop(), { code: 0, signal: null });
});

test("logout forgets the key stored in auth.json", async (t) => {
	const dirs = await makeRoot(t);
	const auth = path.join(dirs.agentDir, "auth.json");
	await writeFile(auth, JSON.stringify({ anthropic: { type: "api_key", key: "sk-test" } }));
	const g = start(t, dirs, { args: ["--no-session", "--model", "anthropic/claude-sonnet-4-5"] });
	const init = await initialize(g);
	assert.ok(init.agentCapabilities.auth?.logout, "logout is advertised");
	await newSession(g, dirs.cwd);
	assert.deepEqual(await g.request(acp.methods.agent.logout, {}), {});
	assert.deepEqual(JSON.parse(await readFile(auth, "utf8")), {});
	await assert.rejects(newSession(g, dirs.cwd), (err) => {
		assert.match(err.message, /authentication required|-32000/i);
		return true;
	});
	assert.deepEqual(await g.stop(), { code: 0, signal: null });
});

test("session/load in another gopi replays the history with its tool calls", async (t) => {
	const dirs = await makeRoot(t);
	const first = start(t, dirs, { args: [] });
	const init = await initialize(first);
	assert.equal(init.agentCapabilities.loadSession, true);
	const s = await newSession(first, dirs.cwd);
	assert.equal((await prompt(first, s, "bash: echo replayed")).stopReason, "end_turn");
	const live = of(first, s);
	assert.deepEqual(await first.stop(), { code: 0, signal: null });

	const second = start(t, dirs, { args: [] });
	await initialize(second);
	await second.request(acp.methods.agent.session.load, { sessionId: s, cwd: dirs.cwd, mcpServers: [] });
	// The session's commands follow the answer, so they may be here already.
	const replay = of(second, s).filter((u) => u.sessionUpdate !== "available_commands_update");
	assert.deepEqual(
		replay.map((u) => u.sessionUpdate),
		["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"],
	);
	assert.equal(replay[0].content.text, "bash: echo replayed");
	const liveCall = live.find((u) => u.sessionUpdate === "tool_call");
	assert.equal(replay[1].toolCallId, liveCall.toolCallId, "the call keeps its id");
	assert.equal(replay[1].title, liveCall.title);
	assert.equal(replay[2].status, "completed");
	assert.equal(replay[2].content[0].content.text.trim(), "replayed");
	assert.equal(replay[3].content.text, text(live, "agent_message_chunk"));

	// The loaded session goes on.
	const mark = second.updates.length;
	assert.equal((await prompt(second, s, "reply: continued")).stopReason, "end_turn");
	assert.equal(text(of(second, s, mark), "agent_message_chunk"), "continued");
	assert.deepEqual(await second.stop(), { code: 0, signal: null });
});

/** The tool_call of ups with the given title (the first one without a title), and the updates of that call. */
function toolCall(ups, title) {
	const call = ups.find((u) => u.sessionUpdate === "tool_call" && (title === undefined || u.title === title));
	assert.ok(call, `a tool_call ${title ?? ""} in ${JSON.stringify(ups)}`);
	const after = ups.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === call.toolCallId);
	return { call, after, final: after.findLast((u) => u.status === "completed" || u.status === "failed") };
}

/** The text of a tool call update's text content blocks. */
const contentText = (u) =>
	(u?.content ?? [])
		.filter((c) => c.type === "content" && c.content.type === "text")
		.map((c) => c.content.text)
		.join("\n");

const exists = (file) => readFile(file).then(
	() => true,
	() => false,
);

test("edit and write tool calls end with a diff of the file as it was", async (t) => {
	const dirs = await makeRoot(t);
	const notes = path.join(dirs.cwd, "notes.txt");
	const plan = path.join(dirs.cwd, "plan.txt");
	await writeFile(notes, "first line\nold line\nlast line\n");
	await writeFile(plan, "stale plan\n");
	const g = start(t, dirs);
	await initialize(g);
	const s = await newSession(g, dirs.cwd);

	assert.equal((await prompt(g, s, "edit: notes.txt :: old line => new line")).stopReason, "end_turn");
	let { call, final } = toolCall(of(g, s));
	assert.equal(call.kind, "edit");
	assert.deepEqual(call.locations, [{ path: notes }]);
	assert.equal(final.status, "completed");
	let diffs = final.content.filter((c) => c.type === "diff");
	assert.deepEqual(diffs, [
		{
			type: "diff",
			path: notes,
			oldText: "first line\nold line\nlast line\n",
			newText: "first line\nnew line\nlast line\n",
		},
	]);
	assert.equal(await readFile(notes, "utf8"), "first line\nnew line\nlast line\n");

	const mark = g.updates.length;
	assert.equal((await prompt(g, s, "write: plan.txt :: fresh plan")).stopReason, "end_turn");
	({ call, final } = toolCall(of(g, s, mark)));
	assert.equal(call.kind, "edit");
	assert.equal(final.status, "completed");
	diffs = final.content.filter((c) => c.type === "diff");
	assert.deepEqual(diffs, [{ type: "diff", path: plan, oldText: "stale plan\n", newText: "fresh plan" }]);
	assert.equal(await readFile(plan, "utf8"), "fresh plan");
	assert.deepEqual(await g.stop(), { code: 0, signal: null });
});

/**
 * A client that answers session/request_permission with the next of
 * choices (an option id, or "cancelled"), recording each request.
 */
function permissionClient(choices) {
	const asked = [];
	const serve = (app) =>
		app.onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
			asked.push(params);
			const choice = choices.shift();
			assert.ok(choice, `an unexpected permission request: ${JSON.stringify(params)}`);
			return { outcome: choice === "cancelled" ? { outcome: "cancelled" } : { outcome: "selected", optionId: choice } };
		});
	return { asked, serve };
}

/** The current value of config option id in options. */
const optionValue = (options, id) => options.find((o) => o.id === id)?.currentValue;

test("config options: mode, model and thought level; set_config_option and set_mode", async (t) => {
	const dirs = await makeRoot(t);
	const perms = permissionClient(["reject_once"]);
	const g = start(t, dirs, { serve: perms.serve });
	await initialize(g);
	const created = await g.request(acp.methods.agent.session.new, { cwd: dirs.cwd, mcpServers: [] });
	const s = created.sessionId;
	const opts = created.configOptions;
	assert.deepEqual(
		opts.map((o) => [o.id, o.category, o.type]),
		[
			["mode", "mode", "select"],
			["model", "model", "select"],
			["thought_level", "thought_level", "select"],
		],
	);
	const mode = opts.find((o) => o.id === "mode");
	assert.equal(mode.currentValue, "auto", "ACP's default: the sandbox on, asking only to step out");
	assert.deepEqual(
		mode.options.map((o) => o.value),
		["read-only", "auto", "writes", "all", "off", "full-access"],
	);
	const model = opts.find((o) => o.id === "model");
	assert.equal(model.currentValue, "faux/faux-fast");
	assert.ok(model.options.some((o) => o.value === "faux/faux-1"), "the other faux model is offered");
	const levels = opts.find((o) => o.id === "thought_level");
	assert.deepEqual(
		levels.options.map((o) => o.value),
		["off"],
		"faux-fast does not reason",
	);
	assert.equal(created.modes.currentModeId, "auto");
	assert.deepEqual(
		created.modes.availableModes.map((m) => m.id),
		mode.options.map((o) => o.value),
	);

	// Switching the model to one that reasons offers its levels.
	let res = await g.request(acp.methods.agent.session.setConfigOption, { sessionId: s, configId: "model", value: "faux/faux-1" });
	assert.equal(optionValue(res.configOptions, "model"), "faux/faux-1");
	assert.ok(res.configOptions.find((o) => o.id === "thought_level").options.length > 1, "faux-1's levels");

	// The mode through the config option: the answer and a current_mode_update say so.
	res = await g.request(acp.methods.agent.session.setConfigOption, { sessionId: s, configId: "mode", value: "writes" });
	assert.equal(optionValue(res.configOptions, "mode"), "writes");
	await g.waitUpdate(
		(n) => n.sessionId === s && n.update.sessionUpdate === "current_mode_update" && n.update.currentModeId === "writes",
		"current_mode_update to writes",
	);
	// Under "writes" a read does not ask.
	assert.equal((await prompt(g, s, "read: missing.txt")).stopReason, "end_turn");
	assert.equal(perms.asked.length, 0);

	// set_mode to "all": both updates, and now a read asks.
	await g.request(acp.methods.agent.session.setMode, { sessionId: s, modeId: "all" });
	await g.waitUpdate(
		(n) => n.sessionId === s && n.update.sessionUpdate === "current_mode_update" && n.update.currentModeId === "all",
		"current_mode_update to all",
	);
	const update = await g.waitUpdate(
		(n) =>
			n.sessionId === s &&
			n.update.sessionUpdate === "config_option_update" &&
			optionValue(n.update.configOptions, "mode") === "all",
		"config_option_update with mode all",
	);
	assert.equal(optionValue(update.update.configOptions, "model"), "faux/faux-1");
	const mark = g.updates.length;
	assert.equal((await prompt(g, s, "read: missing.txt")).stopReason, "end_turn");
	assert.equal(perms.asked.length, 1, "the read was put to the client");
	assert.equal(perms.asked[0].toolCall.kind, "read");
	assert.match(contentText(toolCall(of(g, s, mark)).final), /denied/);

	// A value the option does not have is refused, naming it.
	await assert.rejects(
		g.request(acp.methods.agent.session.setConfigOption, { sessionId: s, configId: "mode", value: "sometimes" }),
		/sometimes/,
	);
	assert.deepEqual(await g.stop(), { code: 0, signal: null });
});

test("permissions: bash asks with the whole command; allow runs it, reject does not", async (t) => {
	const dirs = await makeRoot(t);
	const perms = permissionClient(["allow_once", "reject_once"]);
	const g = start(t, dirs, { args: ["--no-session", "--approval", "writes"], serve: perms.serve });
	await initialize(g);
	const created = await g.request(acp.methods.agent.session.new, { cwd: dirs.cwd, mcpServers: [] });
	assert.equal(created.modes.currentModeId, "writes");
	const s = created.sessionId;

	// Allowed: the command ran.
	const allowed = "echo first line\ntouch allowed.txt";
	assert.equal((await prompt(g, s, `bash: ${allowed}`)).stopReason, "end_turn");
	assert.equal(perms.asked.length, 1);
	let req = perms.asked[0];
	let { call, final } = toolCall(of(g, s));
	assert.equal(req.sessionId, s);
	assert.equal(req.toolCall.toolCallId, call.toolCallId, "the question is about the call gopi announced");
	assert.equal(req.toolCall.title, allowed, "the title is the whole command, every line");
	assert.equal(req.toolCall.kind, "execute");
	assert.deepEqual(req.toolCall.rawInput, { command: allowed });
	assert.deepEqual(
		req.options.map((o) => [o.optionId, o.kind]),
		[
			["allow_once", "allow_once"],
			["allow_always", "allow_always"],
			["reject_once", "reject_once"],
			["reject_always", "reject_always"],
		],
	);
	assert.equal(final.status, "completed");
	assert.deepEqual(
		toolCall(of(g, s)).after.map((u) => u.status).filter(Boolean),
		["in_progress", "completed"],
		"in progress once allowed",
	);
	assert.equal(contentText(final).trim(), "first line");
	assert.ok(await exists(path.join(dirs.cwd, "allowed.txt")), "the allowed command ran");

	// Rejected: the model reads that it was denied, and the command did not run.
	const mark = g.updates.length;
	assert.equal((await prompt(g, s, "bash: touch rejected.txt")).stopReason, "end_turn");
	assert.equal(perms.asked.length, 2);
	req = perms.asked[1];
	assert.equal(req.toolCall.title, "touch rejected.txt");
	({ call, final } = toolCall(of(g, s, mark)));
	assert.equal(req.toolCall.toolCallId, call.toolCallId);
	assert.equal(final.status, "failed");
	assert.deepEqual(
		toolCall(of(g, s, mark)).after.map((u) => u.status).filter(Boolean),
		["failed"],
		"a rejected call was never in progress",
	);
	assert.match(contentText(final), /denied by the user/);
	assert.match(text(of(g, s, mark), "agent_message_chunk"), /denied/, "the model was told");
	assert.equal(await exists(path.join(dirs.cwd, "rejected.txt")), false, "the rejected command did not run");
	assert.deepEqual(await g.stop(), { code: 0, signal: null });
});

/**
 * An editor's open buffers: fs/read_text_file answers a buffer (else the
 * file on disk, as an editor opens it), honouring line and limit;
 * fs/write_text_file changes the buffer and leaves saving to the user.
 */
function editorBuffers(buffers) {
	const reads = [];
	const writes = [];
	const serve = (app) =>
		app
			.onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
				reads.push(params);
				const content = buffers.has(params.path) ? buffers.get(params.path) : await readFile(params.path, "utf8");
				if (params.line == null && params.limit == null) return { content };
				const lines = content.split("\n");
				const from = (params.line ?? 1) - 1;
				return { content: lines.slice(from, params.limit == null ? undefined : from + params.limit).join("\n") };
			})
			.onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
				writes.push(params);
				buffers.set(params.path, params.content);
				return {};
			});
	return { reads, writes, serve };
}

test("fs delegation: reads get the editor's unsaved buffer, writes go to the editor", async (t) => {
	const dirs = await makeRoot(t);
	const file = path.join(dirs.cwd, "draft.txt");
	await writeFile(file, "saved on disk\n");
	const editor = editorBuffers(new Map([[file, "unsaved in the editor\n"]]));
	const g = start(t, dirs, { serve: editor.serve });
	await initialize(g, { fs: { readTextFile: true, writeTextFile: true } });
	const s = await newSession(g, dirs.cwd);

	assert.equal((await prompt(g, s, "read: draft.txt")).stopReason, "end_turn");
	let { final } = toolCall(of(g, s));
	assert.equal(final.status, "completed");
	assert.match(contentText(final), /unsaved in the editor/);
	assert.doesNotMatch(contentText(final), /saved on disk/);
	assert.ok(editor.reads.length > 0);
	assert.deepEqual(
		editor.reads.map((r) => [r.sessionId, r.path]),
		editor.reads.map(() => [s, file]),
		"every read names the session and the absolute path",
	);

	const mark = g.updates.length;
	assert.equal((await prompt(g, s, "write: draft.txt :: written by the model")).stopReason, "end_turn");
	({ final } = toolCall(of(g, s, mark)));
	assert.equal(final.status, "completed");
	assert.deepEqual(editor.writes, [{ sessionId: s, path: file, content: "written by the model" }]);
	assert.deepEqual(
		final.content.filter((c) => c.type === "diff"),
		[{ type: "diff", path: file, oldText: "unsaved in the editor\n", newText: "written by the model" }],
		"the diff is against the buffer",
	);
	assert.equal(await readFile(file, "utf8"), "saved on disk\n", "the disk is the editor's to save");
	assert.deepEqual(await g.stop(), { code: 0, signal: null });
});

/**
 * An editor's terminals: terminal/create spawns the command (in its own
 * process group, killed whole), keeps at most outputByteLimit bytes of its
 * output (the end, cut at a character boundary), and serves output,
 * wait_for_exit (given up when gopi cancels it), kill and release. Every
 * request is recorded; the test's cleanup kills what is left.
 */
function editorTerminals(t) {
	const calls = [];
	const terms = new Map();
	let next = 0;
	const get = (id) => {
		const term = terms.get(id);
		if (!term) throw acp.RequestError.resourceNotFound(id);
		return term;
	};
	const killGroup = (term, signal) => {
		if (term.exit.done) return;
		try {
			process.kill(-term.child.pid, signal);
		} catch {
			// Already gone.
		}
	};
	const serve = (app) =>
		app
			.onRequest(acp.methods.client.terminal.create, ({ params }) => {
				calls.push({ method: "terminal/create", params });
				const child = spawn(params.command, params.args ?? [], {
					cwd: params.cwd ?? undefined,
					env: { ...process.env, ...Object.fromEntries((params.env ?? []).map((e) => [e.name, e.value])) },
					stdio: ["ignore", "pipe", "pipe"],
					detached: true,
				});
				const term = { child, output: Buffer.alloc(0), truncated: false, exit: { done: false } };
				const limit = params.outputByteLimit ?? Infinity;
				const keep = (chunk) => {
					let out = Buffer.concat([term.output, chunk]);
					if (out.length > limit) {
						let from = out.length - limit;
						while (from < out.length && (out[from] & 0xc0) === 0x80) from++;
						out = out.subarray(from);
						term.truncated = true;
					}
					term.output = out;
				};
				child.stdout.on("data", keep);
				child.stderr.on("data", keep);
				term.exited = new Promise((resolve) =>
					child.on("close", (code, signal) => {
						term.exit = { done: true, exitCode: code, signal };
						resolve();
					}),
				);
				const id = `term-${++next}`;
				terms.set(id, term);
				return { terminalId: id };
			})
			.onRequest(acp.methods.client.terminal.output, ({ params }) => {
				calls.push({ method: "terminal/output", params });
				const term = get(params.terminalId);
				const res = { output: term.output.toString("utf8"), truncated: term.truncated };
				if (term.exit.done) res.exitStatus = { exitCode: term.exit.exitCode, signal: term.exit.signal };
				return res;
			})
			.onRequest(acp.methods.client.terminal.waitForExit, async ({ params, signal }) => {
				calls.push({ method: "terminal/wait_for_exit", params });
				const term = get(params.terminalId);
				// gopi's $/cancel_request aborts signal (maybe before this
				// handler runs): the SDK then answers -32800.
				const given = new Promise((_, reject) => {
					const giveUp = () => {
						calls.push({ method: "$/cancel_request", params });
						reject(new DOMException("gopi gave up the wait", "AbortError"));
					};
					if (signal.aborted) giveUp();
					else signal.addEventListener("abort", giveUp, { once: true });
				});
				await Promise.race([term.exited, given]);
				return { exitCode: term.exit.exitCode, signal: term.exit.signal };
			})
			.onRequest(acp.methods.client.terminal.kill, ({ params }) => {
				calls.push({ method: "terminal/kill", params });
				killGroup(get(params.terminalId), "SIGTERM");
				return {};
			})
			.onRequest(acp.methods.client.terminal.release, ({ params }) => {
				calls.push({ method: "terminal/release", params });
				const term = get(params.terminalId);
				killGroup(term, "SIGKILL");
				terms.delete(params.terminalId);
				return {};
			});
	t.after(() => {
		for (const term of terms.values()) killGroup(term, "SIGKILL");
	});
	return { calls, terms, serve, methods: () => calls.map((c) => c.method) };
}

test("a client terminal runs bash: terminal content in the call, the output in its result", async (t) => {
	const dirs = await makeRoot(t);
	const terminals = editorTerminals(t);
	// The terminal is used with the sandbox off: ACP's default sandbox
	// runs commands in gopi, confined.
	const g = start(t, dirs, { args: ["--no-session", "--sandbox", "off"], serve: terminals.serve });
	await initialize(g, { terminal: true });
	const s = await newSession(g, dirs.cwd);

	const command = "echo from the terminal; pwd; touch ran.txt";
	assert.equal((await prompt(g, s, `bash: ${command}`)).stopReason, "end_turn");
	assert.deepEqual(terminals.methods(), ["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"]);
	const created = terminals.calls[0].params;
	assert.equal(created.sessionId, s);
	assert.equal(created.command, "bash");
	assert.deepEqual(created.args, ["-c", command]);
	assert.equal(created.cwd, dirs.cwd);
	assert.ok(created.outputByteLimit > 0);
	assert.ok(await exists(path.join(dirs.cwd, "ran.txt")), "the editor ran the command");

	const { after, final } = toolCall(of(g, s));
	const terminalId = terminals.calls.find((c) => c.method === "terminal/output").params.terminalId;
	const embedded = after.find((u) => u.content?.some((c) => c.type === "terminal"));
	assert.ok(embedded, "an update embeds the terminal");
	assert.deepEqual(embedded.content, [{ type: "terminal", terminalId }]);
	assert.ok(
		after.indexOf(embedded) < after.indexOf(final),
		"the terminal is shown before the command ends",
	);
	assert.equal(final.status, "completed");
	assert.deepEqual(final.content[0], { type: "terminal", terminalId }, "the final update keeps the terminal");
	assert.equal(contentText(final).trim(), `from the terminal\n${dirs.cwd}`);
	assert.equal(terminals.terms.size, 0, "released");
	assert.deepEqual(await g.stop(), { code: 0, signal: null });
});

test("a client terminal is killed and released when the prompt is cancelled", async (t) => {
	const dirs = await makeRoot(t);
	const terminals = editorTerminals(t);
	// The terminal is used with the sandbox off: ACP's default sandbox
	// runs commands in gopi, confined.
	const g = start(t, dirs, { args: ["--no-session", "--sandbox", "off"], serve: terminals.serve });
	await initialize(g, { terminal: true });
	const s = await newSession(g, dirs.cwd);

	const pending = prompt(g, s, "bash: echo started; sleep 60");
	await g.waitUpdate(
		(n) => n.sessionId === s && n.update.content?.some((c) => c.type === "terminal"),
		"the terminal in the tool call",
	);
	const term = [...terminals.terms.values()][0];
	const printed = (async () => {
		while (!term.output.toString().includes("started") && !term.exit.done) await new Promise((r) => setTimeout(r, 10));
	})();
	await bounded(printed, "the command's first line", g);
	await g.agent.notify(acp.methods.agent.session.cancel, { sessionId: s });
	assert.equal((await pending).stopReason, "cancelled");
	await bounded(term.exited, "the command's end", g);
	assert.equal(term.exit.signal, "SIGTERM", "terminal/kill ended the command");
	assert.deepEqual(terminals.methods(), [
		"terminal/create",
		"terminal/wait_for_exit",
		"$/cancel_request",
		"terminal/kill",
		"terminal/output",
		"terminal/release",
	]);
	assert.equal(terminals.terms.size, 0, "released");
	const { final } = toolCall(of(g, s));
	assert.match(contentText(final), /started/, "what it printed before the kill");
	assert.deepEqual(await g.stop(), { code: 0, signal: null });
});

test("a client-supplied stdio MCP server: the model calls its tool", async (t) => {
	const server = process.env.GOPI_MCP_TESTSERVER;
	assert.ok(server, "GOPI_MCP_TESTSERVER names the repository's MCP test server (run.sh builds it)");
	const dirs = await makeRoot(t);
	const pidFile = path.join(dirs.root, "mcp.pid");
	const g = start(t, dirs);
	await initialize(g);
	const { sessionId: s } = await g.request(acp.methods.agent.session.new, {
		cwd: dirs.cwd,
		mcpServers: [{ name: "editor-tools", command: server, args: ["-pidfile", pidFile], env: [] }],
	});

	// The tool's name has the server's with "-" as "_", as pi names it.
	assert.equal((await prompt(g, s, 'call: mcp__editor_tools__echo {"text": "hello from the editor"}')).stopReason, "end_turn");
	const { call, final } = toolCall(of(g, s));
	assert.equal(call.title, "mcp__editor_tools__echo");
	assert.deepEqual(call.rawInput, { text: "hello from the editor" });
	assert.equal(final.status, "completed");
	assert.equal(contentText(final), "echo: hello from the editor");
	assert.match(text(of(g, s), "agent_message_chunk"), /echo: hello from the editor/);

	// The server is the session's: closing the session stops it.
	const pid = Number(await readFile(pidFile, "utf8"));
	assert.ok(pid > 0);
	await g.request(acp.methods.agent.session.close, { sessionId: s });
	assert.throws(() => process.kill(pid, 0), { code: "ESRCH" }, "the server process ended with its session");
	assert.deepEqual(await g.stop(), { code: 0, signal: null });
});
