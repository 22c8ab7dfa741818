// The state extensions read synchronously, a copy gopi keeps current with
// "state" notifications (applyState), and what reads it without a round
// trip: ctx.sessionManager, ctx.modelRegistry, the settings, the run's
// signal.

import { gopi, served, stateFields } from "./methods.gen.mjs";
import { handlers, notify, request } from "./pipe.mjs";

export const state = {
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
export function applyState(p) {
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
export const sessionManager = {
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
export const modelRegistry = {
	find: (provider, id) => state.models.find((m) => m.provider === provider && m.id === id),
	getApiKeyAndHeaders: (model) => request(gopi.getApiKey, { provider: model?.provider, id: model?.id }),
	getApiKey: async (model) => (await request(gopi.getApiKey, { provider: model?.provider, id: model?.id }))?.apiKey,
	getAll: () => state.models.slice(),
	getAvailable: () => state.models.filter((m) => m.available !== false),
	registerProvider: (name, config) => registerProvider(name, config),
	unregisterProvider: (name) => notify(gopi.unregisterProvider, { name }),
};

export function registerProvider(name, config) {
	const plain = JSON.parse(JSON.stringify(config ?? {}));
	const functions = Object.entries(config ?? {})
		.filter(([, v]) => typeof v === "function")
		.map(([k]) => k);
	notify(gopi.registerProvider, { name, config: plain, functions });
}

// The merged settings, a copy the extension may change.
export const settingsCopy = () => structuredClone(state.settings ?? {});

// A copy of what gopi builds its own system prompt from.
export const systemPromptOptions = () => (state.systemPromptOptions ? structuredClone(state.systemPromptOptions) : undefined);

handlers.set(served.state, (p) => applyState(p));

// ---- the run --------------------------------------------------------------------

export let runAbort; // the current run's AbortController: ctx.signal while streaming

handlers.set(served.runStart, () => {
	runAbort = new AbortController();
});
handlers.set(served.runAbort, () => runAbort?.abort());
