// The palette's and the chat toolbar's commands. Each acts on the active
// session: the chat last used, the side bar's by default.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { answerLabels } from "./approval";
import { readSettings, resolveBinary } from "./client";
import type { Manager } from "./extension";
import { showMcpServers } from "./mcp";
import { actions, type Session } from "./session";

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
			const res = await s.client.request("list_sessions");
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
			const res = await s.client.request("get_fork_messages");
			const items = (res?.messages ?? []).map((x) => ({ label: x.text.split("\n")[0] || "(empty)", entryId: x.entryId, text: x.text }));
			const pick = await vscode.window.showQuickPick(items, { title: "gopi: fork from a message" });
			if (!pick) return;
			const r = await s.client.request("fork", { entryId: pick.entryId });
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
		reg("gopi.switchModel", async (arg?: string) => switchModel(await session(), arg)),
		reg("gopi.cycleThinking", async () => {
			const s = await session();
			const r = await s.client.request("cycle_thinking_level");
			if (!r) {
				const model = s.status.model ?? "this model";
				void vscode.window.showInformationMessage(`gopi: ${model} has no thinking levels; its thinking stays off.`);
				return;
			}
			void vscode.window.setStatusBarMessage(`gopi: thinking ${r.level}`, 3000);
			void s.refreshStatus();
		}),
		reg("gopi.compact", async (given?: string) => {
			const s = await session();
			const instructions =
				typeof given === "string"
					? given
					: await vscode.window.showInputBox({ title: "gopi: compact the context", prompt: "Optional: what the summary should keep" });
			if (instructions === undefined) return;
			try {
				await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: "gopi: compacting" }, () =>
					s.client.request("compact", instructions ? { customInstructions: instructions } : {}),
				);
			} catch {
				// The chat says why (compaction_end carries the error); no second toast.
			}
			void s.refreshStatus();
		}),
		reg("gopi.export", async () => exportHtml(await session())),
		// The composer, from anywhere: the view gets focus, then the page puts
		// it in the text box (an empty insert focuses it).
		reg("gopi.focus", async () => {
			await vscode.commands.executeCommand("gopi.chat.focus");
			const s = await m.sidebarCurrent();
			s.post({ type: "insert", text: "" });
		}),
		reg("gopi.stats", async () => {
			const s = await session();
			const st = await s.client.request("get_session_stats");
			s.post({ type: "stats", stats: st ?? {} });
			await m.reveal(s);
		}),
		reg("gopi.mcpServers", async () => showMcpServers(await session())),
		reg("gopi.statusMenu", async () => {
			const items = [
				{ label: "$(symbol-class) Switch model", command: "gopi.switchModel" },
				{ label: "$(lightbulb) Cycle thinking level", command: "gopi.cycleThinking" },
				{ label: "$(fold) Compact the context", command: "gopi.compact" },
				{ label: "$(graph) Session statistics", command: "gopi.stats" },
				{ label: "$(plug) MCP servers", command: "gopi.mcpServers" },
				{ label: "$(key) Add an API key", command: "gopi.setApiKey" },
			];
			const pick = await vscode.window.showQuickPick(items, { title: "gopi" });
			if (pick) await vscode.commands.executeCommand(pick.command);
		}),
		reg("gopi.setApiKey", async () => {
			if (!(await m.keys.ask())) return;
			// gopi reads keys when it starts: every chat restarts, its conversation going on.
			for (const s of await m.sessions()) await s.restart();
			void vscode.window.showInformationMessage("gopi: the key is stored; gopi restarted with it.");
		}),
		reg("gopi.approval.accept", (uri?: vscode.Uri) => answer(m, "Allow", uri)),
		reg("gopi.approval.always", (uri?: vscode.Uri) => answer(m, "Allow always", uri)),
		reg("gopi.approval.reject", (uri?: vscode.Uri) => answer(m, "Deny", uri)),
		reg("gopi.approval.show", async () => {
			const q = m.approvals.oldest;
			if (!q) return;
			const labels: Record<string, string> = q.q.escape
				? { "Allow once": "$(check) Allow once: run it outside the sandbox", Deny: "$(close) Deny: keep the sandbox's result" }
				: { Allow: "$(check) Accept", "Allow always": "$(check-all) Always allow this tool", Deny: "$(close) Reject" };
			const pick = await vscode.window.showQuickPick(
				q.q.answers.map((a) => ({ label: labels[a] ?? a, answer: a })),
				{ title: `gopi: ${q.q.title.split("\n")[0]}`, placeHolder: q.q.title.includes("\n") ? q.q.title : undefined, ignoreFocusOut: true },
			);
			if (pick) m.approvals.answer(pick.answer, q.id);
		}),
		reg("gopi.reviewChanges", async (arg?: number) => {
			const s = await session();
			const files = s.changedFiles();
			if (typeof arg === "number") return s.reviewRun(arg);
			if (!files.length) {
				void vscode.window.showInformationMessage("gopi: no file was changed in this chat yet.");
				return;
			}
			const pick = await vscode.window.showQuickPick(
				files.map((f) => ({ label: f.path, description: `run ${f.run}`, f })),
				{ title: "gopi: files changed in this chat, newest run first", matchOnDescription: true },
			);
			if (pick) await s.showRunChange(pick.f.run, pick.f.abs);
		}),
		// The chat's own / actions (what the webview posts as "action").
		reg("gopi.action", async (s: Session, name: string, args: string) => runAction(s, name, args)),
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
		reg("gopi.rewind", async () => m.rewind.pick(await session())),
		// The chat's Rewind to here (hidden from the palette): the checkpoint before the message sent at timestamp.
		reg("gopi.rewindToMessage", async (s: Session, timestamp: number) => m.rewind.toMessage(s, timestamp)),
		reg("gopi.undoRewind", () => m.rewind.undoRewind()),
		// The sandbox's status bar mark: the gopi.sandbox setting. It has the
		// machine scope, which a remote window shows under Remote, not User.
		reg("gopi.sandboxSettings", () =>
			vscode.env.remoteName
				? vscode.commands.executeCommand("workbench.action.openRemoteSettings", { query: "gopi.sandbox" })
				: vscode.commands.executeCommand("workbench.action.openSettings", "gopi.sandbox"),
		),
	];
}

