// Drives the gopi binary with pi's own published RpcClient
// (dist/modes/rpc/rpc-client.js of @mariozechner/pi-coding-agent 0.73.1 and
// of @earendil-works/pi-coding-agent 1.6.0), so real pi clients of the
// older and of today's protocol check gopi's side of it. Run through run.sh, which
// fetches the client first; directly:
//
//   GOPI_BIN=/path/to/gopi node --test rpc-client.test.mjs
//
// Every test starts its own gopi (through gopi-shim.mjs, which RpcClient
// runs as its "cli.js") in a fresh working directory with a fresh
// PI_CODING_AGENT_DIR and no API keys, so the offline faux model answers.
// faux directives used here are described in core/llm/faux/README.md.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const piVersion = process.env.PI_VERSION ?? "0.73.1";
// pi 1.5 records the system prompt and tools as a "system" message, first
// in agent_end and get_messages and counted in messageCount and
// totalMessages; the older protocol (0.73.1's client, with --full-updates)
// has none. These tests are about the conversation: conv() leaves the
// system messages out, and sys is how many the counts include.
const sys = piVersion.startsWith("0.73.") ? 0 : 1;
const conv = (messages) => messages.filter((m) => m.role !== "system");
const clientDir = process.env.PI_RPC_CLIENT_DIR ?? path.join(here, ".cache", `pi-coding-agent-${piVersion}`);
const clientFile = path.join(clientDir, "rpc-client.js");
if (!existsSync(clientFile)) {
	throw new Error(`pi's RpcClient is missing at ${clientFile}; run ${path.join(here, "fetch-client.sh")} first`);
}
const { RpcClient } = await import(pathToFileURL(clientFile).href);

const shim = path.join(here, "gopi-shim.mjs");
const gopiBin = path.resolve(process.env.GOPI_BIN ?? path.join(here, "../../../bin/gopi"));
if (!existsSync(gopiBin)) {
	throw new Error(`gopi binary not found at ${gopiBin}; build it (make build) or set GOPI_BIN`);
}

// How long a single wait for an event may take before the test fails.
const EVENT_TIMEOUT_MS = 30_000;

// The fields get_state always carries (sessionName only once it is set).
const STATE_FIELDS = [
	"model",
	"thinkingLevel",
	"isStreaming",
	"isCompacting",
	"steeringMode",
	"followUpMode",
	"sessionFile",
	"sessionId",
	"autoCompactionEnabled",
	"messageCount",
	"pendingMessageCount",
];

// The fields of a Model object.
const MODEL_FIELDS = ["id", "name", "api", "provider", "baseUrl", "reasoning", "input", "cost", "contextWindow", "maxTokens"];

/**
 * Starts gopi in RPC mode behind pi's RpcClient, in a fresh temp working
 * directory and agent directory; the test's cleanup stops it and removes both.
 */
async function start(t, { args = [], settings, models, mcp } = {}) {
	const root = await mkdtemp(path.join(tmpdir(), "gopi-node-client-"));
	const cwd = path.join(root, "work");
	const agentDir = path.join(root, "agent");
	await mkdir(cwd);
	await mkdir(agentDir);
	if (settings) await writeFile(path.join(agentDir, "settings.json"), JSON.stringify(settings));
	if (models) await writeFile(path.join(agentDir, "models.json"), JSON.stringify(models));
	if (mcp) await writeFile(path.join(agentDir, "mcp.json"), JSON.stringify({ mcpServers: mcp }));
	const client = new RpcClient({
		cliPath: shim,
		cwd,
		env: {
			GOPI_BIN: gopiBin,
			PI_CODING_AGENT_DIR: agentDir,
			GOPI_NODE: process.env.GOPI_NODE ?? "",
			GOPI_PI_PACKAGE: process.env.GOPI_PI_PACKAGE ?? "",
			ANTHROPIC_API_KEY: "",
			OPENAI_API_KEY: "",
			GEMINI_API_KEY: "",
		},
		// pi 0.73's client speaks the older protocol, whose message_update
		// carries the whole message: it asks for that wire, as the README
		// tells such clients to. pi 1.5's gets today's delta-only updates.
		args: piVersion.startsWith("0.73.") ? ["--full-updates", ...args] : args,
	});
	t.after(async () => {
		await client.stop();
		await rm(root, { recursive: true, force: true });
	});
	await client.start();
	return { client, cwd, agentDir };
}

/**
 * Serves the Anthropic Messages API on loopback, answering each request with
 * what reply(body, n) returns (n counts requests from 1): { text } streams
 * that text as the API does, { status } fails with that HTTP status. Returns
 * the models.json that declares it as provider "scripted", model "m".
 */
