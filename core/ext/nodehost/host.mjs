// gopi's extension host: a Node process that loads pi extensions and runs
// their handlers for gopi.
//
// gopi starts it as `node host.mjs PI_PACKAGE_DIR` with two extra pipes:
// fd 3 carries gopi's messages in, fd 4 carries ours out. Both are JSON-RPC
// 2.0, one message per line, with requests in both directions. A second
// pair, fd 5 out and fd 6 in, carries the few requests pi's API must have
// answered before it returns (requestSync). Our stdout and stderr go to
// gopi's log, so an extension's console.log never reaches gopi's client.
//
// Loading and the hook semantics are pi's own: extensions are loaded by the
// loader of the pi package gopi points us at (jiti, with pi's package names
// aliased to that package), and events run through pi's ExtensionRunner.
// What pi's AgentSession would do for the runner (send messages, switch
// sessions, ask the user) becomes a request or notification to gopi. The
// state extensions read synchronously (ctx.model, ctx.sessionManager,
// isIdle, ...) is a local copy that gopi keeps current with "state"
// notifications, sent before any request that could read it.
//
// The pipe's method names come from methods.gen.mjs, generated from gopi's
// core/ext/protocol.go, which types their params and results too: a
// method is added there first (docs/architecture.md, "The extension
// protocol").

import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
// The pipe's method names, generated from gopi's core/ext/protocol.go.
import { gopi, served, stateFields } from "./methods.gen.mjs";

const piDir = process.argv[2];
if (!piDir) {
	process.stderr.write("gopi extension host: the pi package directory is missing from the command line\n");
	process.exit(2);
}
const piModule = (rel) => import(pathToFileURL(path.join(piDir, rel)).href);

// ---- pi 1.5's API on an older loader ----------------------------------------
//
// pi 1.5 gives extensions calls that the pi package we load may not have
// (0.87.1 lacks getSettings, registerToolRenderer, the virtual-model and
// MCP calls; gopi's tests load 1.6.0, a user's may be older). pi's loader
// builds each extension's API object itself, so we reach it where the
// loader gets the extension's factory: its jiti loader module is swapped
// for one whose import wraps the factory, which adds the missing calls to
// the API object before the extension sees it.
//
// The hook is in-thread (module.registerHooks) and set only once pi's own
// modules are loaded (installCallHook, before the first extension loads):
// an off-thread hook from module.register, set at start, made every one of
// pi's module loads cross threads and the host's start 0.7 s slower.
const jitiWrapper = (url) => `
import { createJiti as create } from ${JSON.stringify(`${url}?gopi-original`)};
export function createJiti(...args) {
	const jiti = create(...args);
	const load = jiti.import.bind(jiti);
	jiti.import = async (...a) => {
		const m = await load(...a);
		return typeof m === "function" && globalThis.__gopiWrapFactory ? globalThis.__gopiWrapFactory(m, a[0]) : m;
	};
	return jiti;
}`;
let callHook = false;
async function installCallHook() {
	if (callHook) return;
	callHook = true;
	const { registerHooks } = await import("node:module");
	if (typeof registerHooks !== "function") {
		process.stderr.write("pi 1.5's extra extension calls need Node 22.15 or later\n");
		return;
	}
	registerHooks({
		load(url, context, nextLoad) {
			if (url.endsWith("/dist/core/extensions/jiti-loader.js")) {
				return { format: "module", shortCircuit: true, source: jitiWrapper(url) };
			}
			return nextLoad(url, context);
		},
	});
}
globalThis.__gopiWrapFactory = (factory, extensionPath) => (api) =>
	loadingMcp(extensionPath, () => factory(withPi15Calls(api, extensionPath)));

function unavailable(what) {
	return () => {
		throw new Error(`${what} is not available in gopi`);
	};
}

// withPi15Calls adds to api what pi 1.5 has and it lacks. Virtual models
// gopi has none of: pi 1.5's own calls queue one registered while loading
// and bindCore's registerVirtualModel refuses it (an extension error, the
// extension loads, as pi reports a model it cannot register). The MCP
// calls are ours even where the loaded pi has them: the servers must
// reach gopi, which connects them (see "MCP servers" below).
function withPi15Calls(api, extensionPath) {
	const add = (name, fn) => {
		if (!(name in api)) api[name] = fn;
	};
	reportBusErrors(api.events, extensionPath);
	// Drawing only: nothing to draw in RPC mode, as for the other renderers.
	add("registerToolRenderer", () => {});
	add("getSettings", settingsCopy);
	add("registerVirtualModel", unavailable("pi.registerVirtualModel (virtual models)"));
	add("unregisterVirtualModel", unavailable("pi.unregisterVirtualModel (virtual models)"));
	api.registerMcpServer = (name, config) => registerMcpServer(extensionPath, name, config);
	api.unregisterMcpServer = (name) => unregisterMcpServer(extensionPath, name);
	api.getMcpServers = mcpServerList;
	return api;
}