/** Answers the pending question shown in uri's editor (else the oldest) from the command palette or a toolbar. */
function answer(m: Manager, a: string, uri?: vscode.Uri): void {
	const target = uri instanceof vscode.Uri ? uri : vscode.window.activeTextEditor?.document.uri;
	const id = m.approvals.idFor(target);
	if (!id) {
		void vscode.window.showInformationMessage("gopi: no question is waiting.");
	} else if (!m.approvals.answer(a, id)) {
		void vscode.window.showInformationMessage(`gopi: the question waiting does not offer ${answerLabels[a] ?? a}; its answers are on its card.`);
	}
}

/** The model picker: the current model marked and selected; with arg (provider/id) no picker. */
async function switchModel(s: Session, arg?: string): Promise<void> {
	const [res, state] = await Promise.all([
		s.client.request("get_available_models"),
		s.client.request("get_state"),
	]);
	const models = res?.models ?? [];
	const cur = state?.model ? `${state.model.provider}/${state.model.id}` : "";
	if (typeof arg === "string" && arg.trim()) {
		const want = arg.trim();
		const m = models.find((x) => `${x.provider}/${x.id}` === want) ?? models.find((x) => x.id === want);
		if (!m) throw new Error(`no available model ${want}`);
		await s.client.request("set_model", { provider: m.provider, modelId: m.id });
		void s.refreshStatus();
		return;
	}
	const items = models.map((x) => {
		const ref = `${x.provider}/${x.id}`;
		return { label: `${ref === cur ? "$(check) " : ""}${x.name || x.id}`, description: ref === cur ? `${ref} (current)` : ref, model: x, current: ref === cur };
	});
	const qp = vscode.window.createQuickPick<(typeof items)[number]>();
	qp.title = "gopi: switch model";
	qp.matchOnDescription = true;
	qp.items = items;
	const current = items.find((i) => i.current);
	if (current) qp.activeItems = [current];
	const pick = await new Promise<(typeof items)[number] | undefined>((resolve) => {
		qp.onDidAccept(() => resolve(qp.selectedItems[0] ?? qp.activeItems[0]));
		qp.onDidHide(() => resolve(undefined));
		qp.show();
	});
	qp.dispose();
	if (!pick || pick.current) return;
	await s.client.request("set_model", { provider: pick.model.provider, modelId: pick.model.id });
	void s.refreshStatus();
}

