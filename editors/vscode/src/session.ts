// A Session is one chat: one gopi process (GopiClient) and the webview
// that shows it (the side bar's view or an editor tab). It turns webview
// messages into pi/* requests and gopi's events and UI requests into
// webview messages, dialogs, diffs and status bar items.
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { type ApprovalQuestion, type ApprovalSurface, type Approvals, answerLabel } from "./approval";
import { type AskResult, type ClientHost, GopiClient, type MessageRequest, type PiEvent } from "./client";
import type { PromptParams, SandboxState, ToolExecutionEnd, ToolExecutionStart } from "./gen/protocol";
import { McpWatch, showMcpServers } from "./mcp";
import { expandMentions, specialMentions } from "./mentions";
import type { ApprovalOutcome, CommandItem, FromWebview, ToWebview } from "./protocol";
import type { Proposal, Review } from "./review";
import type { TerminalLog } from "./terminal";

/** Where a session's messages go: a webview that may not be ready yet. */
export interface ViewPort {
	post(msg: ToWebview): void;
	setTitle(title: string): void;
}

export interface SessionStatus {
	model?: string;
	thinkingLevel?: string;
	contextPercent?: number | null;
	tokens?: number;
	cost?: number;
	streaming: boolean;
	/** The sandbox gopi reports (get_state): null when it runs none, undefined before it said. */
	sandbox?: SandboxState | null;
}

/** The extension's own / actions: the chat runs them as commands instead of sending them to gopi. */
export const actions: CommandItem[] = [
	{ name: "compact", description: "Summarise older messages (optional: what to keep)", source: "action" },
	{ name: "model", description: "Switch the model (optional: provider/id)", source: "action" },
	{ name: "thinking", description: "Cycle the thinking level", source: "action" },
	{ name: "new", description: "Start a new session", source: "action" },
	{ name: "fork", description: "Fork from an earlier message", source: "action" },
	{ name: "resume", description: "Resume a session of this workspace", source: "action" },
	{ name: "export", description: "Export the session to HTML", source: "action" },
	{ name: "stats", description: "Show the session's statistics", source: "action" },
	{ name: "mcp", description: "The MCP servers, their state and tools", source: "action" },
	{ name: "help", description: "What the chat can do, and its keys", source: "action" },
];

/** The files one run changed: each one's text before the run and after it. */
interface RunChanges {
	files: Map<string, { before: string | undefined; after?: string }>;
}

export class Session implements ClientHost, ApprovalSurface, vscode.Disposable {
	readonly client: GopiClient;
	private view: ViewPort | undefined;
	private pending: ToWebview[] = [];
	private ready = false;
	streaming = false;
	status: SessionStatus = { streaming: false };
	/** The file gopi keeps this conversation in, once known. */
	sessionFile: string | undefined;
	/** The run under way (counted from 1), and what it changed so far. */
	private run = 0;
	private runChanges: RunChanges = { files: new Map() };
	/** Each edit or write under way: its file, and the file's text before the run first touched it. */
	private editing = new Map<string, { abs: string; before: string | undefined }>();
	/** Every finished run's changes, by run, for the chat's links. */
	private readonly changesByRun = new Map<number, RunChanges>();
	/** The last prompt sent, for Retry. */
	private lastPrompt: { text: string; images: { data: string; mimeType: string }[] } | undefined;
	/** What waits for the run to end (a restart that applies a setting). */
	private afterRunQueue: (() => Promise<void> | void)[] = [];
	/** An abort was asked for: questions gopi withdraws now were aborted, not timed out. */
	private aborting = false;
	private statusItems = new Map<string, vscode.StatusBarItem>();
	/** The title an extension set last (pi/ui/setTitle), for a view attached later. */
	private extTitle: string | undefined;
	private readonly review: Review;
	private readonly onStatusEmitter = new vscode.EventEmitter<Session>();
	readonly onStatus = this.onStatusEmitter.event;
	private disposed = false;
	/** The events this session has seen, newest last (tests read them). */
	readonly events: PiEvent[] = [];
	/** The MCP servers' changes gopi reports: the open list follows them, a failure warns. */
	readonly mcp = new McpWatch(() => showMcpServers(this));