// reportBusErrors makes an exception in the extension's pi.events handler
// an extension_error (pi 1.6; pi 1.5's bus only logs it), its event the
// channel's name. The other handlers and the emitter go on, as in pi.
function reportBusErrors(events, extensionPath) {
	if (typeof events?.on !== "function") return;
	const on = events.on.bind(events);
	events.on = (channel, handler) =>
		on(channel, async (data) => {
			try {
				await handler(data);
			} catch (err) {
				notify(gopi.error, {
					extensionPath: extensionPath ?? "<extension>",
					event: String(channel),
					error: err instanceof Error ? err.message : String(err),
					stack: err instanceof Error ? err.stack : undefined,
				});
			}
		});
}

// The merged settings, a copy the extension may change.
const settingsCopy = () => structuredClone(state.settings ?? {});

// ---- MCP servers extensions register (pi 1.5) ------------------------------
//
// Kept as pi's runtime keeps them (its McpServerRegistry and loader): in
// registration order; a name is the extension's that registered it, and
// one that differs only in "-" and "_" clashes; what an extension
// registers while it loads takes effect once it has loaded (nothing, if
// it fails to); later changes at once, each firing mcp_servers_change
// with the whole list. gopi checks each config first (validateMcpServer,
// so a bad one throws gopi's message), and reads the list from our
// registrations: it connects the servers beside mcp.json's.

const mcpServers = new Map(); // name -> { name, config, extensionPath }
const mcpLoading = new Map(); // extension path -> changes held until it has loaded
let mcpBound = false; // initialize has bound the runner: changes are announced

// Copies of the registered servers, as pi.getMcpServers() gives them.
const mcpServerList = () => [...mcpServers.values()].map((s) => ({ ...s, config: structuredClone(s.config) }));

// loadingMcp runs an extension's factory: the MCP changes it makes are
// applied once it has finished, and dropped if it fails, as pi commits an
// extension's registrations.
function loadingMcp(extensionPath, run) {
	const held = [];
	mcpLoading.set(extensionPath, held);
	const end = (loaded) => {
		mcpLoading.delete(extensionPath);
		if (loaded) for (const change of held) change();
	};
	let result;
	try {
		result = run();
	} catch (err) {
		end(false);
		throw err;
	}
	return Promise.resolve(result).then(
		(value) => {
			end(true);
			return value;
		},
		(err) => {
			end(false);
			throw err;
		},
	);
}

function mcpChange(extensionPath, change) {
	const held = mcpLoading.get(extensionPath);
	if (held) held.push(change);
	else change();
}

// mcpChanged tells gopi and the extensions, once initialize has bound the
// runner (what changed before, gopi reads from initialize's answer).
function mcpChanged() {
	if (!mcpBound) return;
	notify(gopi.registrations, registrations());
	void runner.emit({ type: "mcp_servers_change", servers: mcpServerList() });
}

function registerMcpServer(extensionPath, name, config) {
	const plain = JSON.parse(JSON.stringify(config ?? null));
	let checked;
	try {
		checked = requestSync(gopi.validateMcpServer, { name, config: plain, extensionPath });
	} catch {
		// No answer (gopi is not serving us yet: the extension loads for
		// project_trust): gopi checks it when it reads the list.
		checked = { config: plain };
	}
	if (checked?.error) throw new Error(checked.error);
	const owner = mcpServers.get(name)?.extensionPath;
	if (owner !== undefined && owner !== extensionPath) {
		throw new Error(`MCP server "${name}" is already registered by extension "${owner}"`);
	}
	// core/mcp's Namespace: mcp__<name> with "-" as "_".
	const namespace = (n) => String(n).replaceAll("-", "_");
	const clash = [...mcpServers.keys()].find((n) => n !== name && namespace(n) === namespace(name));
	if (clash !== undefined) throw new Error(`MCP server "${name}" conflicts with registered server "${clash}"`);
	const server = { name, config: checked.config, extensionPath };
	mcpChange(extensionPath, () => {
		mcpServers.set(name, server);
		mcpChanged();
	});
}

function unregisterMcpServer(extensionPath, name) {
	mcpChange(extensionPath, () => {
		if (mcpServers.get(name)?.extensionPath !== extensionPath) return;
		mcpServers.delete(name);
		mcpChanged();
	});
}

// ---- the pipe -------------------------------------------------------------

const out = fs.createWriteStream(null, { fd: 4 });
out.on("error", () => process.exit(0)); // gopi is gone
function send(msg) {
	const line = JSON.stringify(msg);
	if (process.env.GOPI_EXT_DEBUG) process.stderr.write(`-> ${line.slice(0, 300)}\n`);
	out.write(`${line}\n`);
}
function notify(method, params) {
	send({ jsonrpc: "2.0", method, params });
}
let nextId = 1;
const waiting = new Map(); // our request id -> {resolve, reject}
function request(method, params) {
	const id = nextId++;
	return new Promise((resolve, reject) => {
		waiting.set(id, { resolve, reject });
		send({ jsonrpc: "2.0", id, method, params });
	});
}