/**
 * Exports the session to HTML where the user says (by default beside the
 * session file, in gopi's agent directory), opens it in VS Code (a
 * webview: it works in a browser or remote window too) and says where it went.
 */
async function exportHtml(s: Session): Promise<void> {
	await s.refreshStatus();
	const base = s.sessionFile ? s.sessionFile.replace(/\.jsonl$/, "") : path.join(s.cwd, "gopi-session");
	const target = await vscode.window.showSaveDialog({
		title: "gopi: export the session to HTML",
		defaultUri: vscode.Uri.file(`${base}.html`),
		filters: { HTML: ["html"] },
		saveLabel: "Export",
	});
	if (!target) return;
	const r = await s.client.request("export_html", { outputPath: target.fsPath });
	const out = r?.path ?? target.fsPath;
	showHtml(out);
	const choice = await vscode.window.showInformationMessage(`gopi: exported the session to ${out}`, "Copy Path", "Open in Browser");
	if (choice === "Copy Path") await vscode.env.clipboard.writeText(out);
	if (choice === "Open in Browser") await vscode.env.openExternal(await vscode.env.asExternalUri(vscode.Uri.file(out)));
}

/** Shows an exported page in a webview, its scripts off (it reads fine without). */
function showHtml(file: string): void {
	const panel = vscode.window.createWebviewPanel("gopi.export", `gopi: ${path.basename(file)}`, vscode.ViewColumn.Active, {
		enableScripts: false,
		localResourceRoots: [],
	});
	panel.webview.html = fs.readFileSync(file, "utf8");
}

/** The chat's / actions; args is what followed the name. */
async function runAction(s: Session, name: string, args: string): Promise<void> {
	const run = (cmd: string, ...a: unknown[]) => vscode.commands.executeCommand(cmd, ...a);
	switch (name) {
		case "compact":
			await run("gopi.compact", args);
			return;
		case "model":
			await run("gopi.switchModel", args);
			return;
		case "thinking":
			await run("gopi.cycleThinking");
			return;
		case "new":
			await run("gopi.newSession");
			return;
		case "fork":
			await run("gopi.fork");
			return;
		case "resume":
			await run("gopi.sessions");
			return;
		case "export":
			await run("gopi.export");
			return;
		case "stats":
			await run("gopi.stats");
			return;
		case "mcp":
			await run("gopi.mcpServers");
			return;
		case "help": {
			const lines = [
				"The chat's / actions: " + actions.map((a) => `/${a.name}`).join(", ") + "; other / names are gopi's prompt templates, skills and extension commands.",
				"Mentions attach content: @file, @file#L5-7, @selection, @problems, @terminal, @git.",
				"Enter sends (Shift+Enter: a new line); while gopi works Enter steers, Alt+Enter queues a follow-up, Escape stops.",
				"Every command is in the Command Palette under gopi:, and every key can be changed in Keyboard Shortcuts.",
			];
			s.post({ type: "notice", level: "info", text: lines.join("\n") });
			return;
		}
	}
	throw new Error(`unknown action /${name}`);
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
			const res = await s.client.request("get_available_models");
			const providers = [...new Set((res?.models ?? []).map((x) => x.provider))].sort();
			lines.push(`- providers with credentials: ${providers.length ? providers.join(", ") : "none"}`);
			if (providers.length === 1 && providers[0] === "faux") {
				lines.push("  (only the offline faux model: set an API key in `gopi.env` or your environment)");
			}
		} catch (err) {
			lines.push(`- providers: ${(err as Error).message}`);
		}
		try {
			const sb = (await s.client.request("get_state"))?.sandbox;
			const asked = st.sandbox === "default" ? "gopi's default" : `\`${st.sandbox}\``;
			if (!sb) lines.push(`- sandbox: none (gopi.sandbox: ${asked})`);
			else if (sb.problem) lines.push(`- sandbox: ${sb.mode}, NOT ENFORCED, the model's commands are refused: ${sb.problem} (gopi.sandbox: ${asked})`);
			else lines.push(`- sandbox: ${sb.mode}, network ${sb.network ? "on" : "off"}, enforced by ${sb.layers.join(", ")} (gopi.sandbox: ${asked})`);
		} catch (err) {
			lines.push(`- sandbox: ${(err as Error).message}`);
		}
	}
	const text = lines.join("\n");
	const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: text });
	await vscode.window.showTextDocument(doc, { preview: true });
	return text;
}
