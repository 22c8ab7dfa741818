// A Session is one chat: one gopi process (GopiClient) and the webview
// that shows it (the side bar's view or an editor tab). It turns webview
// messages into pi/* requests and gopi's events and UI requests into
// webview messages, dialogs, diffs and status bar items.
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { type ClientHost, GopiClient, type MessageRequest, type PiEvent } from "./client";
import type { FromWebview, ToWebview } from "./protocol";
import { Review } from "./review";

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
}

export class Session implements ClientHost, vscode.Disposable {
	readonly client: GopiClient;
	private view: ViewPort | undefined;
	private pending: ToWebview[] = [];
	private ready = false;
	streaming = false;
	status: SessionStatus = { streaming: false };
	/** The file gopi keeps this conversation in, once known. */
	sessionFile: string | undefined;
	/** Each edited file's content before this run first changed it. */
	private before = new Map<string, string | undefined>();
	private changed = new Set<string>();
	private statusItems = new Map<string, vscode.StatusBarItem>();
	/** The title an extension set last (pi/ui/setTitle), for a view attached later. */
	private extTitle: string | undefined;
	private readonly review: Review;
	private readonly onStatusEmitter = new vscode.EventEmitter<Session>();
	readonly onStatus = this.onStatusEmitter.event;
	private disposed = false;
	/** The events this session has seen, newest last (tests read them). */
	readonly events: PiEvent[] = [];

	constructor(
		readonly label: string,
		readonly cwd: string,
		private readonly ctx: { extensionPath: string; output: vscode.OutputChannel; review: Review },
		private start: { sessionFile?: string; continueLast?: boolean } = {},
	) {
		this.client = new GopiClient(ctx.extensionPath, ctx.output, this);
		this.review = ctx.review;
	}

	/** Starts gopi and shows what the session already holds. */
	async open(): Promise<void> {
		try {
			await this.client.start({ cwd: this.cwd, label: this.label, ...this.start });
		} catch (err) {
			this.stopped((err as Error).message);
			throw err;
		}
		await this.loadHistory();
		void this.refreshStatus();
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
		const res = await this.client.request<{ messages: unknown[] }>("get_messages");
		this.post({ type: "history", messages: res?.messages ?? [] });
	}

	private async sendCommands(): Promise<void> {
		try {
			const res = await this.client.request<{ commands?: { name: string; description?: string }[] }>("get_commands");
			this.post({ type: "commands", items: res?.commands ?? [] });
		} catch {
			// Completion of / is a convenience; gopi's error is in the log.
		}
	}