// requestSync makes a sync request (fds 5 and 6): the thread waits for
// gopi's answer, so pi's synchronous calls can answer, or throw, at once.
const syncChunk = Buffer.alloc(64 * 1024);
let syncBuffered = Buffer.alloc(0);
function requestSync(method, params) {
	const id = nextId++;
	const line = JSON.stringify({ jsonrpc: "2.0", id, method, params });
	if (process.env.GOPI_EXT_DEBUG) process.stderr.write(`=> ${line.slice(0, 300)}\n`);
	const out = Buffer.from(`${line}\n`);
	for (let done = 0; done < out.length; ) done += fs.writeSync(5, out, done);
	for (;;) {
		const nl = syncBuffered.indexOf(10);
		if (nl >= 0) {
			const msg = JSON.parse(syncBuffered.subarray(0, nl).toString("utf8"));
			syncBuffered = syncBuffered.subarray(nl + 1);
			if (msg.id !== id) continue;
			if (msg.error) throw new Error(msg.error.message);
			return msg.result;
		}
		const n = fs.readSync(6, syncChunk, 0, syncChunk.length, null);
		if (n === 0) throw new Error("gopi closed the pipe of sync requests");
		syncBuffered = Buffer.concat([syncBuffered, syncChunk.subarray(0, n)]);
	}
}

const handlers = new Map(); // method -> async (params) => result
const running = new Map(); // gopi's rid -> AbortController
// Events gopi sent as notifications whose handlers have not finished:
// "drain" waits for them (pi awaits agent_end's handlers before it
// settles).
const pendingEvents = new Set();

async function dispatch(msg) {
	if (process.env.GOPI_EXT_DEBUG) process.stderr.write(`<- ${JSON.stringify(msg).slice(0, 300)}\n`);
	if (msg.method === undefined) {
		const w = waiting.get(msg.id);
		if (!w) return;
		waiting.delete(msg.id);
		if (msg.error) w.reject(new Error(msg.error.message));
		else w.resolve(msg.result);
		return;
	}
	const h = handlers.get(msg.method);
	if (msg.id === undefined) {
		if (h) {
			// The handler starts at once (a state update must be in place
			// before the call that follows it), and may finish later.
			let started;
			try {
				started = Promise.resolve(h(msg.params ?? {}));
			} catch (err) {
				started = Promise.reject(err);
			}
			const done = started.catch((err) => process.stderr.write(`notification ${msg.method} failed: ${err?.stack ?? err}\n`));
			if (msg.method === served.emit) {
				pendingEvents.add(done);
				done.finally(() => pendingEvents.delete(done));
			}
			await done;
		}
		return;
	}
	if (!h) {
		send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `unknown method ${msg.method}` } });
		return;
	}
	try {
		const result = await h(msg.params ?? {});
		send({ jsonrpc: "2.0", id: msg.id, result: result ?? null });
	} catch (err) {
		send({ jsonrpc: "2.0", id: msg.id, error: { code: -32000, message: errorText(err) } });
	}
}

function errorText(err) {
	return err instanceof Error ? err.message : String(err);
}

let buffered = "";
const input = fs.createReadStream(null, { fd: 3, encoding: "utf8" });
input.on("data", (chunk) => {
	buffered += chunk;
	let nl = buffered.indexOf("\n");
	while (nl >= 0) {
		const line = buffered.slice(0, nl);
		buffered = buffered.slice(nl + 1);
		nl = buffered.indexOf("\n");
		if (line.trim() === "") continue;
		let msg;
		try {
			msg = JSON.parse(line);
		} catch (err) {
			process.stderr.write(`unreadable message from gopi: ${errorText(err)}\n`);
			continue;
		}
		// Messages are handled concurrently, as they arrive; a handler that
		// waits (a dialog, a tool) does not hold up the ones behind it.
		void dispatch(msg);
	}
});
// gopi closed the pipe (it exited or stopped extensions): so do we.
input.on("end", () => process.exit(0));
input.on("error", () => process.exit(0));

// ---- state mirrored from gopi ---------------------------------------------

const state = {
	cwd: process.cwd(),
	model: undefined,
	models: [],
	thinkingLevel: "off",
	idle: true,
	pendingMessages: false,
	activeTools: [],
	allTools: [],
	commands: [],
	sessionName: undefined,
	sessionFile: undefined,
	sessionDir: "",
	sessionId: "",
	header: null,
	leafId: null,
	entries: [],
	byId: new Map(),
	contextUsage: undefined,
	systemPrompt: "",
};

