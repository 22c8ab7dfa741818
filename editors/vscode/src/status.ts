// The status bar items: gopi's own (model · thinking level · context % ·
// tokens · cost, a spinner while gopi works; its colour warns at 70% and
// 90% of the context window; clicking opens gopi's quick menu) and the
// sandbox's mark beside it, which says what gopi reports for the model's
// commands (get_state's "sandbox"), not what the setting asked for, and
// opens the gopi.sandbox setting when clicked.
import * as vscode from "vscode";
import type { SandboxState } from "./gen/protocol";
import type { SessionStatus } from "./session";

export class StatusBar implements vscode.Disposable {
	readonly item: vscode.StatusBarItem;
	readonly sandbox: vscode.StatusBarItem;

	constructor() {
		this.item = vscode.window.createStatusBarItem("gopi.status", vscode.StatusBarAlignment.Right, 100);
		this.item.name = "gopi";
		this.item.command = "gopi.statusMenu";
		this.sandbox = vscode.window.createStatusBarItem("gopi.sandbox", vscode.StatusBarAlignment.Right, 99);
		this.sandbox.name = "gopi: sandbox";
		this.sandbox.command = "gopi.sandboxSettings";
		this.show({ streaming: false });
	}

	show(s: SessionStatus): void {
		this.item.text = statusText(s);
		const pct = s.contextPercent ?? 0;
		this.item.backgroundColor =
			pct >= 90 ? new vscode.ThemeColor("statusBarItem.errorBackground") : pct >= 70 ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
		this.item.tooltip = `gopi — ${s.model ?? "no model"}; click for model, thinking level, compaction and stats`;
		this.item.show();
		const mark = sandboxMark(s.sandbox);
		if (!mark) {
			this.sandbox.hide();
			return;
		}
		this.sandbox.text = mark.text;
		this.sandbox.tooltip = mark.tooltip;
		// Not enforced: gopi refuses every command, an error rather than a warning.
		this.sandbox.backgroundColor = mark.warning ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
		this.sandbox.accessibilityInformation = { label: mark.label, role: "button" };
		this.sandbox.show();
	}

	dispose(): void {
		this.item.dispose();
		this.sandbox.dispose();
	}
}

export function statusText(s: SessionStatus): string {
	const parts = [s.streaming ? "$(sync~spin) gopi" : "$(comment-discussion) gopi"];
	if (s.model) parts.push(s.model.split("/").pop() ?? s.model);
	if (s.thinkingLevel && s.thinkingLevel !== "off") parts.push(`think ${s.thinkingLevel}`);
	if (s.contextPercent !== undefined && s.contextPercent !== null) parts.push(`${Math.round(s.contextPercent)}%`);
	if (s.tokens) parts.push(`${compact(s.tokens)} tok`);
	if (s.cost) parts.push(`$${s.cost.toFixed(s.cost < 1 ? 3 : 2)}`);
	return parts.join(" · ");
}

/** What the sandbox's status bar item shows: its text, tooltip, screen reader label and whether it warns. */
export interface SandboxMark {
	text: string;
	tooltip: string;
	label: string;
	warning: boolean;
}

const change = "Click to change it (the gopi.sandbox setting).";

/**
 * The sandbox's mark for what get_state reported: sb null (gopi runs no
 * sandbox), or its mode, network, layers and, when the kernel cannot
 * enforce the mode, the problem (gopi then refuses the model's commands).
 * undefined: gopi has not said yet, and nothing shows.
 */
export function sandboxMark(sb: SandboxState | null | undefined): SandboxMark | undefined {
	if (sb === undefined) return undefined;
	if (sb === null) {
		return {
			text: "$(unlock) no sandbox",
			tooltip: `gopi runs no sandbox: the model's commands run with all your rights, and reach the network.\n\n${change}`,
			label: "gopi runs no sandbox",
			warning: false,
		};
	}
	if (sb.problem || !sb.layers?.length) {
		return {
			text: `$(warning) ${sb.mode}: not enforced`,
			tooltip: `gopi's sandbox (${sb.mode}) cannot be enforced here, so gopi refuses every command of the model rather than run it unconfined.\n\n${sb.problem ?? "gopi reports no layer that confines the commands."}\n\n${change}`,
			label: `gopi's sandbox ${sb.mode} cannot be enforced here: the model's commands are refused`,
			warning: true,
		};
	}
	const writes =
		sb.mode === "read-only"
			? "The model's commands may read anything, and write only in their own temporary folder."
			: sb.mode === "workspace-write"
				? "The model's commands may read anything, and write only in the project, their own temporary folder and the writableRoots of gopi's settings."
				: `The model's commands run in gopi's sandbox (${sb.mode}).`;
	const network = sb.network
		? "Network: on (settings.json allows it)."
		: "Network: off (no TCP or UDP, loopback included; Unix sockets stay open).";
	return {
		text: `$(shield) ${sb.mode}${sb.network ? " $(globe)" : ""}`,
		tooltip: `gopi's sandbox: ${sb.mode}. ${writes}\n${network}\nEnforced by: ${sb.layers.join(", ")}.\n\n${change}`,
		label: `gopi's sandbox: ${sb.mode}, network ${sb.network ? "on" : "off"}`,
		warning: false,
	};
}

function compact(n: number): string {
	if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
	if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
	return String(n);
}
