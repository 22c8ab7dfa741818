// Messages between the extension and the chat webview. Both sides import
// this file; esbuild bundles it into each.

export interface ImageAttachment {
	data: string; // base64
	mimeType: string;
}

/** What the extension posts to the webview. */
export type ToWebview =
	| { type: "event"; event: { type: string; [k: string]: unknown } }
	| { type: "history"; messages: unknown[] }
	| { type: "reset"; label: string }
	| { type: "commands"; items: { name: string; description?: string }[] }
	| { type: "files"; query: string; items: string[] }
	| { type: "insert"; text: string; replace?: boolean }
	| { type: "widget"; key: string; lines: string[] | null; placement?: string }
	| { type: "title"; title: string }
	| { type: "notice"; level: "info" | "warning" | "error"; text: string; action?: "restart" }
	| { type: "changes"; files: string[] };

/** What the webview posts to the extension. */
export type FromWebview =
	| { type: "ready" }
	| { type: "send"; text: string; images: ImageAttachment[]; mode: "prompt" | "steer" | "followUp" }
	| { type: "abort" }
	| { type: "dequeue"; kind: "steering" | "followUp"; index: number }
	| { type: "complete"; query: string }
	| { type: "openLink"; href: string }
	| { type: "openFile"; path: string; line?: number }
	| { type: "openChange"; path: string }
	| { type: "copy"; text: string }
	| { type: "restart" };