// applyState takes what changed: every key is one of stateFields, which
// gopi generates from the state it sends (core/ext's Snapshot). Entries
// come as {reset, add}; a missing leaf or header is null, an empty session
// name undefined, anything else missing undefined.
function applyState(p) {
	for (const k of stateFields) {
		if (!(k in p) || k === "entries") continue;
		if (k === "sessionName") state.sessionName = p.sessionName || undefined;
		else state[k] = p[k] ?? (k === "leafId" || k === "header" ? null : undefined);
	}
	if (p.entries) {
		if (p.entries.reset) {
			state.entries = [];
			state.byId = new Map();
		}
		for (const e of p.entries.add ?? []) {
			state.entries.push(e);
			state.byId.set(e.id, e);
		}
	}
	if ("idle" in p && p.idle) runAbort = undefined;
}

// ctx.sessionManager: pi's ReadonlySessionManager over the mirrored entries.
const sessionManager = {
	getCwd: () => state.cwd,
	getSessionDir: () => state.sessionDir,
	getSessionId: () => state.sessionId,
	getSessionFile: () => state.sessionFile,
	getSessionName: () => state.sessionName,
	getLeafId: () => state.leafId,
	getLeafEntry: () => (state.leafId ? state.byId.get(state.leafId) : undefined),
	getEntry: (id) => state.byId.get(id),
	getHeader: () => state.header,
	getEntries: () => state.entries.slice(),
	getChildren: (parentId) => state.entries.filter((e) => e.parentId === parentId),
	getLabel(id) {
		let label;
		for (const e of state.entries) {
			if (e.type === "label" && e.targetId === id) label = e.label || undefined;
		}
		return label;
	},
	getBranch(fromId) {
		const out = [];
		let e = state.byId.get(fromId ?? state.leafId);
		const seen = new Set();
		while (e && !seen.has(e.id)) {
			seen.add(e.id);
			out.push(e);
			e = e.parentId ? state.byId.get(e.parentId) : undefined;
		}
		return out.reverse();
	},
	getTree() {
		const nodes = new Map();
		for (const e of state.entries) nodes.set(e.id, { entry: e, children: [], label: sessionManager.getLabel(e.id) });
		const roots = [];
		for (const e of state.entries) {
			const parent = e.parentId ? nodes.get(e.parentId) : undefined;
			if (parent) parent.children.push(nodes.get(e.id));
			else roots.push(nodes.get(e.id));
		}
		return roots;
	},
	buildContextEntries() {
		throw new Error("sessionManager.buildContextEntries() is not available under gopi; use getBranch()");
	},
	buildSessionProjection() {
		throw new Error("sessionManager.buildSessionProjection() is not available under gopi; use getBranch()");
	},
	buildSessionContext() {
		throw new Error("sessionManager.buildSessionContext() is not available under gopi; use getBranch()");
	},
};

// ctx.modelRegistry: the models gopi knows.
const modelRegistry = {
	find: (provider, id) => state.models.find((m) => m.provider === provider && m.id === id),
	getApiKeyAndHeaders: (model) => request(gopi.getApiKey, { provider: model?.provider, id: model?.id }),
	getApiKey: async (model) => (await request(gopi.getApiKey, { provider: model?.provider, id: model?.id }))?.apiKey,
	getAll: () => state.models.slice(),
	getAvailable: () => state.models.filter((m) => m.available !== false),
	registerProvider: (name, config) => registerProvider(name, config),
	unregisterProvider: (name) => notify(gopi.unregisterProvider, { name }),
};

function registerProvider(name, config) {
	const plain = JSON.parse(JSON.stringify(config ?? {}));
	const functions = Object.entries(config ?? {})
		.filter(([, v]) => typeof v === "function")
		.map(([k]) => k);
	notify(gopi.registerProvider, { name, config: plain, functions });
}

// ---- UI: dialogs are requests to gopi, the rest notifications --------------