async function scriptedAnthropic(t, reply) {
	let n = 0;
	const server = createServer((req, res) => {
		let body = "";
		req.on("data", (chunk) => (body += chunk));
		req.on("end", () => {
			const answer = reply(JSON.parse(body), ++n);
			if (answer.status) {
				res.writeHead(answer.status, { "content-type": "application/json" });
				res.end(JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }));
				return;
			}
			res.writeHead(200, { "content-type": "text/event-stream" });
			const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
			const usage = { input_tokens: 10, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
			send("message_start", {
				message: { id: `msg_${n}`, type: "message", role: "assistant", model: "m", content: [], stop_reason: null, stop_sequence: null, usage },
			});
			send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
			send("content_block_delta", { index: 0, delta: { type: "text_delta", text: answer.text } });
			send("content_block_stop", { index: 0 });
			send("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } });
			send("message_stop", {});
			res.end();
		});
	});
	await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
	t.after(() => new Promise((resolve) => server.close(resolve)));
	const baseUrl = `http://127.0.0.1:${server.address().port}`;
	const model = { id: "m", name: "Scripted", reasoning: false, input: ["text"], contextWindow: 200000, maxTokens: 8000 };
	model.cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
	return { providers: { scripted: { baseUrl, api: "anthropic-messages", apiKey: "test-key", models: [model] } } };
}

/** Resolves with the first event matching pred (registered immediately). */
function nextEvent(client, pred, what = "event") {
	return new Promise((resolve, reject) => {
		const timer = setTimeout(() => {
			stop();
			reject(new Error(`timed out waiting for ${what}; gopi stderr:\n${client.getStderr()}`));
		}, EVENT_TIMEOUT_MS);
		const stop = client.onEvent((ev) => {
			if (pred(ev)) {
				clearTimeout(timer);
				stop();
				resolve(ev);
			}
		});
	});
}

const isTextDelta = (ev) => ev.type === "message_update" && ev.assistantMessageEvent?.type === "text_delta";

/** The text of a message's content (a string or an array of blocks). */
function textOf(message) {
	if (typeof message.content === "string") return message.content;
	return message.content
		.filter((b) => b.type === "text")
		.map((b) => b.text)
		.join("");
}

/** Answers an extension UI dialog. RpcClient has no method for this, so the
 * line goes straight to the child's stdin (`process` is private only in TS). */
function answerUI(client, id, fields) {
	client.process.stdin.write(`${JSON.stringify({ type: "extension_ui_response", id, ...fields })}\n`);
}

/**
 * Runs one of the client's methods and asserts gopi refused it with an error
 * matching pattern. RpcClient only throws for methods that return data; the
 * others (setSessionName, setAutoRetry, prompt, ...) drop a failed response,
 * so the response is taken from the client's internal send on the way.
 */
async function expectRefusal(client, call, pattern, what) {
	const responses = [];
	client.send = async function (command) {
		const response = await RpcClient.prototype.send.call(this, command);
		responses.push(response);
		return response;
	};
	let thrown;
	try {
		await call();
	} catch (err) {
		thrown = err;
	} finally {
		delete client.send;
	}
	assert.equal(responses.length, 1, `${what}: expected one response`);
	const [response] = responses;
	assert.equal(response.type, "response");
	assert.equal(response.success, false, `${what} succeeded: ${JSON.stringify(response)}`);
	assert.match(response.error, pattern, `${what}: error ${JSON.stringify(response.error)}`);
	if (thrown) assert.equal(thrown.message, response.error);
	return response;
}

