// gopi for VS Code: a chat in the side bar (and in editor tabs), each
// backed by its own `gopi --mode jsonrpc` process.
import * as os from "node:os";
import * as vscode from "vscode";
import { Approvals } from "./approval";
import { registerCommands } from "./commands";
import { watchSettings } from "./config";
import { ApiKeys } from "./keys";
import { Review } from "./review";
import { Rewind } from "./rewind";
import { Session } from "./session";
import { StatusBar } from "./status";
import { TerminalLog } from "./terminal";
import { openTab, SidebarView } from "./views";

export class Manager implements vscode.Disposable {
	readonly output: vscode.OutputChannel;
	readonly review = new Review();
	readonly approvals = new Approvals();
	readonly status = new StatusBar();
	readonly terminal = new TerminalLog();
	readonly rewind = new Rewind((s) => this.reveal(s));
	readonly keys: ApiKeys;
	readonly sidebar: SidebarView;
	private sidebarSession: Promise<Session> | undefined;
	private tabs = new Set<Session>();
	private last: Session | undefined;
	private tabCount = 0;
	private readonly disposables: vscode.Disposable[] = [];

	constructor(readonly context: vscode.ExtensionContext) {
		this.output = vscode.window.createOutputChannel("gopi");
		this.keys = new ApiKeys(context.secrets);
		this.sidebar = new SidebarView(context.extensionUri, () => this.sidebarCurrent());
	}

	get extensionPath(): string {
		return this.context.extensionUri.fsPath;
	}

	private cwd(): string {
		return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
	}

	private make(label: string, start: { continueLast?: boolean } = {}): Session {
		const s = new Session(
			label,
			this.cwd(),
			{
				extensionPath: this.extensionPath,
				output: this.output,
				review: this.review,
				approvals: this.approvals,
				terminal: this.terminal,
				env: () => this.keys.env(),
			},
			start,
		);
		s.onStatus((x) => {
			this.last = x;
			this.status.show(x.status);
			void vscode.commands.executeCommand("setContext", "gopi.streaming", x.streaming);
		});
		return s;
	}

	/** The side bar's session, started on first use. */
	sidebarCurrent(): Promise<Session> {
		if (!this.sidebarSession) {
			const resume = vscode.workspace.getConfiguration("gopi").get<boolean>("resumeLastSession", true);
			const s = this.make("Chat", { continueLast: resume });
			this.sidebarSession = s.open().then(
				() => s,
				() => s, // the session shows why it did not start, with Restart
			);
			this.last ??= s;
		}
		return this.sidebarSession;
	}

	/** The session commands act on: the chat last used. */
	async active(): Promise<Session> {
		return this.last ?? this.sidebarCurrent();
	}

	/** Every chat open now: the side bar's and the tabs'. */
	async sessions(): Promise<Session[]> {
		const out = [...this.tabs];
		if (this.sidebarSession) out.unshift(await this.sidebarSession);
		return out;
	}

	/**
	 * A fresh conversation in the side bar: pi's new_session in the same
	 * gopi, so the model and thinking level follow gopi's rule for a new
	 * session (a new process only when gopi is not running).
	 */
	async newSidebarSession(): Promise<Session> {
		const cur = this.sidebarSession && (await this.sidebarSession);
		if (cur?.client.running) {
			await cur.newSession();
			this.last = cur;
			await vscode.commands.executeCommand("gopi.chat.focus");
			return cur;
		}
		const old = this.sidebarSession;
		const s = this.make("Chat");
		this.sidebarSession = s.open().then(
			() => s,
			() => s,
		);
		this.last = s;
		this.sidebar.show(s);
		void old?.then((o) => o.dispose());
		await vscode.commands.executeCommand("gopi.chat.focus");
		return this.sidebarSession;
	}

	async newTabSession(): Promise<Session> {
		const s = this.make(`Chat ${++this.tabCount + 1}`);
		this.tabs.add(s);
		this.last = s;
		openTab(this.context.extensionUri, s, () => {
			this.tabs.delete(s);
			if (this.last === s) this.last = undefined;
			s.dispose();
		});
		await s.open().catch(() => undefined);
		return s;
	}

	/** After a session switch, fork or clone: the chat shows the new history. */
	async reload(s: Session): Promise<void> {
		await s.restartView();
	}

	async reveal(s: Session): Promise<void> {
		if (!this.tabs.has(s)) await vscode.commands.executeCommand("gopi.chat.focus");
	}

	dispose(): void {
		for (const t of this.tabs) t.dispose();
		void this.sidebarSession?.then((s) => s.dispose());
		this.review.dispose();
		this.rewind.dispose();
		this.approvals.dispose();
		this.terminal.dispose();
		this.status.dispose();
		this.output.dispose();
		for (const d of this.disposables) d.dispose();
	}
}

let manager: Manager | undefined;

export function activate(context: vscode.ExtensionContext): Manager {
	const m = new Manager(context);
	manager = m;
	context.subscriptions.push(
		m,
		vscode.window.registerWebviewViewProvider(SidebarView.id, m.sidebar, { webviewOptions: { retainContextWhenHidden: true } }),
		...registerCommands(m),
	);
	// Trusting the folder later takes effect at once: the chat's gopi
	// restarts with --approve and the conversation goes on.
	const granted = vscode.workspace.onDidGrantWorkspaceTrust?.(() => {
		void vscode.commands.executeCommand("gopi.restart");
	});
	if (granted) context.subscriptions.push(granted);
	context.subscriptions.push(watchSettings(m));
	return m;
}

export async function deactivate(): Promise<void> {
	const m = manager;
	manager = undefined;
	m?.dispose();
}
export { chatHtml } from "./html";
export { checkpointText } from "./rewind";
