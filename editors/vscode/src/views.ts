// The places a chat is shown: the side bar's webview view, and editor
// tabs (one session each, for more than one conversation at a time).
import * as vscode from "vscode";
import { chatHtml } from "./html";
import type { FromWebview, ToWebview } from "./protocol";
import type { Session } from "./session";

function page(webview: vscode.Webview, extensionUri: vscode.Uri, label: string): string {
	const sendKey = vscode.workspace.getConfiguration("gopi").get<string>("sendKey", "enter");
	return chatHtml(webview, {
		script: vscode.Uri.joinPath(extensionUri, "dist", "webview.js"),
		style: vscode.Uri.joinPath(extensionUri, "media", "chat.css"),
		config: { sendKey, label },
	});
}

function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
	return {
		enableScripts: true,
		localResourceRoots: [vscode.Uri.joinPath(extensionUri, "dist"), vscode.Uri.joinPath(extensionUri, "media")],
	};
}

/** Binds a webview to a session both ways. */
export function bind(webview: vscode.Webview, session: Session, setTitle: (t: string) => void): vscode.Disposable {
	session.attach({
		post: (m: ToWebview) => void webview.postMessage(m),
		setTitle,
	});
	return webview.onDidReceiveMessage((m: FromWebview) => void session.handle(m));
}

/** The side bar's chat; it shows whichever session is current there. */
export class SidebarView implements vscode.WebviewViewProvider {
	static readonly id = "gopi.chat";
	view: vscode.WebviewView | undefined;
	private binding: vscode.Disposable | undefined;

	constructor(
		private readonly extensionUri: vscode.Uri,
		private readonly current: () => Promise<Session>,
	) {}

	async resolveWebviewView(view: vscode.WebviewView): Promise<void> {
		this.view = view;
		view.webview.options = webviewOptions(this.extensionUri);
		const session = await this.current();
		this.show(session);
		view.onDidDispose(() => {
			this.binding?.dispose();
			this.view = undefined;
		});
	}

	/** Shows session in the view (a new or resumed session replaces the last). */
	show(session: Session): void {
		if (!this.view) return;
		this.binding?.dispose();
		this.binding = bind(this.view.webview, session, (t) => {
			if (this.view) this.view.description = t;
		});
		this.view.webview.html = page(this.view.webview, this.extensionUri, session.label);
	}
}

/** Opens session in an editor tab of its own. */
export function openTab(extensionUri: vscode.Uri, session: Session, onClose: () => void): vscode.WebviewPanel {
	const panel = vscode.window.createWebviewPanel("gopi.chatTab", `gopi: ${session.label}`, vscode.ViewColumn.Beside, {
		...webviewOptions(extensionUri),
		retainContextWhenHidden: true,
	});
	const b = bind(panel.webview, session, (t) => {
		panel.title = `gopi: ${t}`;
	});
	panel.webview.html = page(panel.webview, extensionUri, session.label);
	panel.onDidDispose(() => {
		b.dispose();
		onClose();
	});
	return panel;
}