let theme;
function dialog(req, opts, fallback, pick) {
	if (opts?.signal?.aborted) return Promise.resolve(fallback);
	const rid = `ui-${nextId}`;
	const p = request(gopi.uiAsk, { ...req, rid }).then(
		(r) => (r?.cancelled ? fallback : pick(r)),
		() => fallback,
	);
	if (!opts?.signal) return p;
	return new Promise((resolve) => {
		const onAbort = () => {
			notify(gopi.uiCancel, { rid });
			resolve(fallback);
		};
		opts.signal.addEventListener("abort", onAbort, { once: true });
		p.then((v) => {
			opts.signal.removeEventListener("abort", onAbort);
			resolve(v);
		});
	});
}
const ui = {
	select: (title, options, opts) =>
		dialog({ method: "select", title, options, timeout: opts?.timeout }, opts, undefined, (r) => r.value),
	confirm: (title, message, opts) =>
		dialog({ method: "confirm", title, message, timeout: opts?.timeout }, opts, false, (r) => r.confirmed ?? false),
	input: (title, placeholder, opts) =>
		dialog({ method: "input", title, placeholder, timeout: opts?.timeout }, opts, undefined, (r) => r.value),
	editor: (title, prefill) => dialog({ method: "editor", title, prefill }, undefined, undefined, (r) => r.value),
	notify: (message, type) => notify(gopi.ui, { method: "notify", message, notifyType: type }),
	setStatus: (key, text) => notify(gopi.ui, { method: "setStatus", statusKey: key, statusText: text }),
	setWidget(key, content, options) {
		// Lines only: component factories need pi's TUI.
		if (content === undefined || Array.isArray(content)) {
			notify(gopi.ui, { method: "setWidget", widgetKey: key, widgetLines: content, widgetPlacement: options?.placement });
		}
	},
	setTitle: (title) => notify(gopi.ui, { method: "setTitle", title }),
	setEditorText: (text) => notify(gopi.ui, { method: "set_editor_text", text }),
	pasteToEditor: (text) => notify(gopi.ui, { method: "set_editor_text", text }),
	getEditorText: () => "",
	// What needs pi's terminal UI is accepted and does nothing, as in pi's
	// own RPC mode.
	onTerminalInput: () => () => {},
	setWorkingMessage() {},
	setWorkingVisible() {},
	setWorkingIndicator() {},
	setHiddenThinkingLabel() {},
	setFooter() {},
	setHeader() {},
	custom: async () => undefined,
	addAutocompleteProvider() {},
	setEditorComponent() {},
	getEditorComponent: () => undefined,
	get theme() {
		return theme;
	},
	getAllThemes: () => [],
	getTheme: () => undefined,
	setTheme: () => ({ success: false, error: "Themes need pi's terminal UI; gopi has none" }),
	getToolsExpanded: () => false,
	setToolsExpanded() {},
};

// ---- loading ----------------------------------------------------------------

let runner;
let runAbort; // the current run's AbortController: ctx.signal while streaming

function toolInfo(t) {
	const d = t.definition;
	return {
		name: d.name,
		label: d.label,
		description: d.description ?? "",
		parameters: d.parameters ?? { type: "object", properties: {} },
		promptSnippet: d.promptSnippet,
		promptGuidelines: d.promptGuidelines,
		executionMode: d.executionMode,
		path: t.sourceInfo?.path,
		sourceInfo: t.sourceInfo,
	};
}

function registrations() {
	const handled = new Set();
	for (const ext of runner.extensions) for (const [name, list] of ext.handlers) if (list.length) handled.add(name);
	return {
		tools: runner.getAllRegisteredTools().map(toolInfo),
		commands: runner.getRegisteredCommands().map((c) => ({
			name: c.invocationName,
			description: c.description ?? "",
			path: c.sourceInfo?.path,
			sourceInfo: c.sourceInfo,
		})),
		flags: [...runner.getFlags().values()].map((f) => ({
			name: f.name,
			type: f.type,
			default: f.default,
			description: f.description ?? "",
			path: f.extensionPath,
		})),
		shortcuts: runner.extensions.flatMap((e) =>
			[...e.shortcuts.values()].map((s) => ({ shortcut: s.shortcut, description: s.description ?? "", path: e.path })),
		),
		handlers: [...handled].sort(),
		mcpServers: mcpServerList(),
	};
}

// The extensions loaded for project_trust (the user's and the command
// line's), which initialize keeps rather than loading them again.
let preloaded;

// The context a project_trust handler gets. As in pi's RPC mode there is
// no one to ask: dialogs answer nothing and notify goes to gopi's log.
function trustContext(cwd) {
	return {
		cwd,
		mode: "rpc",
		hasUI: false,
		ui: {
			select: async () => undefined,
			confirm: async () => false,
			input: async () => undefined,
			notify: (message, type = "info") => process.stderr.write(`${type}: ${message}\n`),
		},
	};
}

// projectTrust loads the extensions that may decide whether the project
// is trusted (before its own .pi/extensions can load) and runs their
// project_trust handlers: the first "yes" or "no" decides.
handlers.set(served.projectTrust, async (p) => {
	const cwd = p.cwd ?? state.cwd;
	const { emitProjectTrustEvent } = await piModule("dist/core/extensions/runner.js");
	// A pi without the event: nothing is loaded early, nothing decides.
	if (typeof emitProjectTrustEvent !== "function") return { trusted: "undecided", remember: false, errors: [] };
	const { loadExtensions } = await piModule("dist/core/extensions/index.js");
	const { createEventBus } = await piModule("dist/core/event-bus.js");
	await installCallHook();
	const bus = createEventBus();
	preloaded = { ...(await loadExtensions(p.paths ?? [], cwd, bus)), bus };
	const { result, errors } = await emitProjectTrustEvent(preloaded, { type: "project_trust", cwd }, trustContext(cwd));
	return {
		trusted: result?.trusted === "yes" || result?.trusted === "no" ? result.trusted : "undecided",
		remember: result?.remember === true,
		errors: errors ?? [],
	};
});