	constructor(
		readonly label: string,
		readonly cwd: string,
		private readonly ctx: {
			extensionPath: string;
			output: vscode.OutputChannel;
			review: Review;
			approvals: Approvals;
			terminal?: TerminalLog;
			env?: () => Promise<Record<string, string>>;
		},
		private start: { sessionFile?: string; continueLast?: boolean } = {},
	) {
		this.client = new GopiClient(ctx.extensionPath, ctx.output, this, ctx.env);
		this.review = ctx.review;
	}

	/** Starts gopi and shows what the session already holds. */
	async open(): Promise<void> {
		this.mcp.reset();
		try {
			await this.client.start({ cwd: this.cwd, label: this.label, ...this.start });
		} catch (err) {
			this.stopped((err as Error).message);
			throw err;
		}
		await this.loadHistory();
		await this.refreshStatus();
		void this.sendCommands();
	}

	attach(view: ViewPort): void {
		this.view = view;
		this.ready = false;
		// An extension may have set the title before this view existed.
		if (this.extTitle) view.setTitle(this.extTitle);
	}

	/** The webview loaded its script: flush what waited for it. */
	private flush(): void {
		this.ready = true;
		const q = this.pending;
		this.pending = [];
		for (const m of q) this.view?.post(m);
	}

	post(msg: ToWebview): void {
		if (this.view && this.ready) this.view.post(msg);
		else this.pending.push(msg);
	}

	private async loadHistory(): Promise<void> {
		const res = await this.client.request("get_messages");
		const messages = res?.messages ?? [];
		this.post({ type: "history", messages });
		if (!messages.length) void this.welcome();
	}

	/** The first-run view: which model runs, and what to do without a key. */
	private async welcome(): Promise<void> {
		try {
			const [state, models] = await Promise.all([
				this.client.request("get_state"),
				this.client.request("get_available_models"),
			]);
			const providers = [...new Set((models?.models ?? []).map((m) => m.provider))].sort();
			const model = state?.model ? `${state.model.provider}/${state.model.id}` : undefined;
			const offline = providers.every((p) => p === "faux");
			this.post({ type: "welcome", welcome: { model, offline, providers } });
		} catch {
			// gopi stopped meanwhile; stopped() says so.
		}
	}

	/** / completion: the extension's own actions first, then gopi's templates, skills and extension commands. */
	private async sendCommands(): Promise<void> {
		let items: CommandItem[] = [];
		try {
			const res = await this.client.request("get_commands");
			items = res?.commands ?? [];
		} catch (err) {
			this.ctx.output.appendLine(`[gopi] get_commands: ${(err as Error).message}`);
		}
		const own = new Set(actions.map((a) => a.name));
		this.post({ type: "commands", items: [...actions, ...items.filter((c) => !own.has(c.name))] });
	}

	/** Asks gopi for the model, thinking level and usage the status bar shows. */
	async refreshStatus(): Promise<void> {
		if (!this.client.running) return;
		try {
			const [state, stats] = await Promise.all([
				this.client.request("get_state"),
				this.client.request("get_session_stats"),
			]);
			this.status = {
				model: state?.model ? `${state.model.provider}/${state.model.id}` : undefined,
				thinkingLevel: state?.thinkingLevel,
				contextPercent: stats?.contextUsage?.percent ?? null,
				tokens: stats?.tokens?.total,
				cost: stats?.cost,
				streaming: this.streaming,
				sandbox: state?.sandbox ?? null,
			};
			if (state?.sessionName) this.view?.setTitle(state.sessionName);
			if (state?.sessionFile) this.sessionFile = state.sessionFile;
			this.onStatusEmitter.fire(this);
		} catch {
			// gopi stopped meanwhile; stopped() says so.
		}
	}