	/** Asks gopi for the model, thinking level and usage the status bar shows. */
	async refreshStatus(): Promise<void> {
		if (!this.client.running) return;
		try {
			const [state, stats] = await Promise.all([
				this.client.request<{ model?: { id: string; provider: string } | null; thinkingLevel?: string; sessionName?: string; sessionFile?: string }>(
					"get_state",
				),
				this.client.request<{ tokens?: { total?: number }; cost?: number; contextUsage?: { percent?: number | null } }>("get_session_stats"),
			]);
			this.status = {
				model: state?.model ? `${state.model.provider}/${state.model.id}` : undefined,
				thinkingLevel: state?.thinkingLevel,
				contextPercent: stats?.contextUsage?.percent ?? null,
				tokens: stats?.tokens?.total,
				cost: stats?.cost,
				streaming: this.streaming,
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
			case "openLink":
				if (/^https?:\/\//i.test(msg.href)) await vscode.env.openExternal(vscode.Uri.parse(msg.href));
				return;
			case "openFile":
				return this.openFile(msg.path, msg.line);
			case "openChange":
				return this.openChange(msg.path);
			case "copy":
				await vscode.env.clipboard.writeText(msg.text);
				return;
			case "restart":
				await vscode.commands.executeCommand("gopi.restart");
				return;
		}
	}

	async send(text: string, images: { data: string; mimeType: string }[] = [], mode: "prompt" | "steer" | "followUp" = "prompt"): Promise<void> {
		const params: Record<string, unknown> = { message: text };
		if (images.length) params.images = images.map((i) => ({ type: "image", data: i.data, mimeType: i.mimeType }));
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

	async abort(): Promise<void> {
		try {
			await this.client.request("abort");
		} catch (err) {
			this.post({ type: "notice", level: "error", text: (err as Error).message });
		}
	}

	/** Removes one queued message: pi clears the whole queue, so the rest go back. */
	private async dequeue(kind: "steering" | "followUp", index: number): Promise<void> {
		try {
			const res = await this.client.request<{ steering?: string[]; followUp?: string[] }>("clear_queue");
			const steering = [...(res?.steering ?? [])];
			const followUp = [...(res?.followUp ?? [])];
			(kind === "steering" ? steering : followUp).splice(index, 1);
			for (const m of steering) await this.client.request("steer", { message: m });
			for (const m of followUp) await this.client.request("follow_up", { message: m });
		} catch (err) {
			this.post({ type: "notice", level: "error", text: (err as Error).message });
		}
	}

	private async completeFiles(query: string): Promise<void> {
		const pattern = query ? `**/*${query.replace(/[[\]{}*?]/g, "")}*` : "**/*";
		const uris = await vscode.workspace.findFiles(new vscode.RelativePattern(this.cwd, pattern), "**/{node_modules,.git}/**", 50);
		const items = uris.map((u) => path.relative(this.cwd, u.fsPath)).sort((a, b) => a.length - b.length || a.localeCompare(b));
		this.post({ type: "files", query, items: items.slice(0, 20) });
	}

	private async openFile(p: string, line?: number): Promise<void> {
		const uri = vscode.Uri.file(path.resolve(this.cwd, p));
		const opts: vscode.TextDocumentShowOptions = {};
		if (line && line > 0) opts.selection = new vscode.Range(line - 1, 0, line - 1, 0);
		await vscode.window.showTextDocument(uri, opts);
	}

	private async openChange(p: string): Promise<void> {
		const abs = path.resolve(this.cwd, p);
		await this.review.showChange(abs, this.before.get(abs));
	}

	// --- ClientHost ---

	event(ev: PiEvent): void {
		this.events.push(ev);
		if (this.events.length > 5000) this.events.splice(0, 1000);
		switch (ev.type) {
			case "agent_start":
				this.setStreaming(true);
				this.before.clear();
				this.changed.clear();
				break;
			case "agent_settled":
				this.setStreaming(false);
				if (this.changed.size) this.post({ type: "changes", run: 0, files: [...this.changed].map((f) => path.relative(this.cwd, f)) });
				void this.refreshStatus();
				break;
			case "tool_execution_start":
				this.noteEdit(ev);
				break;
			case "thinking_level_changed":
			case "session_info_changed":
			case "compaction_end":
				void this.refreshStatus();
				break;
		}
		this.post({ type: "event", event: ev });
	}

	private setStreaming(on: boolean): void {
		this.streaming = on;
		this.status = { ...this.status, streaming: on };
		this.onStatusEmitter.fire(this);
	}

	/** Keeps a file's content from before the run's first edit of it. */
	private noteEdit(ev: PiEvent): void {
		const name = ev.toolName as string;
		const args = (ev.args ?? {}) as { path?: string };
		if ((name !== "edit" && name !== "write") || typeof args.path !== "string") return;
		const abs = path.resolve(this.cwd, args.path);
		this.changed.add(abs);
		if (this.before.has(abs)) return;
		let text: string | undefined;
		try {
			text = fs.readFileSync(abs, "utf8");
		} catch {
			text = undefined; // a new file
		}
		this.before.set(abs, text);
	}

	stopped(reason: string): void {
		this.setStreaming(false);
		this.post({ type: "notice", level: "error", text: `${reason}. The log has the details.`, action: "restart" });
		if (this.disposed) return;
		void vscode.window.showErrorMessage(`gopi: ${reason}.`, "Restart", "Show Log").then((choice) => {
			if (choice === "Restart") void vscode.commands.executeCommand("gopi.restart");
			if (choice === "Show Log") this.ctx.output.show(true);
		});
	}

	ask(p: MessageRequest): Promise<string | undefined> {
		return this.review.ask(this.cwd, p);
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

	/** Restarts gopi on the same session file, so the conversation goes on. */
	async restart(): Promise<void> {
		await this.client.stop();
		if (this.sessionFile) this.start = { sessionFile: this.sessionFile };
		this.post({ type: "reset", label: this.label });
		await this.open();
	}

	/** Shows the history again (after gopi switched, forked or cloned the session). */
	async restartView(): Promise<void> {
		this.post({ type: "reset", label: this.label });
		await this.loadHistory();
		await this.refreshStatus();
	}

	dispose(): void {
		this.disposed = true;
		for (const i of this.statusItems.values()) i.dispose();
		this.statusItems.clear();
		this.onStatusEmitter.dispose();
		void this.client.stop();
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
