// MCP servers extensions register (pi 1.5).
//
// Kept as pi's runtime keeps them (its McpServerRegistry and loader): in
// registration order; a name is the extension's that registered it, and
// one that differs only in "-" and "_" clashes; what an extension
// registers while it loads takes effect once it has loaded (nothing, if
// it fails to); later changes at once, each firing mcp_servers_change
// with the whole list. gopi checks each config first (validateMcpServer,
// so a bad one throws gopi's message), and reads the list from our
// registrations: it connects the servers beside mcp.json's.

import { gopi } from "./methods.gen.mjs";
import { requestSync } from "./pipe.mjs";

const mcpServers = new Map(); // name -> { name, config, extensionPath }
const mcpLoading = new Map(); // extension path -> changes held until it has loaded
// How a change is told to gopi and the extensions; set by initialize once
// it has bound the runner (what changed before, gopi reads from
// initialize's answer).
let announce;

// Copies of the registered servers, as pi.getMcpServers() gives them.
export const mcpServerList = () => [...mcpServers.values()].map((s) => ({ ...s, config: structuredClone(s.config) }));

// loadingMcp runs an extension's factory: the MCP changes it makes are
// applied once it has finished, and dropped if it fails, as pi commits an
// extension's registrations.
export function loadingMcp(extensionPath, run) {
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

// announceMcpChanges binds the runner's side: from now on each change
// is announced, as pi's runner announces it once bound.
export function announceMcpChanges(fn) {
	announce = fn;
}

function mcpChanged() {
	if (announce) announce();
}

export function registerMcpServer(extensionPath, name, config) {
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

export function unregisterMcpServer(extensionPath, name) {
	mcpChange(extensionPath, () => {
		if (mcpServers.get(name)?.extensionPath !== extensionPath) return;
		mcpServers.delete(name);
		mcpChanged();
	});
}
