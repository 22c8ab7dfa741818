// The status bar item: model · thinking level · context % · tokens · cost,
// a spinner while gopi works; its colour warns at 70% and 90% of the
// context window. Clicking opens gopi's quick menu.
import * as vscode from "vscode";
import type { SessionStatus } from "./session";

export class StatusBar implements vscode.Disposable {
	readonly item: vscode.StatusBarItem;

	constructor() {
		this.item = vscode.window.createStatusBarItem("gopi.status", vscode.StatusBarAlignment.Right, 100);
		this.item.name = "gopi";
		this.item.command = "gopi.statusMenu";
		this.show({ streaming: false });
	}

	show(s: SessionStatus): void {
		this.item.text = statusText(s);
		const pct = s.contextPercent ?? 0;
		this.item.backgroundColor =
			pct >= 90 ? new vscode.ThemeColor("statusBarItem.errorBackground") : pct >= 70 ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
		this.item.tooltip = `gopi — ${s.model ?? "no model"}; click for model, thinking level, compaction and stats`;
		this.item.show();
	}

	dispose(): void {
		this.item.dispose();
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

function compact(n: number): string {
	if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
	if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
	return String(n);
}
