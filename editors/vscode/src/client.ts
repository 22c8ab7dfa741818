// GopiClient owns one gopi process: `gopi --mode jsonrpc`, started through
// vscode-languageclient, so dialogs, progress, tracing and the output
// channel are VS Code's own. pi/* requests go out through it; pi/event
// notifications and gopi's UI requests come back to a ClientHost.
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import {
	CloseAction,
	ErrorAction,
	LanguageClient,
	type LanguageClientOptions,
	type ServerOptions,
	State,
	type StaticFeature,
} from "vscode-languageclient/node";
import type { ApprovalDetails, CommandName, CommandParams, CommandResult, Event } from "./gen/protocol";

/** An event as gopi sends it in pi/event (gen/protocol.ts, from core/api). */
export type PiEvent = Event;

/** What a session does with what gopi sends it. */
export interface ClientHost {
	event(ev: PiEvent): void;
	/** gopi stopped without being asked to; the host offers a restart. */
	stopped(reason: string): void;
	/** A question (window/showMessageRequest); token is cancelled when gopi withdraws it (an abort, a timeout). */
	ask(p: MessageRequest, token?: vscode.CancellationToken): Promise<AskResult>;
	/** token is cancelled when gopi withdraws the dialog (a timeout, an abort). */
	input(p: { title: string; placeholder?: string }, token?: vscode.CancellationToken): Promise<string | undefined>;
	editor(p: { title: string; prefill?: string }, token?: vscode.CancellationToken): Promise<string | undefined>;
	setStatus(key: string, text: string | null): void;
	setWidget(key: string, lines: string[] | null, placement?: string): void;
	setTitle(title: string): void;
	setEditorText(text: string): void;
}

export interface MessageRequest {
	type: number;
	message: string;
	actions?: { title: string }[];
	/** gopi's approval gate: the tool, its call, its arguments, a unified diff and the real target. */
	details?: ApprovalDetails;
}

/**
 * An answer to window/showMessageRequest: the title chosen (none: dismissed)
 * and, for an approved edit or write the user changed, the file's final text.
 */
export interface AskResult {
	title?: string;
	content?: string;
}

export interface StartOptions {
	cwd: string;
	/** A session file to open, or "continue" for the workspace's last. */
	sessionFile?: string;
	continueLast?: boolean;
	label: string;
}

/** Settings under `gopi.*` that shape how gopi starts. */
export function readSettings() {
	const c = vscode.workspace.getConfiguration("gopi");
	return {
		path: c.get<string>("path", ""),
		args: c.get<string[]>("args", []),
		env: c.get<Record<string, string>>("env", {}),
		provider: c.get<string>("provider", ""),
		model: c.get<string>("model", ""),
		thinkingLevel: c.get<string>("thinkingLevel", ""),
		approval: c.get<string>("approval", "writes"),
		sandbox: c.get<string>("sandbox", "default"),
	};
}

/** The values gopi.sandbox takes: "default" leaves the choice to gopi, the others are `--sandbox`'s. */
export const sandboxModes = ["default", "off", "read-only", "workspace-write"];

/**
 * The arguments gopi.sandbox adds: none for "default", else `--sandbox`
 * with it. Any other value is refused rather than dropped, so gopi never
 * starts with less confinement than the setting asked for.
 */
export function sandboxArgs(setting: string): string[] {
	if (!sandboxModes.includes(setting)) {
		throw new Error(`the gopi.sandbox setting is ${JSON.stringify(setting)}; it must be one of ${sandboxModes.join(", ")}`);
	}
	return setting === "default" ? [] : ["--sandbox", setting];
}

/**
 * The gopi binary: the `gopi.path` setting, else the one this extension's
 * platform package ships in bin/, else `gopi` on PATH.
 */
export function resolveBinary(extensionPath: string, setting: string): { path: string; source: string } {
	if (setting) return { path: setting, source: "the gopi.path setting" };
	const exe = process.platform === "win32" ? "gopi.exe" : "gopi";
	const bundled = path.join(extensionPath, "bin", exe);
	if (fs.existsSync(bundled)) return { path: bundled, source: "this extension" };
	return { path: exe, source: "PATH" };
}

export class GopiClient implements vscode.Disposable {
	private lc: LanguageClient | undefined;
	/** Whether the running client was asked to stop: one flag per process, so a late exit of the last one is not taken for this one's. */
	private stopState = { stopping: false };
	/** serverInfo.version from initialize, once started. */
	version = "";
	binary = "";

	constructor(
		private readonly extensionPath: string,
		private readonly output: vscode.OutputChannel,
		private readonly host: ClientHost,
		/** Extra environment from the extension (API keys kept in SecretStorage). */
		private readonly secretEnv?: () => Promise<Record<string, string>>,
	) {}

	get running(): boolean {
		return this.lc?.state === State.Running;
	}