/** Polls until path exists: the way to learn that a bash command has started. */
async function waitForFile(file) {
	const deadline = Date.now() + EVENT_TIMEOUT_MS;
	while (!existsSync(file)) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${file} to appear`);
		await new Promise((r) => setTimeout(r, 10));
	}
}

test("getState carries every field of the spec", async (t) => {
	const { client, agentDir } = await start(t);
	const state = await client.getState();
	for (const field of STATE_FIELDS) assert.ok(field in state, `get_state lacks ${field}`);
	for (const field of MODEL_FIELDS) assert.ok(field in state.model, `get_state model lacks ${field}`);
	assert.equal(state.model.provider, "faux");
	assert.equal(state.model.id, "faux-1");
	assert.equal(typeof state.thinkingLevel, "string");
	assert.equal(state.isStreaming, false);
	assert.equal(state.isCompacting, false);
	assert.ok(["all", "one-at-a-time"].includes(state.steeringMode));
	assert.ok(["all", "one-at-a-time"].includes(state.followUpMode));
	assert.equal(typeof state.sessionId, "string");
	assert.ok(state.sessionId.length > 0);
	assert.ok(state.sessionFile.startsWith(agentDir + path.sep), `session file ${state.sessionFile} is outside ${agentDir}`);
	assert.ok(state.sessionFile.includes(state.sessionId));
	assert.equal(typeof state.autoCompactionEnabled, "boolean");
	assert.equal(state.messageCount, 0);
	assert.equal(state.pendingMessageCount, 0);
	assert.ok(!("sessionName" in state), "sessionName must be omitted until set");
});

test("setSessionName shows in getState; an empty name is rejected", async (t) => {
	const { client } = await start(t);
	await client.setSessionName("node client run");
	assert.equal((await client.getState()).sessionName, "node client run");
	await expectRefusal(client, () => client.setSessionName(""), /empty/i, "setSessionName('')");
	assert.equal((await client.getState()).sessionName, "node client run");
});

test("prompt with a faux bash tool call streams tool and message events", async (t) => {
	const { client } = await start(t);
	const done = client.collectEvents(EVENT_TIMEOUT_MS);
	await client.prompt("bash: echo hi");
	const events = await done;
	const types = events.map((e) => e.type);

	assert.equal(types[0], "agent_start");
	// pi 0.73's client collects up to agent_end; pi 1.5's up to agent_settled,
	// which follows the run's last agent_end.
	if (types.at(-1) === "agent_settled") {
		assert.equal(types.at(-2), "agent_end");
		assert.equal(events.at(-1).aborted, false);
	} else {
		assert.equal(types.at(-1), "agent_end");
	}
	const toolStart = events.findIndex((e) => e.type === "tool_execution_start");
	const toolEnd = events.findIndex((e) => e.type === "tool_execution_end");
	const toolResult = events.findIndex((e) => e.type === "message_end" && e.message.role === "toolResult");
	assert.ok(toolStart >= 0 && toolEnd > toolStart && toolResult > toolEnd, `unexpected order: ${types.join(" ")}`);

	const startEv = events[toolStart];
	assert.equal(startEv.toolName, "bash");
	assert.deepEqual(startEv.args, { command: "echo hi" });
	const endEv = events[toolEnd];
	assert.equal(endEv.toolCallId, startEv.toolCallId);
	assert.equal(endEv.isError, false);
	assert.match(textOf(endEv.result), /^hi\n?$/);
	const resultMsg = events[toolResult].message;
	assert.equal(resultMsg.toolCallId, startEv.toolCallId);
	assert.equal(resultMsg.toolName, "bash");
	assert.equal(resultMsg.isError, false);

	const agentEnd = events.findLast((e) => e.type === "agent_end");
	assert.deepEqual(
		conv(agentEnd.messages).map((m) => m.role),
		["user", "assistant", "toolResult", "assistant"],
	);
	assert.equal(agentEnd.messages.filter((m) => m.role === "system").length, sys);
	if (sys) assert.equal(agentEnd.messages[0].role, "system");
	assert.equal(conv(agentEnd.messages)[1].stopReason, "toolUse");
	assert.equal(conv(agentEnd.messages)[3].stopReason, "stop");

	const messages = conv(await client.getMessages());
	assert.deepEqual(
		messages.map((m) => m.role),
		["user", "assistant", "toolResult", "assistant"],
	);
	assert.equal(textOf(messages[0]), "bash: echo hi");
	assert.equal(await client.getLastAssistantText(), "Tool said: hi");
	assert.equal((await client.getState()).messageCount, 4 + sys);
});

test("getSessionStats counts messages, tokens and context usage", async (t) => {
	const { client } = await start(t);
	const before = await client.getSessionStats();
	assert.equal(before.totalMessages, 0);
	assert.equal(before.tokens.total, 0);

	await client.promptAndWait("bash: echo hi", undefined, EVENT_TIMEOUT_MS);
	const stats = await client.getSessionStats();
	const state = await client.getState();
	assert.equal(stats.sessionId, state.sessionId);
	assert.equal(stats.sessionFile, state.sessionFile);
	assert.equal(stats.userMessages, 1);
	assert.equal(stats.assistantMessages, 2);
	assert.equal(stats.toolCalls, 1);
	assert.equal(stats.toolResults, 1);
	assert.equal(stats.totalMessages, 4 + sys);
	const { input, output, cacheRead, cacheWrite, total } = stats.tokens;
	assert.ok(input > 0 && output > 0, `tokens: ${JSON.stringify(stats.tokens)}`);
	assert.equal(total, input + output + cacheRead + cacheWrite);
	assert.equal(stats.cost, 0);
	assert.ok(stats.contextUsage, "contextUsage missing");
	assert.equal(stats.contextUsage.contextWindow, state.model.contextWindow);
	assert.ok(stats.contextUsage.tokens > 0);
	assert.ok(
		Math.abs(stats.contextUsage.percent - (stats.contextUsage.tokens / stats.contextUsage.contextWindow) * 100) < 1e-9,
		`percent ${stats.contextUsage.percent} does not match ${stats.contextUsage.tokens}/${stats.contextUsage.contextWindow}`,
	);
});

test("steer and followUp during a streaming reply land in order", async (t) => {
	const { client } = await start(t);
	const firstDelta = nextEvent(client, isTextDelta, "the first text delta");
	const done = client.collectEvents(60_000);
	// faux-1 pauses 25 ms between numbers: three seconds of streaming.
	await client.prompt("stream: 120");
	await firstDelta;

	await client.steer("reply: steered");
	await client.followUp("reply: followed up");
	// A prompt without streamingBehavior is refused while the agent runs.
	await expectRefusal(client, () => client.prompt("reply: too early"), /already processing/, "prompt while streaming");
	const busy = await client.getState();
	assert.equal(busy.isStreaming, true);
	assert.equal(busy.pendingMessageCount, 2);

	const events = await done;
	assert.equal(events.filter((e) => e.type === "agent_end").length, 1);
	const messages = conv(await client.getMessages());
	assert.deepEqual(
		messages.map((m) => [m.role, textOf(m)]),
		[
			["user", "stream: 120"],
			["assistant", Array.from({ length: 120 }, (_, i) => i + 1).join(" ")],
			["user", "reply: steered"],
			["assistant", "steered"],
			["user", "reply: followed up"],
			["assistant", "followed up"],
		],
	);
	const state = await client.getState();
	assert.equal(state.isStreaming, false);
	assert.equal(state.pendingMessageCount, 0);
});

test("abort mid-stream ends the reply as aborted", async (t) => {
	const { client } = await start(t);
	const firstDelta = nextEvent(client, isTextDelta, "the first text delta");
	const done = client.collectEvents(EVENT_TIMEOUT_MS);
	await client.prompt("stream: 10000");
	await firstDelta;
	await client.abort();
	const events = await done;

	const end = events.findLast((e) => e.type === "agent_end");
	const last = end.messages.at(-1);
	if (events.at(-1).type === "agent_settled") assert.equal(events.at(-1).aborted, true);
	assert.equal(last.role, "assistant");
	assert.equal(last.stopReason, "aborted");
	assert.ok(!textOf(last).endsWith("10000"), "the stream ran to its end");
	const messages = conv(await client.getMessages());
	assert.equal(messages.at(-1).stopReason, "aborted");
	assert.equal((await client.getState()).isStreaming, false);
});

test("bash runs for the user and abortBash cancels a running command", async (t) => {
	const { client, cwd } = await start(t);
	const ok = await client.bash("echo hi");
	assert.deepEqual(
		{ output: ok.output, exitCode: ok.exitCode, cancelled: ok.cancelled, truncated: ok.truncated },
		{ output: "hi\n", exitCode: 0, cancelled: false, truncated: false },
	);

	// The marker tells us the command runs, so the abort cannot come too early.
	const marker = path.join(cwd, "bash-started");
	const running = client.bash("touch bash-started && sleep 30");
	await waitForFile(marker);
	await client.abortBash();
	const cancelled = await running;
	assert.equal(cancelled.cancelled, true);

	const messages = conv(await client.getMessages());
	const runs = messages.filter((m) => m.role === "bashExecution");
	assert.deepEqual(
		runs.map((m) => [m.command, m.cancelled]),
		[
			["echo hi", false],
			["touch bash-started && sleep 30", true],
		],
	);
});

// RpcClient writes abort_bash right behind bash without waiting; gopi
// registers a bash command as it reads it, so the abort always finds it.
test(
	"abortBash sent right after bash cancels it",
	async (t) => {
		const { client } = await start(t);
		const running = client.bash("sleep 2");
		await client.abortBash();
		const res = await running;
		assert.equal(res.cancelled, true);
	},
);

test("models: getAvailableModels, setModel, cycleModel", async (t) => {
	const { client } = await start(t);
	const models = await client.getAvailableModels();
	const ids = models.map((m) => `${m.provider}/${m.id}`);
	assert.ok(ids.includes("faux/faux-1") && ids.includes("faux/faux-fast"), `models: ${ids}`);
	for (const m of models) for (const field of MODEL_FIELDS) assert.ok(field in m, `${m.id} lacks ${field}`);

	const fast = await client.setModel("faux", "faux-fast");
	assert.equal(fast.id, "faux-fast");
	assert.equal(fast.provider, "faux");
	assert.equal(fast.reasoning, false);
	assert.equal((await client.getState()).model.id, "faux-fast");
	await expectRefusal(client, () => client.setModel("x", "y"), /^Model not found: x\/y$/, "setModel(x, y)");
	await assert.rejects(client.setModel("x", "y"), /Model not found: x\/y/);
	assert.equal((await client.getState()).model.id, "faux-fast");

	// Cycling through every available model comes back to the start.
	const seen = [];
	for (let i = 0; i < models.length; i++) {
		const r = await client.cycleModel();
		assert.ok(r, "cycleModel returned null with several models");
		assert.equal(typeof r.thinkingLevel, "string");
		assert.equal(r.isScoped, false);
		seen.push(`${r.model.provider}/${r.model.id}`);
	}
	assert.notEqual(seen[0], "faux/faux-fast");
	assert.equal(seen.at(-1), "faux/faux-fast");
	assert.equal(new Set(seen).size, models.length);
	assert.equal((await client.getState()).model.id, "faux-fast");
});

test("thinking: setThinkingLevel, cycleThinkingLevel; none on faux-fast", async (t) => {
	const { client } = await start(t);
	await client.setThinkingLevel("low");
	assert.equal((await client.getState()).thinkingLevel, "low");
	assert.deepEqual(await client.cycleThinkingLevel(), { level: "medium" });
	assert.equal((await client.getState()).thinkingLevel, "medium");

	await client.setModel("faux", "faux-fast");
	assert.equal(await client.cycleThinkingLevel(), null);
	assert.equal((await client.getState()).thinkingLevel, "off");
});

// gopi's own mcp_server_state events (issue 29) reach pi's client as events
// it does not know: it hands them on and goes on. Two MCP servers fail, one
// at once (heard at the first command) and one a second later, during a
// prompt; neither stops gopi.
test("gopi's mcp_server_state events pass through pi's RpcClient, which goes on", async (t) => {
	const { client } = await start(t, {
		mcp: {
			broken: { command: "sh", args: ["-c", "echo cannot start >&2; exit 3"] },
			garbage: { command: "sh", args: ["-c", "sleep 1; echo not JSON-RPC; sleep 30"] },
		},
	});
	const states = [];
	client.onEvent((e) => e.type === "mcp_server_state" && states.push(e.server));
	const garbage = nextEvent(client, (e) => e.type === "mcp_server_state" && e.server.name === "garbage", "garbage's failure");
	assert.equal((await client.getState()).model.provider, "faux");
	await client.promptAndWait("reply: still here", undefined, EVENT_TIMEOUT_MS);
	assert.equal(await client.getLastAssistantText(), "still here");
	const g = (await garbage).server;
	assert.equal(g.state, "failed");
	assert.match(g.error, /connecting/);
	const broken = states.find((s) => s.name === "broken");
	assert.equal(broken?.state, "failed", JSON.stringify(states));
	assert.match(broken.error, /cannot start/);
	await client.promptAndWait("reply: and after", undefined, EVENT_TIMEOUT_MS);
	assert.equal(await client.getLastAssistantText(), "and after");
});

test("getMessages, getLastAssistantText and getForkMessages follow the conversation", async (t) => {
	const { client } = await start(t);
	assert.deepEqual(await client.getMessages(), []);
	assert.equal(await client.getLastAssistantText(), null);
	assert.deepEqual(await client.getForkMessages(), []);

	await client.promptAndWait("reply: first answer", undefined, EVENT_TIMEOUT_MS);
	await client.promptAndWait("reply: second answer", undefined, EVENT_TIMEOUT_MS);
	assert.equal(await client.getLastAssistantText(), "second answer");
	const messages = conv(await client.getMessages());
	assert.deepEqual(
		messages.map((m) => [m.role, textOf(m)]),
		[
			["user", "reply: first answer"],
			["assistant", "first answer"],
			["user", "reply: second answer"],
			["assistant", "second answer"],
		],
	);
	const forks = await client.getForkMessages();
	assert.deepEqual(
		forks.map((f) => f.text),
		["reply: first answer", "reply: second answer"],
	);
	for (const f of forks) assert.ok(typeof f.entryId === "string" && f.entryId.length > 0);
	assert.notEqual(forks[0].entryId, forks[1].entryId);
});

test("getCommands returns the command list", async (t) => {
	const { client } = await start(t);
	const commands = await client.getCommands();
	assert.ok(Array.isArray(commands));
	for (const c of commands) {
		assert.equal(typeof c.name, "string");
		assert.ok(["extension", "prompt", "skill"].includes(c.source), `source ${c.source}`);
	}
});

test("newSession starts an empty session", async (t) => {
	const { client } = await start(t);
	await client.promptAndWait("reply: hello", undefined, EVENT_TIMEOUT_MS);
	const old = await client.getState();
	assert.equal(old.messageCount, 2 + sys);

	assert.deepEqual(await client.newSession(), { cancelled: false });
	const state = await client.getState();
	assert.notEqual(state.sessionId, old.sessionId);
	assert.notEqual(state.sessionFile, old.sessionFile);
	assert.equal(state.messageCount, 0);
	assert.deepEqual(await client.getMessages(), []);
	assert.equal(await client.getLastAssistantText(), null);
});

test("setSteeringMode and setFollowUpMode show in getState", async (t) => {
	const { client } = await start(t);
	await client.setSteeringMode("all");
	await client.setFollowUpMode("all");
	let state = await client.getState();
	assert.equal(state.steeringMode, "all");
	assert.equal(state.followUpMode, "all");
	await client.setSteeringMode("one-at-a-time");
	await client.setFollowUpMode("one-at-a-time");
	state = await client.getState();
	assert.equal(state.steeringMode, "one-at-a-time");
	assert.equal(state.followUpMode, "one-at-a-time");
	await expectRefusal(client, () => client.setSteeringMode("sometimes"), /mode/, "setSteeringMode(sometimes)");
	await expectRefusal(client, () => client.setFollowUpMode("sometimes"), /mode/, "setFollowUpMode(sometimes)");
	assert.equal((await client.getState()).steeringMode, "one-at-a-time");
});

test("context and session commands: retry, compaction, export, fork, switch", async (t) => {
	const { client, cwd } = await start(t);
	await client.setAutoRetry(true);
	await client.abortRetry();
	await client.setAutoCompaction(false);
	assert.equal((await client.getState()).autoCompactionEnabled, false);
	await expectRefusal(client, () => client.compact(), /Nothing to compact/, "compact on an empty session");

	await client.promptAndWait("reply: first answer", undefined, EVENT_TIMEOUT_MS);
	await client.promptAndWait("reply: second answer", undefined, EVENT_TIMEOUT_MS);
	const first = await client.getState();
	assert.equal(first.messageCount, 4 + sys);

	const out = path.join(cwd, "session.html");
	const exported = await client.exportHtml(out);
	assert.equal(exported.path, out);
	const html = readFileSync(out, "utf8");
	assert.match(html, /second answer/);

	const messages = await client.getForkMessages();
	assert.equal(messages.length, 2);
	const forked = await client.fork(messages[1].entryId);
	assert.equal(forked.cancelled, false);
	assert.equal(forked.text, "reply: second answer");
	const afterFork = await client.getState();
	assert.equal(afterFork.messageCount, 2 + sys, "the fork holds what came before the chosen message");
	assert.notEqual(afterFork.sessionFile, first.sessionFile);

	const back = await client.switchSession(first.sessionFile);
	assert.equal(back.cancelled, false);
	const restored = await client.getState();
	assert.equal(restored.sessionFile, first.sessionFile);
	assert.equal(restored.messageCount, 4 + sys);
});

/**
 * Prompts a faux write under --approval writes, answering every approval
 * question with answer; returns the run's events and the questions asked.
 */
async function promptWithApproval(client, message, answer) {
	const requests = [];
	const stop = client.onEvent((ev) => {
		if (ev.type === "extension_ui_request" && ev.method === "select") {
			requests.push(ev);
			answerUI(client, ev.id, { value: answer });
		}
	});
	try {
		const events = await client.promptAndWait(message, undefined, EVENT_TIMEOUT_MS);
		return { events, requests };
	} finally {
		stop();
	}
}

function toolOutcome(events) {
	const end = events.find((e) => e.type === "tool_execution_end");
	const result = events.find((e) => e.type === "message_end" && e.message.role === "toolResult");
	assert.ok(end && result, "no tool ran");
	return { end, result: result.message };
}

function assertApprovalRequest(req) {
	assert.equal(req.method, "select");
	assert.equal(typeof req.id, "string");
	assert.deepEqual(req.options, ["Allow", "Allow always", "Deny"]);
	assert.match(req.title, /out\.txt/);
	assert.equal(req.details.toolName, "write");
	assert.match(req.details.diff, /^\+hello$/m);
}

test("approval gate: Deny leaves no file and fails the tool call", async (t) => {
	const { client, cwd } = await start(t, { args: ["--approval", "writes"] });
	const { events, requests } = await promptWithApproval(client, "write: out.txt :: hello", "Deny");
	assert.equal(requests.length, 1);
	assertApprovalRequest(requests[0]);
	assert.ok(!existsSync(path.join(cwd, "out.txt")), "denied write created the file");
	const { end, result } = toolOutcome(events);
	assert.equal(end.isError, true);
	assert.equal(result.isError, true);
	assert.match(textOf(result), /denied/i);
});

test("approval gate: Allow writes the file", async (t) => {
	const { client, cwd } = await start(t, { args: ["--approval", "writes"] });
	const { events, requests } = await promptWithApproval(client, "write: out.txt :: hello", "Allow");
	assert.equal(requests.length, 1);
	assertApprovalRequest(requests[0]);
	assert.equal(await readFile(path.join(cwd, "out.txt"), "utf8"), "hello");
	const { end, result } = toolOutcome(events);
	assert.equal(end.isError, false);
	assert.equal(result.isError, false);
});

test("approval gate: Allow always stops asking for that tool", async (t) => {
	const { client, cwd } = await start(t, { args: ["--approval", "writes"] });
	const first = await promptWithApproval(client, "write: out.txt :: hello", "Allow always");
	assert.equal(first.requests.length, 1);
	const second = await promptWithApproval(client, "write: again.txt :: again", "Deny");
	assert.equal(second.requests.length, 0, "asked again after Allow always");
	assert.equal(await readFile(path.join(cwd, "out.txt"), "utf8"), "hello");
	assert.equal(await readFile(path.join(cwd, "again.txt"), "utf8"), "again");
});

test(
	"pi 1.5: system message, queues, entries, tree, thinking levels, bash updates and state events",
	{ skip: sys === 0 && "pi 0.73.1's client has none of these commands" },
	async (t) => {
		const { client } = await start(t);
		const events = [];
		client.onEvent((e) => events.push(e));

		assert.deepEqual(await client.getAvailableThinkingLevels(), ["off", "minimal", "low", "medium", "high"]);
		await client.setThinkingLevel("low");
		await client.setSessionName("pi 1.5 check");

		// A reply that streams long enough to queue a follow-up behind it.
		await client.prompt("stream: 40");
		await nextEvent(client, isTextDelta, "a text delta");
		// queue_update comes before follow_up's answer: listen first.
		const queuedEvent = nextEvent(client, (e) => e.type === "queue_update", "queue_update");
		await client.followUp("reply: later");
		const queued = await queuedEvent;
		assert.deepEqual(queued.followUp, ["reply: later"]);
		const cleared = await client.clearQueue();
		assert.deepEqual(cleared.followUp, ["reply: later"], "clear_queue returns what it took");
		await nextEvent(client, (e) => e.type === "agent_settled", "agent_settled");

		// bash streams its output with the command's id.
		const out = await client.bash("printf 'a\\nb\\n'");
		assert.equal(out.output, "a\nb\n");
		const updates = events.filter((e) => e.type === "bash_execution_update");
		assert.ok(updates.length > 0, "no bash_execution_update");
		assert.equal(updates.map((e) => e.delta).join(""), "a\nb\n");

		// A refused compact still tells its start and end.
		await expectRefusal(client, () => client.compact(), /Nothing to compact/, "compact of a short session");
		assert.ok(events.some((e) => e.type === "compaction_start" && e.reason === "manual"));
		assert.ok(events.some((e) => e.type === "compaction_end" && e.reason === "manual" && e.willRetry === false));

		// State events.
		assert.ok(events.some((e) => e.type === "thinking_level_changed" && e.level === "low"));
		assert.ok(events.some((e) => e.type === "session_info_changed" && e.name === "pi 1.5 check"));
		const update = events.find(isTextDelta);
		assert.ok(update.usage, "a delta-only message_update carries usage");
		assert.equal(update.message, undefined, "and not the message");

		// The transcript starts with the system message; entries and tree agree.
		const messages = await client.getMessages();
		assert.equal(messages[0].role, "system");
		assert.ok(messages[0].sections.preamble, "the system message has the preamble section");
		assert.ok(messages[0].toolsAdded.some((tool) => tool.name === "bash"));
		const { entries, leafId } = await client.getEntries();
		assert.ok(entries.length >= messages.length);
		assert.equal(entries.at(-1).id, leafId);
		const later = await client.getEntries(entries[1].id);
		assert.equal(later.entries.length, entries.length - 2, "since returns what follows the cursor");
		await assert.rejects(client.getEntries("no-such-entry"), /Entry not found/);
		const tree = await client.getTree();
		assert.equal(tree.leafId, leafId);
		assert.equal(tree.tree.length, 1);
	},
);

test(
	"pi 1.5: automatic compaction at the threshold, as compaction_start/compaction_end with reason threshold",
	{ skip: sys === 0 && "pi 0.73.1's client knows auto_compaction_* events only" },
	async (t) => {
		// faux's window is 128,000 tokens: keeping all but 10 free makes any reply cross the threshold.
		const { client } = await start(t, { settings: { compaction: { enabled: true, reserveTokens: 127990, keepRecentTokens: 10 } } });
		const events = [];
		client.onEvent((e) => events.push(e));
		await client.prompt("reply: a first answer that is long enough to count");
		await nextEvent(client, (e) => e.type === "agent_settled", "agent_settled");
		await client.prompt("reply: a second answer, after which the context is over the threshold");
		const end = await nextEvent(client, (e) => e.type === "compaction_end", "compaction_end");
		const start_ = events.find((e) => e.type === "compaction_start");
		assert.ok(start_, "compaction_start came first");
		assert.equal(start_.reason, "threshold");
		assert.equal(end.reason, "threshold");
		assert.equal(end.aborted, false);
		assert.ok(end.result?.summary, "the summary is in the result");
		const messages = await client.getMessages();
		assert.ok(messages.some((m) => m.role === "compactionSummary"), "the context starts from the summary");
	},
);

test(
	"pi 1.5: a summary request that fails with 529 is retried, as summarization_retry_* events",
	{ skip: sys === 0 && "pi 0.73.1's client knows auto_compaction_* events only" },
	async (t) => {
		// The provider is an Anthropic-compatible server of the test's own:
		// faux cannot fail a summary request. Its first summary request
		// (the one holding the conversation) is refused with 529.
		let failed = false;
		const models = await scriptedAnthropic(t, (body) => {
			const asked = JSON.stringify(body.messages);
			if (asked.includes("<conversation>")) {
				if (!failed) {
					failed = true;
					return { status: 529 };
				}
				return { text: "The summary." };
			}
			return { text: `answer ${"x ".repeat(60)}` };
		});
		const { client } = await start(t, {
			args: ["--provider", "scripted", "--model", "m"],
			models,
			settings: { compaction: { keepRecentTokens: 10 }, retry: { baseDelayMs: 5, maxRetries: 2 } },
		});
		const events = [];
		client.onEvent((e) => events.push(e));
		await client.promptAndWait(`one ${"z ".repeat(100)}`);
		await client.promptAndWait(`two ${"y ".repeat(100)}`);
		const result = await client.compact("keep the numbers");
		assert.equal(result.summary.split("\n")[0], "The summary.");
		const names = events.filter((e) => /^(summarization_retry|compaction_)/.test(e.type)).map((e) => e.type);
		assert.deepEqual(names, [
			"compaction_start",
			"summarization_retry_scheduled",
			"summarization_retry_attempt_start",
			"summarization_retry_finished",
			"compaction_end",
		]);
		const scheduled = events.find((e) => e.type === "summarization_retry_scheduled");
		assert.equal(scheduled.attempt, 1);
		assert.equal(scheduled.maxAttempts, 2);
		assert.equal(scheduled.delayMs, 5);
		assert.match(scheduled.errorMessage, /529|Overloaded/);
		const attempt = events.find((e) => e.type === "summarization_retry_attempt_start");
		assert.equal(attempt.source, "compaction");
		assert.equal(attempt.reason, "manual");
	},
);

// pi's own extensions under gopi (issue 14), through pi's RpcClient: the
// permission gate's dialog and the command of pirate.ts. They need the
// extension host's runtime: GOPI_NODE (Node 22), GOPI_PI_PACKAGE (pi
// 1.6.0's package) and GOPI_PI_EXAMPLES (pi 0.73.1's examples/extensions);
// make test-node sets them.
const extEnv = ["GOPI_NODE", "GOPI_PI_PACKAGE", "GOPI_PI_EXAMPLES"].every((k) => process.env[k]);
test("pi extensions: a dialog from tool_call, and an extension command", { skip: !extEnv && "GOPI_NODE, GOPI_PI_PACKAGE and GOPI_PI_EXAMPLES are not set" }, async (t) => {
	const examples = process.env.GOPI_PI_EXAMPLES;
	const { client, cwd } = await start(t, {
		args: ["-e", path.join(examples, "permission-gate.ts"), "-e", path.join(examples, "pirate.ts")],
	});
	await mkdir(path.join(cwd, "build"));

	const commands = await client.getCommands();
	const pirate = commands.find((c) => c.name === "pirate");
	assert.equal(pirate?.source, "extension");

	const { events, requests } = await promptWithApproval(client, "bash: rm -rf build", "No");
	assert.equal(requests.length, 1);
	assert.match(requests[0].title, /rm -rf build/);
	assert.deepEqual(requests[0].options, ["Yes", "No"]);
	const { end } = toolOutcome(events);
	assert.equal(end.isError, true);
	assert.match(textOf(end.result), /Blocked by user/);
	assert.ok(existsSync(path.join(cwd, "build")), "the blocked command did not run");

	const notified = nextEvent(client, (ev) => ev.type === "extension_ui_request" && ev.method === "notify", "the pirate notification");
	await client.prompt("/pirate");
	assert.match((await notified).message, /Pirate mode enabled/);
});

/** Resolves with the next extension notification whose message matches re. */
const notifyMatching = (client, re, what) =>
	nextEvent(client, (ev) => ev.type === "extension_ui_request" && ev.method === "notify" && re.test(ev.message), what);

/** Answers every dialog of method with fields while f runs. */
async function answering(client, method, fields, f) {
	const seen = [];
	const stop = client.onEvent((ev) => {
		if (ev.type === "extension_ui_request" && ev.method === method) {
			seen.push(ev);
			answerUI(client, ev.id, fields);
		}
	});
	try {
		await f();
	} finally {
		stop();
	}
	return seen;
}

const example = (name) => path.join(process.env.GOPI_PI_EXAMPLES ?? "", name);
const extTest = (name, f) => test(`pi extensions: ${name}`, { skip: !extEnv && "GOPI_NODE, GOPI_PI_PACKAGE and GOPI_PI_EXAMPLES are not set" }, f);

extTest("protected-paths blocks a write to .env", async (t) => {
	const { client, cwd } = await start(t, { args: ["-e", example("protected-paths.ts")] });
	const notified = notifyMatching(client, /Blocked write to protected path: \.env/, "the notify");
	const events = await client.promptAndWait("write: .env :: SECRET=1", undefined, EVENT_TIMEOUT_MS);
	await notified;
	const { end } = toolOutcome(events);
	assert.equal(end.isError, true);
	assert.match(textOf(end.result), /Path "\.env" is protected/);
	assert.ok(!existsSync(path.join(cwd, ".env")));
});

extTest("input-transform answers ping without the model; session-name names the session", async (t) => {
	const { client } = await start(t, { args: ["-e", example("input-transform.ts"), "-e", example("session-name.ts")] });
	const pong = notifyMatching(client, /^pong$/, "pong");
	await client.prompt("ping");
	await pong;
	const named = notifyMatching(client, /Session named: Voyage/, "the session name notify");
	await client.prompt("/session-name Voyage");
	await named;
	assert.equal((await client.getState()).sessionName, "Voyage");
});

extTest("send-user-message's /ask starts a turn with the text", async (t) => {
	const { client } = await start(t, { args: ["-e", example("send-user-message.ts")] });
	const ended = nextEvent(client, (ev) => ev.type === "message_end" && ev.message.role === "assistant", "the reply");
	await client.prompt("/ask reply: aye");
	assert.equal(textOf((await ended).message), "aye");
});

extTest("bookmark, event-bus and model-status", async (t) => {
	const { client } = await start(t, {
		args: ["-e", example("bookmark.ts"), "-e", example("event-bus.ts"), "-e", example("model-status.ts")],
	});
	await client.promptAndWait("reply: keep this", undefined, EVENT_TIMEOUT_MS);
	const marked = notifyMatching(client, /Bookmarked as: best/, "the bookmark");
	await client.prompt("/bookmark best");
	await marked;
	const removed = notifyMatching(client, /Removed bookmark: best/, "the label read back");
	await client.prompt("/unbookmark");
	await removed;
	const bus = notifyMatching(client, /Event from \/emit command: hello/, "the event bus");
	await client.prompt("/emit hello");
	await bus;
	const model = notifyMatching(client, /Model: faux\/faux-fast/, "model_select");
	await client.setModel("faux", "faux-fast");
	await model;
});

extTest("confirm-destructive cancels new_session when the user says no", async (t) => {
	const { client } = await start(t, { args: ["-e", example("confirm-destructive.ts")] });
	await client.promptAndWait("reply: hello", undefined, EVENT_TIMEOUT_MS);
	let result;
	const asked = await answering(client, "confirm", { confirmed: false }, async () => {
		result = await client.newSession();
	});
	assert.equal(asked.length, 1);
	assert.equal(asked[0].title, "Clear session?");
	assert.equal(result.cancelled, true);
	assert.ok((await client.getState()).messageCount >= 2, "the session was kept");
});

extTest("rpc-demo's input and editor dialogs reach the extension", async (t) => {
	const { client } = await start(t, { args: ["-e", example("rpc-demo.ts")] });
	const entered = notifyMatching(client, /You entered: 42/, "the input's answer");
	await answering(client, "input", { value: "42" }, async () => {
		await client.prompt("/rpc-input");
		await entered;
	});
	const edited = notifyMatching(client, /Editor submitted \(2 lines\)/, "the editor's answer");
	await answering(client, "editor", { value: "one\ntwo" }, async () => {
		await client.prompt("/rpc-editor");
		await edited;
	});
});

extTest("shutdown-command's /quit ends the agent", async (t) => {
	const { client } = await start(t, { args: ["-e", example("shutdown-command.ts")] });
	const exited = new Promise((resolve) => client.process.on("exit", (code) => resolve(code)));
	await client.prompt("/quit");
	assert.equal(await exited, 0);
});