// load loads paths, reusing what projectTrust loaded (in the order paths
// give, as pi does once the project's trust is known).
async function load(paths, cwd) {
	const { loadExtensions } = await piModule("dist/core/extensions/index.js");
	await installCallHook();
	const pre = preloaded;
	preloaded = undefined;
	if (!pre) return loadExtensions(paths, cwd);
	const byPath = new Map(pre.extensions.map((e) => [e.resolvedPath ?? e.path, e]));
	const failed = new Set(pre.errors.map((e) => path.resolve(cwd, e.path)));
	const rest = paths.filter((x) => !byPath.has(path.resolve(cwd, x)) && !failed.has(path.resolve(cwd, x)));
	const more = await loadExtensions(rest, cwd, pre.bus, pre.runtime);
	for (const e of more.extensions) byPath.set(e.resolvedPath ?? e.path, e);
	return {
		extensions: paths.map((x) => byPath.get(path.resolve(cwd, x))).filter((e) => e !== undefined),
		errors: [...pre.errors, ...more.errors],
		runtime: pre.runtime,
	};
}

// A copy of what gopi builds its own system prompt from.
const systemPromptOptions = () => (state.systemPromptOptions ? structuredClone(state.systemPromptOptions) : undefined);

handlers.set(served.initialize, async (p) => {
	applyState(p.state ?? {});
	const { ExtensionRunner } = await piModule("dist/core/extensions/index.js");
	const themes = await piModule("dist/modes/interactive/theme/theme.js");
	// pi initializes its theme in every mode; extensions that colour
	// status text read it even without a terminal.
	themes.initTheme(p.theme, false);
	theme = themes.theme;
	const loaded = await load(p.paths ?? [], p.cwd ?? state.cwd);
	runner = new ExtensionRunner(loaded.extensions, loaded.runtime, p.cwd ?? state.cwd, sessionManager, modelRegistry);
	// Command-line flags gopi did not know: typed now that the extensions
	// registered theirs (a bare flag is true).
	const known = runner.getFlags();
	for (const [name, raw] of Object.entries(p.flagValues ?? {})) {
		const flag = known.get(name);
		if (!flag) continue;
		// raw: true (a bare flag), a string (--name=value) or {next} (a
		// bare flag and the word after it, its value if it takes one).
		const text = typeof raw === "string" ? raw : raw?.next;
		const value = flag.type === "boolean" ? (typeof raw === "string" ? raw !== "false" : true) : (text ?? "");
		runner.setFlagValue(name, value);
	}
	runner.onError((e) => notify(gopi.error, e));
	runner.bindCore(
		{
			sendMessage: (message, options) => notify(gopi.sendMessage, { message, options }),
			sendUserMessage: (content, options) => notify(gopi.sendUserMessage, { content, options }),
			appendEntry: (customType, data) => notify(gopi.appendEntry, { customType, data }),
			setSessionName(name) {
				state.sessionName = name || undefined;
				notify(gopi.setSessionName, { name });
			},
			getSessionName: () => state.sessionName,
			setLabel: (entryId, label) => notify(gopi.setLabel, { entryId, label }),
			getActiveTools: () => state.activeTools.slice(),
			getAllTools: () => state.allTools.slice(),
			// pi 1.5's pi.getSettings() reads this one.
			getSettings: settingsCopy,
			setActiveTools(names) {
				state.activeTools = names.filter((n) => state.allTools.some((t) => t.name === n));
				notify(gopi.setActiveTools, { names });
			},
			refreshTools: () => notify(gopi.registrations, registrations()),
			getCommands: () => state.commands.slice(),
			async setModel(model) {
				const r = await request(gopi.setModel, { provider: model?.provider, id: model?.id });
				if (!r?.ok) return false;
				// What ctx.model and the level read next, before gopi's
				// next state update.
				state.model = r.model;
				state.thinkingLevel = r.thinkingLevel;
				return true;
			},
			getThinkingLevel: () => state.thinkingLevel,
			setThinkingLevel(level) {
				state.thinkingLevel = level;
				notify(gopi.setThinkingLevel, { level });
			},
		},
		{
			getModel: () => state.model,
			getScopedModels: () => [],
			isIdle: () => state.idle,
			isProjectTrusted: () => state.projectTrusted !== false,
			getSignal: () => (state.idle ? undefined : runAbort?.signal),
			abort: () => notify(gopi.abort, {}),
			hasPendingMessages: () => state.pendingMessages,
			shutdown: () => notify(gopi.shutdown, {}),
			getContextUsage: () => state.contextUsage,
			compact(options) {
				request(gopi.compact, { customInstructions: options?.customInstructions }).then(
					(r) => options?.onComplete?.(r),
					(err) => options?.onError?.(err instanceof Error ? err : new Error(String(err))),
				);
			},
			getSystemPrompt: () => state.systemPrompt,
			getSystemPromptOptions: systemPromptOptions,
		},
		{
			registerProvider: (name, config) => registerProvider(name, config),
			registerNativeProvider: (provider) =>
				notify(gopi.error, {
					extensionPath: "<provider>",
					event: "register_provider",
					error: `native provider ${provider?.id ?? "?"} needs pi's model runtime; gopi cannot use it`,
				}),
			unregisterProvider: (name) => notify(gopi.unregisterProvider, { name }),
			// pi 1.5's loader hands these on (withPi15Calls).
			registerVirtualModel: (m) => unavailable(`pi.registerVirtualModel (virtual models: ${m?.provider}/${m?.id})`)(),
			unregisterVirtualModel: unavailable("pi.unregisterVirtualModel (virtual models)"),
		},
	);
	const session = (method) => async (arg, options) => {
		const r = await request(method, method === gopi.fork ? { entryId: arg } : method === gopi.switchSession ? { sessionPath: arg } : method === gopi.navigateTree ? { targetId: arg, options } : { options: arg });
		if (!r?.cancelled) {
			const withSession = (method === gopi.newSession ? arg : options)?.withSession;
			if (typeof withSession === "function") await withSession(runner.createCommandContext());
		}
		return r ?? { cancelled: false };
	};
	runner.bindCommandContext({
		waitForIdle: () => request(gopi.waitForIdle, {}),
		newSession: session(gopi.newSession),
		fork: session(gopi.fork),
		navigateTree: session(gopi.navigateTree),
		switchSession: session(gopi.switchSession),
		reload: () => request(gopi.reload, {}),
	});
	runner.setUIContext(ui, "rpc");
	// pi 1.5 has ctx.getSystemPromptOptions() in every context; pi
	// 0.87.1 only in a command's.
	const createContext = runner.createContext.bind(runner);
	runner.createContext = () => {
		const ctx = createContext();
		if (!("getSystemPromptOptions" in ctx)) ctx.getSystemPromptOptions = systemPromptOptions;
		return ctx;
	};
	// From now on an MCP server registered or removed is announced, as
	// pi's runner announces it once bound.
	mcpBound = true;
	// Two extensions with one tool: pi refuses to start; here the first
	// keeps it and the later one is reported.
	const errors = [...loaded.errors];
	const owners = new Map();
	for (const ext of loaded.extensions) {
		for (const name of ext.tools.keys()) {
			const first = owners.get(name);
			if (first === undefined) owners.set(name, ext.path);
			else errors.push({ path: ext.path, error: `Tool "${name}" conflicts with ${first}` });
		}
	}
	return {
		loaded: loaded.extensions.map((e) => e.path),
		errors,
		...registrations(),
	};
});