	async start(o: StartOptions): Promise<void> {
		const s = readSettings();
		const bin = resolveBinary(this.extensionPath, s.path);
		this.binary = bin.path;
		// VS Code's workspace trust is gopi's project trust: a trusted
		// folder's own .pi settings, extensions, skills and prompts load; in
		// Restricted Mode gopi leaves them out (and runs none of its code).
		const trust = vscode.workspace.isTrusted ? "--approve" : "--no-approve";
		const args = ["--mode", "jsonrpc", "--approval", s.approval, ...sandboxArgs(s.sandbox), trust, ...s.args];
		const state = { stopping: false };
		const secrets = (await this.secretEnv?.()) ?? {};
		const serverOptions: ServerOptions = {
			command: bin.path,
			args,
			options: { cwd: o.cwd, env: { ...process.env, ...secrets, ...s.env } },
		};
		// Deltas merged over 16 ms: the page paints once a frame anyway.
		const init: Record<string, unknown> = { coalesceDeltasMs: 16 };
		if (s.provider) init.provider = s.provider;
		if (s.model) init.model = s.model;
		if (s.thinkingLevel) init.thinkingLevel = s.thinkingLevel;
		if (o.sessionFile) init.sessionFile = o.sessionFile;
		if (o.continueLast) init.continue = true;
		const clientOptions: LanguageClientOptions = {
			documentSelector: [],
			outputChannel: quietOnStop(this.output, () => state.stopping),
			initializationOptions: init,
			workspaceFolder: vscode.workspace.getWorkspaceFolder(vscode.Uri.file(o.cwd)),
			connectionOptions: { maxRestartCount: 0 },
			errorHandler: {
				error: () => ({ action: ErrorAction.Continue, handled: true }),
				closed: () => {
					if (!state.stopping) this.host.stopped(`gopi (${bin.path}) exited`);
					return { action: CloseAction.DoNotRestart, handled: true };
				},
			},
			initializationFailedHandler: (err) => {
				this.host.stopped(`gopi (${bin.path}, from ${bin.source}) did not start: ${String((err as Error)?.message ?? err)}`);
				return false;
			},
		};
		const lc = new LanguageClient("gopi", `gopi: ${o.label}`, serverOptions, clientOptions);
		lc.registerFeature(piUiFeature);
		this.lc = lc;
		this.stopState = state;
		lc.onNotification("pi/event", (ev: PiEvent) => this.host.event(ev));
		lc.onNotification("pi/ui/setStatus", (p: { statusKey: string; statusText: string | null }) =>
			this.host.setStatus(p.statusKey, p.statusText ?? null),
		);
		lc.onNotification("pi/ui/setWidget", (p: { widgetKey: string; widgetLines?: string[] | null; widgetPlacement?: string }) =>
			this.host.setWidget(p.widgetKey, p.widgetLines ?? null, p.widgetPlacement),
		);
		lc.onNotification("pi/ui/setTitle", (p: { title: string }) => this.host.setTitle(p.title));
		lc.onNotification("pi/ui/setEditorText", (p: { text: string }) => this.host.setEditorText(p.text));
		// Replaces the client's own handler: an approval carries a diff to
		// review, may carry back the user's final text, and is withdrawn
		// ($/cancelRequest) when gopi stops waiting.
		lc.onRequest("window/showMessageRequest", async (p: MessageRequest, token: vscode.CancellationToken) => {
			const r = await this.host.ask(p, token);
			if (r.title === undefined) return null;
			return r.content === undefined ? { title: r.title } : { title: r.title, content: r.content };
		});
		lc.onRequest("pi/ui/input", async (p: { title: string; placeholder?: string }, token: vscode.CancellationToken) => {
			const value = await this.host.input(p, token);
			return value === undefined ? { cancelled: true } : { value };
		});
		lc.onRequest("pi/ui/editor", async (p: { title: string; prefill?: string }, token: vscode.CancellationToken) => {
			const value = await this.host.editor(p, token);
			return value === undefined ? { cancelled: true } : { value };
		});
		try {
			await lc.start();
		} catch (err) {
			this.lc = undefined;
			throw new Error(`gopi (${bin.path}, from ${bin.source}) did not start: ${(err as Error).message ?? err}`);
		}
		const info = lc.initializeResult?.serverInfo;
		this.version = info?.version ?? "";
	}

	/** Sends pi/<command>; rejects with gopi's error text. Params and result are core/api's (gen/protocol.ts). */
	async request<C extends CommandName>(command: C, params: CommandParams<C> = {}): Promise<CommandResult<C>> {
		if (!this.lc || !this.running) throw new Error("gopi is not running");
		return this.lc.sendRequest<CommandResult<C>>(`pi/${command}`, params);
	}

	async stop(): Promise<void> {
		const lc = this.lc;
		this.lc = undefined;
		if (!lc) return;
		this.stopState.stopping = true;
		try {
			if (lc.state !== State.Stopped) await lc.stop(2000);
		} catch {
			// Stopping a client whose process already died throws; nothing is left to stop.
		}
	}

	dispose(): void {
		void this.stop();
	}
}

/**
 * The output channel the language client logs to, but for the line it
 * writes when gopi exits after being asked to stop ("[Error …] Server
 * process exited with code 0."), which is no error: that one reads as
 * what it is.
 */
function quietOnStop(ch: vscode.OutputChannel, stopping: () => boolean): vscode.OutputChannel {
	const exited = /^\[Error - [^\]]*\] Server process exited with code 0\.$/;
	return new Proxy(ch, {
		get(target, prop, receiver) {
			if (prop === "appendLine") {
				return (line: string) => target.appendLine(stopping() && exited.test(line) ? "[Info] gopi exited (code 0)." : line);
			}
			const v = Reflect.get(target, prop, receiver);
			return typeof v === "function" ? v.bind(target) : v;
		},
	});
}

/**
 * Declares that this client shows gopi's dialogs (select, confirm, input,
 * editor) and its status, widget and title notifications.
 */
const piUiFeature: StaticFeature = {
	fillClientCapabilities(caps) {
		const c = caps as { experimental?: Record<string, unknown> };
		c.experimental = { ...(c.experimental ?? {}), pi: { ui: true } };
	},
	initialize() {},
	getState() {
		return { kind: "static" };
	},
	clear() {},
};
