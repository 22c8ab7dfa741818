// The chat webview's page: one script and one stylesheet from dist/ and
// media/, under a Content-Security-Policy that allows nothing else. Model
// output is untrusted: no inline script, no remote image, font or frame.
import * as crypto from "node:crypto";

/** The parts of vscode.Webview the page needs. */
export interface WebviewLike {
	cspSource: string;
	asWebviewUri(uri: { fsPath: string; toString(): string }): { toString(): string };
}

export interface PageOptions {
	script: { fsPath: string; toString(): string };
	style: { fsPath: string; toString(): string };
	/** Initial settings the page reads before any message. */
	config: { sendKey: string; label: string };
}

export function chatHtml(webview: WebviewLike, o: PageOptions): string {
	const nonce = crypto.randomBytes(18).toString("base64");
	const csp = [
		"default-src 'none'",
		`style-src ${webview.cspSource}`,
		`script-src 'nonce-${nonce}'`,
		`img-src ${webview.cspSource} data:`,
		`font-src ${webview.cspSource}`,
	].join("; ");
	const config = escapeAttr(JSON.stringify(o.config));
	return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${webview.asWebviewUri(o.style)}">
<title>gopi</title>
</head>
<body data-config="${config}">
<div id="app">
  <header id="title" hidden></header>
  <main id="log" role="log" aria-label="Conversation" tabindex="0"></main>
  <section id="widgets-above" class="widgets"></section>
  <section id="queue" hidden aria-label="Queued messages"></section>
  <form id="composer" aria-label="Message to gopi">
    <div id="completions" role="listbox" aria-label="Completions" hidden></div>
    <div id="images" hidden></div>
    <div id="mentions" class="chips" role="group" aria-label="Mentioned in the message" hidden></div>
    <textarea id="input" rows="3" placeholder="Ask gopi… (/ for commands, @ for files)" aria-label="Message" aria-controls="completions" aria-autocomplete="list"></textarea>
    <div id="bar">
      <span id="hint" aria-live="off"></span>
      <button type="button" id="stop" hidden title="Stop (Escape)">Stop</button>
      <button type="submit" id="send">Send</button>
    </div>
  </form>
  <section id="widgets-below" class="widgets"></section>
</div>
<script nonce="${nonce}" src="${webview.asWebviewUri(o.script)}"></script>
</body>
</html>`;
}

function escapeAttr(s: string): string {
	return s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