handlers.set(served.state, (p) => applyState(p));

// ---- events -------------------------------------------------------------------

function cancellable(p, run) {
	const ac = new AbortController();
	if (p.rid !== undefined) running.set(p.rid, ac);
	return Promise.resolve(run(ac.signal)).finally(() => running.delete(p.rid));
}
handlers.set(served.cancel, (p) => running.get(p.rid)?.abort());

handlers.set(served.runStart, () => {
	runAbort = new AbortController();
});
handlers.set(served.runAbort, () => runAbort?.abort());

handlers.set(served.emit, (p) =>
	cancellable(p, async (signal) => {
		// session_before_compact hands handlers the compaction's signal.
		const event = p.event.type === "session_before_compact" ? { ...p.event, signal } : p.event;
		return (await runner.emit(event)) ?? null;
	}),
);

// turn_end and agent_before_settle are pi 1.5's actionable boundaries:
// each handler sees the entries and continuation proposed so far, and the
// context they would make, which gopi builds (and refuses when a draft is
// wrong). A pi package without emitBoundary only notifies.
handlers.set(served.boundary, async (p) => {
	if (typeof runner.emitBoundary !== "function") {
		await runner.emit(p.event);
		return { entries: [], continue: false, valid: true };
	}
	const r = await runner.emitBoundary(p.event, (entries) =>
		request(gopi.boundaryPreview, { event: p.event.type, entries }),
	);
	return { entries: r.entries ?? [], continue: !!r.continue, valid: r.valid !== false };
});

// user_bash: { result } crosses as it is; { operations } is code, so only
// its presence does.
handlers.set(served.userBash, async (p) => {
	const r = await runner.emitUserBash(p.event);
	if (!r) return null;
	return r.result ? { result: r.result } : { operations: {} };
});

handlers.set(served.drain, async () => {
	while (pendingEvents.size > 0) await Promise.allSettled([...pendingEvents]);
	return null;
});

