// The extensions and pi's ExtensionRunner: loading them (for
// project_trust first, then the rest at initialize), binding the runner to
// gopi, and what they registered.

import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { gopi, served } from "./methods.gen.mjs";
import { announceMcpChanges, mcpServerList } from "./mcp.mjs";
import { callableTools, executeNested } from "./nested.mjs";
import { installCallHook, unavailable } from "./pi15.mjs";
import { handlers, notify, request } from "./pipe.mjs";
import { applyState, modelRegistry, registerProvider, runAbort, sessionManager, settingsCopy, state, systemPromptOptions } from "./state.mjs";
import { ui, useTheme } from "./ui.mjs";

// The pi package gopi points us at: our one argument, which host.mjs
// checks is there.
export const piDir = process.argv[2];
const piModule = (rel) => import(pathToFileURL(path.join(piDir, rel)).href);

export let runner;

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

handlers.set(served.registrations, () => registrations());

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

handlers.set(served.initialize, async (p) => {
	applyState(p.state ?? {});
	const { ExtensionRunner } = await piModule("dist/core/extensions/index.js");
	const themes = await piModule("dist/modes/interactive/theme/theme.js");
	// pi initializes its theme in every mode; extensions that colour
	// status text read it even without a terminal.
	themes.initTheme(p.theme, false);
	useTheme(themes.theme);
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
			// ctx.executeTool() and ctx.tools of an extension's tool.
			executeTool: executeNested,
			getCallableTools: callableTools,
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
	announceMcpChanges(() => {
		notify(gopi.registrations, registrations());
		void runner.emit({ type: "mcp_servers_change", servers: mcpServerList() });
	});
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
