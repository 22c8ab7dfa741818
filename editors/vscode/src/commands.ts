// The palette's and the chat toolbar's commands. Each acts on the active
// session: the chat last used, the side bar's by default.
import { execFile } from "node:child_process";
import * as path from "node:path";
import * as vscode from "vscode";
import { readSettings, resolveBinary } from "./client";
import type { Manager } from "./extension";

export function registerCommands(m: Manager): vscode.Disposable[] {
	const reg = (id: string, f: (...args: any[]) => unknown) =>
		vscode.commands.registerCommand(id, async (...args: any[]) => {
			try {
				return await f(...args);
			} catch (err) {
				void vscode.window.showErrorMessage(`gopi: ${(err as Error).message}`);
			}
		});
	const session = () => m.active();
	return [
		reg("gopi.newSession", () => m.newSidebarSession()),
		reg("gopi.openInTab", () => m.newTabSession()),
		reg("gopi.abort", async () => (await session()).abort()),
		reg("gopi.restart", async () => (await session()).restart()),
		reg("gopi.showLog", () => m.output.show(true)),
		reg("gopi.sessions", async () => {
			const s = await session();
			const res = await s.client.request<{ sessions: { path: string; name?: string; firstMessage: string; messageCount: number; modified: string }[] }>("list_sessions");
			const items = (res?.sessions ?? []).map((x) => ({
				label: x.name || x.firstMessage.split("\n")[0] || "(empty)",
				description: new Date(x.modified).toLocaleString(),
				detail: `${x.messageCount} messages`,
				path: x.path,
			}));
			const pick = await vscode.window.showQuickPick(items, { title: "gopi: resume a session", matchOnDescription: true });
			if (!pick) return;
			await s.client.request("switch_session", { sessionPath: pick.path });
			await m.reload(s);
		}),
		reg("gopi.fork", async () => {
			const s = await session();
			const res = await s.client.request<{ messages: { entryId: string; text: string }[] }>("get_fork_messages");
			const items = (res?.messages ?? []).map((x) => ({ label: x.text.split("\n")[0] || "(empty)", entryId: x.entryId, text: x.text }));
			const pick = await vscode.window.showQuickPick(items, { title: "gopi: fork from a message" });
			if (!pick) return;
			const r = await s.client.request<{ text: string; cancelled: boolean }>("fork", { entryId: pick.entryId });
			if (r?.cancelled) return;
			await m.reload(s);
			s.post({ type: "insert", text: r?.text ?? "", replace: true });
		}),
		reg("gopi.clone", async () => {
			const s = await session();
			await s.client.request("clone");
			await m.reload(s);
		}),
		reg("gopi.rename", async () => {
			const s = await session();
			const name = await vscode.window.showInputBox({ title: "gopi: session name", prompt: "Shown in the session list" });
			if (!name) return;
			await s.client.request("set_session_name", { name });
			void s.refreshStatus();
		}),
		reg("gopi.switchModel", async () => {
			const s = await session();
			const res = await s.client.request<{ models: { id: string; provider: string; name?: string; reasoning?: boolean }[] }>("get_available_models");
			const items = (res?.models ?? []).map((x) => ({ label: x.name || x.id, description: `${x.provider}/${x.id}`, model: x }));
			const pick = await vscode.window.showQuickPick(items, { title: "gopi: switch model", matchOnDescription: true });
			if (!pick) return;
			await s.client.request("set_model", { provider: pick.model.provider, modelId: pick.model.id });
			void s.refreshStatus();
		}),
		reg("gopi.cycleThinking", async () => {
			const s = await session();
			await s.client.request("cycle_thinking_level");
			void s.refreshStatus();
		}),
		reg("gopi.compact", async () => {
			const s = await session();
			const instructions = await vscode.window.showInputBox({ title: "gopi: compact the context", prompt: "Optional: what the summary should keep" });
			if (instructions === undefined) return;
			await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: "gopi: compacting" }, () =>
				s.client.request("compact", instructions ? { customInstructions: instructions } : {}),
			);
			void s.refreshStatus();
		}),
		reg("gopi.export", async () => {
			const s = await session();
			const r = await s.client.request<{ path: string }>("export_html");
			if (r?.path) await vscode.env.openExternal(vscode.Uri.file(r.path));
		}),
		reg("gopi.statusMenu", async () => {
			const s = await session();
			const items = [
				{ label: "$(symbol-class) Switch model", command: "gopi.switchModel" },
				{ label: "$(lightbulb) Cycle thinking level", command: "gopi.cycleThinking" },
				{ label: "$(fold) Compact the context", command: "gopi.compact" },
				{ label: "$(graph) Session statistics", command: "stats" },
			];
			const pick = await vscode.window.showQuickPick(items, { title: "gopi" });
			if (!pick) return;
			if (pick.command !== "stats") return vscode.commands.executeCommand(pick.command);
			const st = await s.client.request<Record<string, unknown>>("get_session_stats");
			const doc = await vscode.workspace.openTextDocument({ language: "json", content: JSON.stringify(st, null, 2) });
			await vscode.window.showTextDocument(doc, { preview: true });
		}),
		reg("gopi.addSelection", async () => {
			const ed = vscode.window.activeTextEditor;
			if (!ed) return;
			const s = await session();
			const rel = path.relative(s.cwd, ed.document.uri.fsPath) || ed.document.uri.fsPath;
			const sel = ed.selection;
			const from = sel.start.line + 1;
			const to = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line : sel.end.line + 1;
			const ref = from === to ? `@${rel}#L${from}` : `@${rel}#L${from}-${to}`;
			s.post({ type: "insert", text: `${ref} ` });
			await m.reveal(s);
		}),
		reg("gopi.doctor", async () => doctor(m)),
	];
}

/** Checks the binary, its version, the handshake and which providers have credentials. */
async function doctor(m: Manager): Promise<string> {
	const st = readSettings();
	const bin = resolveBinary(m.extensionPath, st.path);
	const lines = ["# gopi doctor", "", `- binary: \`${bin.path}\` (from ${bin.source})`];
	const version = await new Promise<string>((resolve) => {
		execFile(bin.path, ["--version"], { timeout: 10_000 }, (err, out) => resolve(err ? `not runnable: ${err.message}` : out.trim()));
	});
	lines.push(`- version: ${version}`);
	const s = await m.active();
	lines.push(`- handshake: ${s.client.running ? `ok (gopi ${s.client.version})` : "gopi is not running"}`);
	if (s.client.running) {
		try {
			const res = await s.client.request<{ models: { provider: string }[] }>("get_available_models");
			const providers = [...new Set((res?.models ?? []).map((x) => x.provider))].sort();
			lines.push(`- providers with credentials: ${providers.length ? providers.join(", ") : "none"}`);
			if (providers.length === 1 && providers[0] === "faux") {
				lines.push("  (only the offline faux model: set an API key in `gopi.env` or your environment)");
			}
		} catch (err) {
			lines.push(`- providers: ${(err as Error).message}`);
		}
	}
	const text = lines.join("\n");
	const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: text });
	await vscode.window.showTextDocument(doc, { preview: true });
	return text;
}