handlers.set(served.toolCall, async (p) => {
	const event = p.event;
	const result = await runner.emitToolCall(event);
	// Handlers may change event.input in place; gopi runs the tool with it.
	return { block: result?.block === true, reason: result?.reason, input: event.input };
});

handlers.set(served.toolResult, async (p) => (await runner.emitToolResult(p.event)) ?? null);

handlers.set(served.input, (p) => runner.emitInput(p.text, p.images, p.source ?? "rpc", p.streamingBehavior));

handlers.set(served.context, async (p) => {
	const messages = await runner.emitContext(p.messages);
	return { messages };
});

handlers.set(served.beforeProviderRequest, (p) => runner.emitBeforeProviderRequest(p.payload));

// Handlers change event.headers in place (null removes one); the whole
// object goes back.
handlers.set(served.beforeProviderHeaders, (p) => runner.emitBeforeProviderHeaders(p.headers ?? {}));

handlers.set(served.messageEnd, async (p) => (await runner.emitMessageEnd({ type: "message_end", message: p.message })) ?? null);

handlers.set(served.resourcesDiscover, (p) => runner.emitResourcesDiscover(p.cwd ?? state.cwd, p.reason ?? "startup"));

// before_agent_start, with gopi's system prompt: pi's runner would render
// pi's own prompt here. Same composition as pi: each handler sees the
// prompt as changed by the ones before it and the same
// systemPromptOptions object, which it may change in place (gopi builds
// the run's prompt from what is left); a returned systemPrompt forces
// the whole prompt, as forceSystemPrompt does; messages accumulate.
handlers.set(served.beforeAgentStart, async (p) => {
	const ctx = runner.createContext();
	let systemPrompt = p.systemPrompt ?? state.systemPrompt;
	const options = p.systemPromptOptions;
	let changed = false;
	const messages = [];
	ctx.getSystemPrompt = () => options?.forceSystemPrompt ?? systemPrompt;
	for (const ext of runner.extensions) {
		for (const handler of (ext.handlers.get("before_agent_start") ?? []).slice()) {
			try {
				const event = {
					type: "before_agent_start",
					messageType: p.messageType ?? "user",
					systemPrompt: options?.forceSystemPrompt ?? systemPrompt,
					systemPromptOptions: options,
				};
				if (event.messageType === "custom") event.message = p.message;
				else Object.assign(event, { prompt: p.prompt, images: p.images });
				const r = await handler(event, ctx);
				if (r?.message) messages.push(r.message);
				if (r?.systemPrompt !== undefined) {
					systemPrompt = r.systemPrompt;
					changed = true;
					if (options) options.forceSystemPrompt = r.systemPrompt;
				}
			} catch (err) {
				runner.emitError({ extensionPath: ext.path, event: "before_agent_start", error: errorText(err), stack: err?.stack });
			}
		}
	}
	return {
		messages,
		systemPrompt: changed ? systemPrompt : undefined,
		systemPromptOptions: options,
	};
});

// ---- tools and commands ---------------------------------------------------------

handlers.set(served.executeTool, (p) =>
	cancellable(p, async (signal) => {
		const def = runner.getToolDefinition(p.name);
		if (!def) throw new Error(`no extension tool named ${p.name}`);
		const onUpdate = (partial) => notify(gopi.toolUpdate, { toolCallId: p.toolCallId, partial });
		try {
			const r = await def.execute(p.toolCallId, p.params, signal, onUpdate, runner.createContext());
			return {
				content: r?.content ?? [],
				details: r?.details,
				structuredContent: r?.structuredContent,
				isError: r?.isError === true,
				terminate: r?.terminate === true,
			};
		} catch (err) {
			return { content: [{ type: "text", text: errorText(err) }], isError: true };
		}
	}),
);

handlers.set(served.command, (p) =>
	cancellable(p, async () => {
		const command = runner.getCommand(p.name);
		if (!command) throw new Error(`no extension command named ${p.name}`);
		try {
			await command.handler(p.args ?? "", runner.createCommandContext());
		} catch (err) {
			runner.emitError({ extensionPath: `command:${p.name}`, event: "command", error: errorText(err), stack: err?.stack });
		}
		return {};
	}),
);

handlers.set(served.registrations, () => registrations());

process.on("unhandledRejection", (err) => {
	process.stderr.write(`unhandled rejection in an extension: ${err?.stack ?? err}\n`);
	notify(gopi.error, { extensionPath: "<unknown>", event: "unhandled_rejection", error: errorText(err), stack: err?.stack });
});
process.on("uncaughtException", (err) => {
	process.stderr.write(`uncaught exception in an extension: ${err?.stack ?? err}\n`);
	notify(gopi.error, { extensionPath: "<unknown>", event: "uncaught_exception", error: errorText(err), stack: err?.stack });
});

notify(gopi.ready, { pid: process.pid, node: process.version });
