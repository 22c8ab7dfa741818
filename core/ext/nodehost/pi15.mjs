// pi 1.5's API on an older loader.
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

import { gopi } from "./methods.gen.mjs";
import { loadingMcp, mcpServerList, registerMcpServer, unregisterMcpServer } from "./mcp.mjs";
import { notify } from "./pipe.mjs";
import { settingsCopy } from "./state.mjs";

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
export async function installCallHook() {
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

export function unavailable(what) {
	return () => {
		throw new Error(`${what} is not available in gopi`);
	};
}

// withPi15Calls adds to api what pi 1.5 has and it lacks. Virtual models
// gopi has none of: pi 1.5's own calls queue one registered while loading
// and bindCore's registerVirtualModel refuses it (an extension error, the
// extension loads, as pi reports a model it cannot register). The MCP
// calls are ours even where the loaded pi has them: the servers must
// reach gopi, which connects them (see mcp.mjs).
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