	/** A message from the webview. */
	async handle(msg: FromWebview): Promise<void> {
		switch (msg.type) {
			case "ready":
				this.flush();
				return;
			case "send":
				return this.send(msg.text, msg.images, msg.mode);
			case "abort":
				return this.abort();
			case "dequeue":
				return this.dequeue(msg.kind, msg.index);
			case "complete":
				return this.completeFiles(msg.query);
			case "action":
				await vscode.commands.executeCommand("gopi.action", this, msg.name, msg.args);
				return;
			case "approve":
				this.ctx.approvals.answer(msg.answer, msg.id);
				return;
			case "retry":
				if (this.lastPrompt) await this.send(this.lastPrompt.text, this.lastPrompt.images, "prompt", true);
				return;
			case "setKey":
				await vscode.commands.executeCommand("gopi.setApiKey");
				return;
			case "switchModel":
				await vscode.commands.executeCommand("gopi.switchModel");
				return;
			case "openLink":
				if (/^https?:\/\//i.test(msg.href)) await vscode.env.openExternal(vscode.Uri.parse(msg.href));
				return;
			case "openFile":
				return this.openFile(msg.path, msg.line);
			case "openChange":
				return this.openChange(msg.path, msg.run);
			case "reviewRun":
				return this.reviewRun(msg.run);
			case "copy":
				await vscode.env.clipboard.writeText(msg.text);
				return;
			case "restart":
				await vscode.commands.executeCommand("gopi.restart");
				return;
			case "rewind":
				await vscode.commands.executeCommand("gopi.rewindToMessage", this, msg.timestamp);
				return;
		}
	}

	/**
	 * Sends a message: its mentions (@file, @selection, …) carry their
	 * content. expanded: text already carries it (a retry).
	 */
	async send(
		text: string,
		images: { data: string; mimeType: string }[] = [],
		mode: "prompt" | "steer" | "followUp" = "prompt",
		expanded = false,
	): Promise<void> {
		const message = expanded
			? text
			: await expandMentions(text, { cwd: this.cwd, terminal: this.ctx.terminal }, (w) => this.post({ type: "notice", level: "warning", text: w }));
		// A restart under way (a setting applied, a key stored, Restart)
		// has no gopi to take the message until the new one answers: the
		// message waits for it rather than failing, as the composer has
		// already let it go.
		await this.restarting;
		if (mode === "prompt" && !this.streaming) this.lastPrompt = { text: message, images };
		const params: PromptParams = { message };
		if (images.length) params.images = images.map((i) => ({ type: "image" as const, data: i.data, mimeType: i.mimeType }));
		try {
			if (this.streaming && mode !== "prompt") {
				await this.client.request(mode === "steer" ? "steer" : "follow_up", params);
			} else if (this.streaming) {
				await this.client.request("steer", params);
			} else {
				await this.client.request("prompt", params);
			}
		} catch (err) {
			this.post({ type: "notice", level: "error", text: (err as Error).message });
		}
	}

	/**
	 * Stops the run. A question still waiting is withdrawn as aborted once
	 * gopi has the abort (so gopi reads it as aborted, not denied).
	 */
	async abort(): Promise<void> {
		this.aborting = true;
		try {
			await this.client.request("abort");
		} catch (err) {
			this.post({ type: "notice", level: "error", text: (err as Error).message });
		} finally {
			this.ctx.approvals.withdraw(this, "aborted");
			this.aborting = false;
		}
	}

	/** Removes one queued message: pi clears the whole queue, so the rest go back. */
	private async dequeue(kind: "steering" | "followUp", index: number): Promise<void> {
		try {
			const res = await this.client.request("clear_queue");
			const steering = [...(res?.steering ?? [])];
			const followUp = [...(res?.followUp ?? [])];
			(kind === "steering" ? steering : followUp).splice(index, 1);
			for (const m of steering) await this.client.request("steer", { message: m });
			for (const m of followUp) await this.client.request("follow_up", { message: m });
		} catch (err) {
			this.post({ type: "notice", level: "error", text: (err as Error).message });
		}
	}

	/** @ completion: the mentions that match query, then the workspace's files. */
	private async completeFiles(query: string): Promise<void> {
		const special = specialMentions.filter((m) => m.startsWith(query.toLowerCase()));
		const pattern = query ? `**/*${query.replace(/[[\]{}*?]/g, "")}*` : "**/*";
		const uris = await vscode.workspace.findFiles(new vscode.RelativePattern(this.cwd, pattern), "**/{node_modules,.git}/**", 50);
		const items = uris.map((u) => path.relative(this.cwd, u.fsPath)).sort((a, b) => a.length - b.length || a.localeCompare(b));
		this.post({ type: "files", query, items: [...special, ...items.slice(0, 20)] });
	}

	private async openFile(p: string, line?: number): Promise<void> {
		const uri = vscode.Uri.file(path.resolve(this.cwd, p));
		const opts: vscode.TextDocumentShowOptions = {};
		if (line && line > 0) opts.selection = new vscode.Range(line - 1, 0, line - 1, 0);
		await vscode.window.showTextDocument(uri, opts);
	}

	/** The diff of what run did to p: that run's before against that run's after. */
	private async openChange(p: string, run: number): Promise<void> {
		const abs = path.resolve(this.cwd, p);
		const c = this.changesByRun.get(run)?.files.get(abs);
		if (!c) {
			this.post({ type: "notice", level: "warning", text: `gopi keeps no change of ${p} from that run (the chat was restarted since).` });
			return;
		}
		await this.review.showChange(abs, c.before, c.after, run);
	}

	/** Every file run changed, in VS Code's multi-file diff editor (each file's before against after). */
	async reviewRun(run: number): Promise<void> {
		const c = this.changesByRun.get(run);
		if (!c) return;
		const entries = [...c.files].map(([abs, f]) => {
			const [left, right] = this.review.changeUris(abs, f.before, f.after);
			return [vscode.Uri.file(abs), left, right];
		});
		await vscode.commands.executeCommand("vscode.changes", `gopi: run ${run} changed ${entries.length === 1 ? "1 file" : `${entries.length} files`}`, entries);
	}

	/** Every file changed in the chat's runs, newest run first: for the review list. */
	changedFiles(): { run: number; path: string; abs: string }[] {
		const out: { run: number; path: string; abs: string }[] = [];
		for (const [run, c] of [...this.changesByRun].reverse()) {
			for (const abs of c.files.keys()) out.push({ run, path: path.relative(this.cwd, abs), abs });
		}
		return out;
	}

	/** Opens the diff of one run's change of a file. */
	showRunChange(run: number, abs: string): Promise<void> {
		return this.openChange(path.relative(this.cwd, abs), run);
	}

	// --- ClientHost ---

	event(ev: PiEvent): void {
		this.events.push(ev);
		if (this.events.length > 5000) this.events.splice(0, 1000);
		switch (ev.type) {
			case "agent_start":
				this.setStreaming(true);
				this.run++;
				this.runChanges = { files: new Map() };
				this.editing.clear();
				break;
			case "agent_settled":
				this.setStreaming(false);
				this.endRun();
				void this.refreshStatus();
				this.runQueued();
				break;
			case "tool_execution_start":
				this.noteEdit(ev);
				break;
			case "tool_execution_end":
				this.noteEditEnd(ev);
				break;
			case "thinking_level_changed":
			case "session_info_changed":
			case "compaction_end":
				void this.refreshStatus();
				break;
			case "mcp_server_state":
				this.mcp.changed(ev.server);
				break;
		}
		this.post({ type: "event", event: ev });
	}

	private setStreaming(on: boolean): void {
		this.streaming = on;
		this.status = { ...this.status, streaming: on };
		this.onStatusEmitter.fire(this);
	}

	/**
	 * An edit or write starts: keeps the file's text from before the run
	 * first touched it. Nothing counts as changed until the call succeeds.
	 */
	private noteEdit(ev: ToolExecutionStart): void {
		const name = ev.toolName;
		const args = (ev.args ?? {}) as { path?: string };
		if ((name !== "edit" && name !== "write") || typeof args.path !== "string") return;
		const abs = path.resolve(this.cwd, args.path);
		const known = this.runChanges.files.get(abs);
		// The text an earlier run left is exact; reading the file now is too
		// when gopi asks first (the tool waits for the answer), and may be
		// late without approval, when the tool can be done before this event
		// is read.
		const before = known ? known.before : (this.lastAfter(abs) ?? { text: readText(abs) }).text;
		this.editing.set(String(ev.toolCallId ?? ""), { abs, before });
	}

	/** Runs f once the current run has ended (at once when none runs). */
	afterRun(f: () => Promise<void> | void): void {
		if (!this.streaming) {
			void f();
			return;
		}
		this.afterRunQueue = [f];
	}

	private runQueued(): void {
		const q = this.afterRunQueue;
		this.afterRunQueue = [];
		// After this event's own handlers: a restart must not cut them off.
		setTimeout(() => {
			for (const f of q) void f();
		}, 0);
	}

	/** The text the newest run that changed abs left it with, if this chat has one. */
	private lastAfter(abs: string): { text: string | undefined } | undefined {
		for (const c of [...this.changesByRun.values()].reverse()) {
			const f = c.files.get(abs);
			if (f) return { text: f.after };
		}
		return undefined;
	}

	/** An edit or write ended: the file changed only when it succeeded. */
	private noteEditEnd(ev: ToolExecutionEnd): void {
		const id = String(ev.toolCallId ?? "");
		const e = this.editing.get(id);
		if (!e) return;
		this.editing.delete(id);
		if (ev.isError) return;
		if (!this.runChanges.files.has(e.abs)) this.runChanges.files.set(e.abs, { before: e.before });
	}

	/** The run ended: what it changed is kept as it is now, and listed in the chat. */
	private endRun(): void {
		const c = this.runChanges;
		this.editing.clear();
		if (!c.files.size) return;
		for (const [abs, f] of c.files) f.after = readText(abs) ?? "";
		this.changesByRun.set(this.run, c);
		this.runChanges = { files: new Map() };
		this.post({ type: "changes", run: this.run, files: [...c.files.keys()].map((f) => path.relative(this.cwd, f)) });
	}

	stopped(reason: string): void {
		// No gopi, no sandbox to report: its mark goes until one runs again.
		this.status = { ...this.status, sandbox: undefined };
		this.setStreaming(false);
		this.post({ type: "notice", level: "error", text: `${reason}. The log has the details.`, action: "restart" });
		if (this.disposed) return;
		void vscode.window.showErrorMessage(`gopi: ${reason}.`, "Restart", "Show Log").then((choice) => {
			if (choice === "Restart") void vscode.commands.executeCommand("gopi.restart");
			if (choice === "Show Log") this.ctx.output.show(true);
		});
	}

	/**
	 * A question from gopi. An approval (details.toolName) shows on the tool
	 * card, in the status bar and, for an edit or write, as an editable
	 * proposal with Accept and Reject on its toolbar; any of them answers it.
	 * Anything else is a plain VS Code message.
	 */
	async ask(p: MessageRequest, token?: vscode.CancellationToken): Promise<AskResult> {
		const titles = (p.actions ?? []).map((a) => a.title);
		const d = p.details;
		if (!d || typeof d.toolName !== "string") {
			const show = p.type === 1 ? vscode.window.showErrorMessage : p.type === 2 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
			return { title: await show(p.message, ...titles) };
		}
		const args = (d.args ?? {}) as { path?: string; content?: string; edits?: { oldText: string; newText: string }[] };
		let proposal: Proposal | undefined;
		let shown: vscode.Uri | undefined;
		if ((d.toolName === "edit" || d.toolName === "write") && typeof args.path === "string") {
			const abs = typeof d.resolvedPath === "string" && d.resolvedPath ? d.resolvedPath : path.resolve(this.cwd, args.path);
			({ proposal, shown } = await this.review.showProposal(abs, d.toolName, args, d.diff));
		}
		try {
			const toolCallId = typeof d.toolCallId === "string" ? d.toolCallId : this.lastCallOf(d.toolName);
			const escape = d.sandboxEscape === true;
			const a = await this.ctx.approvals.ask({ toolName: d.toolName, toolCallId, title: p.message, answers: titles, proposal: proposal?.uri, escape }, this, token);
			if (a.answer === undefined) return {};
			if (proposal && a.answer !== "Deny") {
				const content = finalContent(this.review.finalText(proposal), proposal.proposed);
				if (content !== undefined) return { title: a.answer, content };
			}
			return { title: a.answer };
		} finally {
			if (shown) await this.review.close(shown);
		}
	}

	/** The id of the newest call of tool seen in this run (for a gopi that does not name it). */
	private lastCallOf(tool: string): string | undefined {
		for (let i = this.events.length - 1; i >= 0; i--) {
			const ev = this.events[i];
			if (ev.type === "tool_execution_start" && ev.toolName === tool) return String(ev.toolCallId ?? "");
			if (ev.type === "agent_start") break;
		}
		return undefined;
	}

	// --- ApprovalSurface: the chat's part of a question ---

	show(id: string, q: ApprovalQuestion): void {
		this.post({
			type: "approval",
			id,
			toolCallId: q.toolCallId,
			toolName: q.toolName,
			title: q.title,
			options: q.answers.map((a) => ({ answer: a, label: answerLabel(q, a) })),
			escape: q.escape || undefined,
		});
	}

	done(id: string, outcome: ApprovalOutcome): void {
		// A question gopi withdrew without an abort of ours timed out.
		this.post({ type: "approvalDone", id, outcome: outcome === "aborted" && !this.aborting && this.streaming ? "timedOut" : outcome });
	}

	async input(p: { title: string; placeholder?: string }, token?: vscode.CancellationToken): Promise<string | undefined> {
		// A withdrawn dialog (gopi's timeout, an abort) closes the box.
		return vscode.window.showInputBox({ title: p.title, placeHolder: p.placeholder, ignoreFocusOut: true }, token);
	}

	async editor(p: { title: string; prefill?: string }, token?: vscode.CancellationToken): Promise<string | undefined> {
		return this.review.editText(p.title, p.prefill ?? "", token);
	}

	setStatus(key: string, raw: string | null): void {
		let item = this.statusItems.get(key);
		const text = raw === null ? null : plain(raw);
		if (text === null || text === "") {
			item?.dispose();
			this.statusItems.delete(key);
			return;
		}
		if (!item) {
			item = vscode.window.createStatusBarItem(`gopi.ext.${key}`, vscode.StatusBarAlignment.Left, 50);
			item.name = `gopi: ${key}`;
			this.statusItems.set(key, item);
		}
		item.text = text;
		item.show();
	}

	setWidget(key: string, lines: string[] | null, placement?: string): void {
		this.post({ type: "widget", key, lines: lines && lines.map((l) => plain(String(l))), placement });
	}

	setTitle(raw: string): void {
		const title = plain(raw);
		this.extTitle = title;
		this.view?.setTitle(title);
		this.post({ type: "title", title });
	}

	setEditorText(text: string): void {
		this.post({ type: "insert", text, replace: true });
	}

	/**
	 * Restarts gopi on the same session file, so the conversation goes on.
	 * Restarts asked for while one runs wait for it: one gopi at a time.
	 * Messages sent meanwhile wait for the last of them (send).
	 */
	restart(): Promise<void> {
		const next = this.restarting.then(() => this.restartNow());
		this.restarting = next.catch(() => undefined);
		return next;
	}

	private restarting: Promise<void> = Promise.resolve();

	private async restartNow(): Promise<void> {
		this.ctx.approvals.withdraw(this, "aborted");
		await this.client.stop();
		if (this.sessionFile) this.start = { sessionFile: this.sessionFile };
		this.post({ type: "reset", label: this.label });
		await this.open();
	}

	/**
	 * A fresh conversation in the same gopi, as pi's new_session: the model
	 * and thinking level follow gopi's rule for a new session. false when an
	 * extension cancelled it.
	 */
	async newSession(): Promise<boolean> {
		this.ctx.approvals.withdraw(this, "aborted");
		const r = await this.client.request("new_session");
		if (r?.cancelled) return false;
		this.changesByRun.clear();
		this.lastPrompt = undefined;
		await this.restartView();
		return true;
	}

	/** Shows the history again (after gopi switched, forked or cloned the session). */
	async restartView(): Promise<void> {
		this.post({ type: "reset", label: this.label });
		await this.loadHistory();
		await this.refreshStatus();
	}

	dispose(): void {
		this.disposed = true;
		this.ctx.approvals.withdraw(this, "aborted");
		for (const i of this.statusItems.values()) i.dispose();
		this.statusItems.clear();
		this.onStatusEmitter.dispose();
		this.mcp.dispose();
		void this.client.stop();
		// A restart under way would start a gopi nobody stops: stop that one too.
		void this.restarting.then(() => this.client.stop());
	}
}

const bom = "\uFEFF";

/**
 * What an accepted proposal's answer carries: the text the user left in
 * it, or undefined when it is gopi's own. gopi writes the content byte for
 * byte and VS Code shows a document without its byte order mark, so a
 * proposal that had one keeps it, and a difference in it alone is none.
 */
export function finalContent(final: string, proposed: string): string | undefined {
	const strip = (t: string) => (t.startsWith(bom) ? t.slice(1) : t);
	if (strip(final) === strip(proposed)) return undefined;
	return proposed.startsWith(bom) && !final.startsWith(bom) ? bom + final : final;
}

/** A file's text, or undefined when there is none (a new file). */
function readText(abs: string): string | undefined {
	try {
		return fs.readFileSync(abs, "utf8");
	} catch {
		return undefined;
	}
}

/**
 * Text an extension styled for pi's terminal (ctx.ui.theme.fg and friends
 * wrap it in ANSI colour codes), as plain text for VS Code: escape
 * sequences (CSI, OSC such as hyperlinks) and other control characters
 * but tab and newline removed.
 */
const ansi = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])|[\x00-\x08\x0b-\x1f\x7f]/g;

export function plain(s: string): string {
	return s.replace(ansi, "");
}
