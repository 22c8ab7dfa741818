// gopi: MCP Servers — the session's MCP servers (gopi's get_mcp_servers)
// in a quick pick, the ones that need sign-in and the failed ones first,
// kept up to date by gopi's
// mcp_server_state events; one picked shows its tools, or why it has
// none. A server that fails to connect is a warning.
import * as vscode from "vscode";
import type { MCPServer, MCPState } from "./gen/protocol";
import type { Session } from "./session";

const stateIcons: Record<MCPState, string> = {
	connected: "$(pass)",
	failed: "$(error)",
	connecting: "$(sync~spin)",
	disconnected: "$(debug-disconnect)",
	disabled: "$(circle-slash)",
	closed: "$(circle-outline)",
	"needs-auth": "$(key)",
};

/** A state in words: pi's "needs sign-in" for needs-auth. */
const stateLabel = (state: MCPState) => (state === "needs-auth" ? "needs sign-in" : state);

/** Servers that need the user first: sign-in, then failures. */
const attention = (state: MCPState) => (state === "needs-auth" ? 0 : state === "failed" ? 1 : 2);

export interface ServerItem extends vscode.QuickPickItem {
	server: MCPServer;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/** One line of an error that may carry a server's stderr. */
const oneLine = (s: string) => s.trim().replace(/\s*\n\s*/g, " · ");

/**
 * A session's MCP servers as gopi reports their changes (mcp_server_state):
 * the open list follows them, and a server that fails to connect is a
 * warning, once until it connects again (a restart of gopi starts over).
 */
export class McpWatch implements vscode.Disposable {
	private readonly emitter = new vscode.EventEmitter<MCPServer>();
	/** A server changed: its state, error or tools. */
	readonly onDidChange = this.emitter.event;
	private readonly warned = new Set<string>();

	/** show opens the session's server list (the warning's button). */
	constructor(private readonly show: () => Promise<void>) {}

	changed(x: MCPServer): void {
		this.emitter.fire(x);
		if (x.state !== "failed") {
			if (x.state === "connected") this.warned.delete(x.name);
			return;
		}
		if (this.warned.has(x.name)) return;
		this.warned.add(x.name);
		const why = (x.error ?? "").trim().split("\n")[0];
		void vscode.window
			.showWarningMessage(`gopi: MCP server "${x.name}" failed${why ? `: ${why}` : ""}`, "Show MCP Servers")
			.then((pick) => {
				if (pick) void this.show();
			});
	}

	/** gopi starts anew: its servers too. */
	reset(): void {
		this.warned.clear();
	}

	dispose(): void {
		this.emitter.dispose();
	}
}

/** The quick pick's items: servers that need sign-in, then failed ones, then mcp.json's order. */
export function serverItems(servers: MCPServer[]): ServerItem[] {
	const ordered = [...servers].sort((a, b) => attention(a.state) - attention(b.state));
	return ordered.map((x) => {
		const parts: string[] = [stateLabel(x.state), x.exposure];
		if (x.state === "connected" || x.tools.length) parts.push(plural(x.tools.length, "tool"));
		if (x.resources) parts.push("resources");
		return {
			label: `${stateIcons[x.state] ?? "$(question)"} ${x.name}`,
			description: parts.join(" · "),
			detail: x.error ? oneLine(x.error) : `${x.scope} · ${x.transport}`,
			server: x,
		};
	});
}

/** Lists the servers; a server picked shows its tools or its error. */
export async function showMcpServers(s: Session): Promise<void> {
	const first = (await s.client.request("get_mcp_servers"))?.servers ?? [];
	if (!first.length) {
		void vscode.window.showInformationMessage(
			"gopi: this session has no MCP servers. Add them to mcp.json in gopi's agent directory (or .pi/mcp.json in a trusted project); --no-mcp turns them off.",
		);
		return;
	}
	const pick = await pickServer(s, first);
	if (pick) await showServer(pick);
}

/**
 * The server list, following gopi's mcp_server_state events (subscribed at
 * once, as first's answer arrives: every later change is heard), the
 * active item kept.
 */
function pickServer(s: Session, first: MCPServer[]): Promise<MCPServer | undefined> {
	const qp = vscode.window.createQuickPick<ServerItem>();
	qp.title = "gopi: MCP servers";
	qp.placeholder = "Pick a server to see its tools";
	qp.matchOnDescription = true;
	qp.matchOnDetail = true;
	let servers = first;
	const fill = () => {
		const active = qp.activeItems[0]?.server.name;
		qp.items = serverItems(servers);
		const keep = qp.items.find((i) => i.server.name === active);
		if (keep) qp.activeItems = [keep];
		qp.busy = servers.some((x) => x.state === "connecting");
	};
	const sub = s.mcp.onDidChange((x) => {
		servers = servers.map((y) => (y.name === x.name ? x : y));
		fill();
	});
	fill();
	return new Promise((resolve) => {
		const done = (x: MCPServer | undefined) => {
			sub.dispose();
			resolve(x);
			qp.dispose();
		};
		qp.onDidAccept(() => done((qp.selectedItems[0] ?? qp.activeItems[0])?.server));
		qp.onDidHide(() => done(undefined));
		qp.show();
	});
}

/** A server's tools in a second quick pick; without tools, why not. */
async function showServer(x: MCPServer): Promise<void> {
	if (x.state === "failed") {
		void vscode.window.showErrorMessage(`gopi: MCP server "${x.name}" failed to connect`, {
			modal: true,
			detail: x.error || "gopi gave no reason",
		});
		return;
	}
	if (!x.tools.length) {
		const why: Record<MCPState, string> = {
			connected: x.resources ? "offers resources but no tools" : "offers no tools",
			connecting: "is still connecting",
			disconnected: "dropped its connection; the next call reconnects",
			disabled: `is disabled ("enabled": false in ${x.source})`,
			closed: "is closed: the session is ending",
			failed: "failed",
			"needs-auth": "needs sign-in",
		};
		const more = x.error ? `: ${oneLine(x.error)}` : "";
		void vscode.window.showInformationMessage(`gopi: MCP server "${x.name}" ${why[x.state] ?? x.state}${more}`);
		return;
	}
	const items = x.tools.map((t) => ({
		label: `${t.readOnly ? "$(lock)" : "$(tools)"} ${t.remoteName}`,
		description: [t.exposure, t.readOnly ? "read-only" : ""].filter(Boolean).join(" · "),
		detail: t.name,
	}));
	await vscode.window.showQuickPick(items, {
		title: `gopi: tools of MCP server "${x.name}" (${stateLabel(x.state)}, ${x.exposure})`,
		placeHolder: 'Read-only tools run without asking when gopi.approval is "writes"',
		matchOnDescription: true,
		matchOnDetail: true,
	});
}
