// The chat webview in Debian's Chromium (driven by puppeteer-core, no
// browser download), fed the events of the real gopi binary on the faux
// model: streamed markdown with highlighted code, thinking, tool cards, the
// queue, the composer's keys, and model output that tries to run script.
// Screenshots in a light and a dark theme, at 280 px and a wide width, go
// to test-artifacts/.
//
//   GOPI_BIN=/path/to/gopi CHROMIUM=/usr/bin/chromium node --test test/webview.test.mjs
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { findChromium, loadExtension } from "./harness.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const extDir = path.resolve(here, "..");
const artifacts = path.join(extDir, "test-artifacts");
const require = createRequire(import.meta.url);
const gopiBin = path.resolve(process.env.GOPI_BIN ?? path.join(extDir, "../../bin/gopi"));
const puppeteer = require("puppeteer-core");
const rpc = require("vscode-jsonrpc/node");

// The extension's page builder, from the bundle (harness.mjs gives its one
// `vscode` import the stub).
const { chatHtml } = loadExtension();

/**
 * Runs prompts through gopi's JSON-RPC dialect and returns every pi/event,
 * in order, as the extension would forward them to the page.
 */
async function recordEvents(prompts) {
	const root = await realpath(await mkdtemp(path.join(tmpdir(), "gopi-webview-")));
	const agentDir = path.join(root, "agent");
	await mkdir(agentDir);
	// A short conversation is enough to compact when little is kept.
	await writeFile(path.join(agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 10 } }));
	const child = spawn(gopiBin, ["--mode", "jsonrpc", "--provider", "faux", "--model", "faux-1"], {
		cwd: root,
		env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "", GEMINI_API_KEY: "" },
		stdio: ["pipe", "pipe", "inherit"],
	});
	const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
	const events = [];
	let settled;
	conn.onNotification("pi/event", (ev) => {
		events.push(ev);
		if (ev.type === "agent_settled") settled?.();
	});
	conn.listen();
	await conn.sendRequest("initialize", { rootUri: pathToFileURL(root).href, capabilities: {} });
	conn.sendNotification("initialized", {});
	try {
		for (const p of prompts) {
			if (p.compact) {
				await conn.sendRequest("pi/compact", {});
				continue;
			}
			const done = new Promise((r) => (settled = r));
			await conn.sendRequest("pi/prompt", p.images ? { message: p.message, images: p.images } : { message: p.message });
			if (p.during) await p.during(conn, events);
			await done;
		}
	} finally {
		// gopi exits on "exit": wait for that (briefly) before the pipe is
		// torn down, so no write is left to fail on a closed stream.
		const exited = new Promise((r) => {
			if (child.exitCode !== null) return r();
			child.once("exit", r);
			setTimeout(r, 5000);
		});
		await conn.sendRequest("shutdown").catch(() => {});
		await conn.sendNotification("exit").catch(() => {});
		await exited;
		conn.dispose();
		child.kill();
		await rm(root, { recursive: true, force: true });
	}
	return events;
}

const xss = `reply: <img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script>
[a link](javascript:window.__pwned=3) and ![remote](https://example.invalid/pixel.png)
<iframe src="https://example.invalid/"></iframe>`;

const markdownReply = `reply: # Plan

Some **bold** text, \`inline code\` and a [link](https://example.com/docs).

\`\`\`go
func main() {
	fmt.Println("hi") // greet
}
\`\`\`

- first item
- second item`;

// A 1×1 PNG.
const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

let browser;
let events;
const themes = {
	light: { "--vscode-foreground": "#3b3b3b", "--vscode-sideBar-background": "#f8f8f8", "--vscode-editor-background": "#ffffff", "--vscode-input-background": "#ffffff", "--vscode-input-border": "#cecece", "--vscode-input-foreground": "#3b3b3b", "--vscode-textCodeBlock-background": "#f0f0f0", "--vscode-button-background": "#005fb8", "--vscode-button-foreground": "#ffffff", "--vscode-textLink-foreground": "#005fb8", "--vscode-panel-border": "#e5e5e5", "--vscode-font-family": "sans-serif", "--vscode-font-size": "13px", "--vscode-editor-font-family": "monospace", "--vscode-errorForeground": "#e51400" },
	dark: { "--vscode-foreground": "#cccccc", "--vscode-sideBar-background": "#181818", "--vscode-editor-background": "#1f1f1f", "--vscode-input-background": "#313131", "--vscode-input-border": "#3c3c3c", "--vscode-input-foreground": "#cccccc", "--vscode-textCodeBlock-background": "#2b2b2b", "--vscode-button-background": "#0078d4", "--vscode-button-foreground": "#ffffff", "--vscode-textLink-foreground": "#4daafc", "--vscode-panel-border": "#2b2b2b", "--vscode-font-family": "sans-serif", "--vscode-font-size": "13px", "--vscode-editor-font-family": "monospace", "--vscode-errorForeground": "#f85149" },
};

before(async () => {
	assert.ok(existsSync(gopiBin), `gopi binary not found at ${gopiBin}`);
	await mkdir(artifacts, { recursive: true });
	events = await recordEvents([
		{ message: markdownReply },
		{ message: "reply: a picture", images: [{ type: "image", data: pixel, mimeType: "image/png" }] },
		{ message: "think: which file to read first" },
		{ message: "bash: echo hello from bash" },
		{ message: "read: does-not-exist.txt" },
		{ message: "error: 503 1" },
		{ message: "error: 400" },
		{ message: xss },
		{ compact: true },
		{
			message: "stream: 300",
			// A follow-up queued while the reply streams, then the run stopped.
			async during(conn, evs) {
				while (!evs.some((e) => e.type === "message_update")) await new Promise((r) => setTimeout(r, 10));
				await conn.sendRequest("pi/follow_up", { message: "reply: later" });
				while (!evs.some((e) => e.type === "queue_update" && e.followUp.length)) await new Promise((r) => setTimeout(r, 10));
				await conn.sendRequest("pi/abort", {});
			},
		},
	]);
	browser = await puppeteer.launch({ executablePath: findChromium(), headless: true, args: ["--no-sandbox", "--disable-gpu", "--allow-file-access-from-files"] });
});

after(async () => {
	await browser?.close();
});

/** Opens the extension's page in Chromium with VS Code's webview API shimmed. */
async function openPage({ width = 420, theme = "dark" } = {}) {
	const root = await mkdtemp(path.join(tmpdir(), "gopi-page-"));
	const fileUri = (p) => ({ fsPath: p, toString: () => pathToFileURL(p).href });
	const html = chatHtml(
		{ cspSource: "file:", asWebviewUri: (u) => ({ toString: () => pathToFileURL(u.fsPath).href }) },
		{ script: fileUri(path.join(extDir, "dist/webview.js")), style: fileUri(path.join(extDir, "media/chat.css")), config: { sendKey: "enter", label: "Chat" } },
	);
	const file = path.join(root, "chat.html");
	await writeFile(file, html);
	const page = await browser.newPage();
	await page.setViewport({ width, height: 900 });
	const requests = [];
	page.on("request", (r) => requests.push(r.url()));
	const errors = [];
	page.on("pageerror", (e) => errors.push(String(e)));
	await page.evaluateOnNewDocument(() => {
		window.__posted = [];
		window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__posted.push(m) });
	});
	await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
	await page.evaluate((vars) => {
		for (const [k, v] of Object.entries(vars)) document.documentElement.style.setProperty(k, v);
	}, themes[theme]);
	return { page, requests, errors, cleanup: () => rm(root, { recursive: true, force: true }) };
}

async function feed(page, evs) {
	await page.evaluate((list) => {
		for (const e of list) window.postMessage({ type: "event", event: e }, "*");
	}, evs);
	// Two frames: the page paints streamed text once per animation frame.
	await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

test("streamed markdown, thinking and tool cards render from gopi's events", async () => {
	const { page, errors, cleanup } = await openPage();
	try {
		assert.deepEqual(await page.evaluate(() => window.__posted), [{ type: "ready" }]);
		await feed(page, events);
		const r = await page.evaluate(() => ({
			h1: document.querySelector("#log .md h1")?.textContent,
			bold: document.querySelector("#log .md strong")?.textContent,
			keyword: document.querySelector("#log pre code .hljs-keyword")?.textContent,
			items: [...document.querySelectorAll("#log .md li")].map((li) => li.textContent),
			thinking: [...document.querySelectorAll("details.thinking")].map((d) => ({ open: d.open, text: d.textContent })),
			tools: [...document.querySelectorAll(".tool")].map((c) => ({
				title: c.querySelector(".tool-title").textContent,
				cls: c.className,
				result: c.querySelector(".tool-result pre").textContent,
				open: c.querySelector(".tool-result").open,
			})),
			users: [...document.querySelectorAll(".msg.user")].length,
		}));
		assert.equal(r.h1, "Plan");
		assert.equal(r.bold, "bold");
		assert.equal(r.keyword, "func");
		// A code block's Copy button hands the code to the extension.
		await page.evaluate(() => document.querySelector("#log pre .copy").click());
		const copied = await page.evaluate(() => window.__posted.at(-1));
		assert.deepEqual(copied, { type: "copy", text: 'func main() {\n\tfmt.Println("hi") // greet\n}\n' });
		assert.deepEqual(r.items, ["first item", "second item"]);
		assert.ok(r.thinking.length >= 1 && r.thinking.every((t) => !t.open), "thinking is collapsed");
		assert.match(r.thinking.map((t) => t.text).join(), /which file to read first/);
		const bash = r.tools.find((x) => x.title === "bash: echo hello from bash");
		assert.ok(bash, JSON.stringify(r.tools));
		assert.match(bash.cls, /done/);
		assert.match(bash.result, /hello from bash/);
		assert.equal(bash.open, false, "a result is collapsed");
		const read = r.tools.find((x) => x.title === "read: does-not-exist.txt");
		assert.match(read.cls, /error/);
		assert.equal(read.open, true, "an error is shown open");
		assert.equal(r.users, 9);
		const thumb = await page.evaluate(() => document.querySelector(".msg.user img.thumb")?.getAttribute("src"));
		assert.equal(thumb, `data:image/png;base64,${pixel}`, "the user's image is shown");
		const caption = await page.evaluate(() => document.querySelector(".msg.user:has(img.thumb) .user-text")?.textContent);
		assert.equal(caption, "reply: a picture", "as a picture, not also as text");
		const notices = await page.evaluate(() => ({
			notices: [...document.querySelectorAll("#log .notice")].map((n) => n.textContent),
			errors: [...document.querySelectorAll("#log .error-text")].map((n) => n.textContent),
		}));
		assert.ok(notices.notices.some((n) => /^Retrying in \d+ s \(attempt 1 of \d+\): .*503/.test(n)), notices.notices.join(" | "));
		assert.ok(notices.notices.includes("Compacting the context…"), notices.notices.join(" | "));
		assert.ok(notices.notices.includes("The context was compacted."), notices.notices.join(" | "));
		assert.ok(notices.errors.some((e) => /400/.test(e)), `the model's error text is shown: ${notices.errors}`);
		assert.deepEqual(errors, []);
	} finally {
		await page.close();
		await cleanup();
	}
});

test("model output cannot run script, load remote content or navigate", async () => {
	const { page, requests, errors, cleanup } = await openPage();
	try {
		await feed(page, events);
		const r = await page.evaluate(() => ({
			pwned: window.__pwned,
			scripts: document.querySelectorAll("#log script").length,
			handlers: [...document.querySelectorAll("#log *")].filter((e) => [...e.attributes].some((a) => a.name.startsWith("on"))).length,
			iframes: document.querySelectorAll("iframe").length,
			images: [...document.querySelectorAll("#log img:not(.msg.user img)")].map((i) => i.src),
			imageLink: document.querySelector("#log a.image-link")?.dataset.href,
			shownAsText: document.querySelector("#log").textContent.includes('<img src=x onerror="window.__pwned=1">'),
			link: (() => {
				const a = [...document.querySelectorAll("#log a")].find((x) => x.textContent === "a link");
				return a ? { href: a.getAttribute("href"), data: a.dataset.href ?? null } : null;
			})(),
		}));
		assert.equal(r.pwned, undefined);
		assert.equal(r.scripts, 0);
		assert.equal(r.handlers, 0);
		assert.equal(r.iframes, 0);
		assert.deepEqual(r.images, [], "no image from model output is loaded");
		assert.equal(r.imageLink, "https://example.invalid/pixel.png", "it is shown as a link");
		assert.ok(r.shownAsText, "raw HTML is shown as text");
		// markdown-it refuses javascript: links; they stay text.
		assert.equal(r.link, null);
		assert.ok(!requests.some((u) => u.includes("example.invalid")), `remote loads: ${requests.filter((u) => !u.startsWith("file:"))}`);
		// A safe link is handed to the extension, not followed.
		const url = page.url();
		await page.evaluate(() => [...document.querySelectorAll("#log a")].find((x) => x.textContent === "link").click());
		assert.equal(page.url(), url);
		const posted = await page.evaluate(() => window.__posted);
		assert.deepEqual(posted.at(-1), { type: "openLink", href: "https://example.com/docs" });
		assert.deepEqual(errors, []);
	} finally {
		await page.close();
		await cleanup();
	}
});

test("the queue shows follow-ups with a remove button; the composer's keys follow the run", async () => {
	const { page, cleanup } = await openPage();
	try {
		const i = events.findIndex((e) => e.type === "queue_update" && e.followUp.length);
		assert.ok(i > 0, "gopi reported the queued follow-up");
		await feed(page, events.slice(0, i + 1));
		const q = await page.evaluate(() => ({
			hidden: document.querySelector("#queue").hidden,
			rows: [...document.querySelectorAll("#queue .queued")].map((r) => r.querySelector(".queued-text").textContent),
			stop: !document.querySelector("#stop").hidden,
		}));
		assert.deepEqual(q, { hidden: false, rows: ["reply: later"], stop: true });
		await page.click("#queue .queued-remove");
		await page.focus("#input");
		await page.keyboard.type("look at the tests");
		await page.keyboard.press("Enter");
		await page.keyboard.type("then the docs");
		await page.keyboard.down("Alt");
		await page.keyboard.press("Enter");
		await page.keyboard.up("Alt");
		await page.keyboard.press("Escape");
		let posted = await page.evaluate(() => window.__posted.slice(1));
		assert.deepEqual(posted, [
			{ type: "dequeue", kind: "followUp", index: 0 },
			{ type: "send", text: "look at the tests", images: [], mode: "steer" },
			{ type: "send", text: "then the docs", images: [], mode: "followUp" },
			{ type: "abort" },
		]);
		// Once the run settles, Enter sends a new prompt; Shift+Enter is a new line.
		await feed(page, events.slice(i + 1));
		assert.equal(await page.evaluate(() => document.querySelector("#stop").hidden), true);
		await page.keyboard.type("one");
		await page.keyboard.down("Shift");
		await page.keyboard.press("Enter");
		await page.keyboard.up("Shift");
		await page.keyboard.type("two");
		await page.keyboard.press("Enter");
		posted = await page.evaluate(() => window.__posted.at(-1));
		assert.deepEqual(posted, { type: "send", text: "one\ntwo", images: [], mode: "prompt" });
	} finally {
		await page.close();
		await cleanup();
	}
});

test("/ completes gopi's commands", async () => {
	const { page, cleanup } = await openPage();
	try {
		await page.evaluate(() =>
			window.postMessage({ type: "commands", items: [{ name: "review", description: "Review the diff" }, { name: "refactor" }, { name: "skill:tests" }] }, "*"),
		);
		await page.focus("#input");
		await page.keyboard.type("/re");
		const shown = await page.evaluate(() => [...document.querySelectorAll(".completion-label")].map((e) => e.textContent));
		assert.deepEqual(shown, ["/review", "/refactor"]);
		await page.keyboard.press("ArrowDown");
		await page.keyboard.press("Tab");
		assert.equal(await page.evaluate(() => document.querySelector("#input").value), "/refactor ");
	} finally {
		await page.close();
		await cleanup();
	}
});

test("screenshots: light and dark, 280 px and wide", async () => {
	for (const theme of ["light", "dark"]) {
		for (const width of [280, 900]) {
			const { page, cleanup } = await openPage({ width, theme });
			try {
				const upto = events.findIndex((e) => e.type === "queue_update" && e.followUp.length);
				await feed(page, events.slice(0, upto + 1));
				await page.evaluate(() => (document.querySelector("#log").scrollTop = 0));
				const file = path.join(artifacts, `chat-${theme}-${width}.png`);
				await page.screenshot({ path: file });
				assert.ok(existsSync(file));
			} finally {
				await page.close();
				await cleanup();
			}
		}
	}
});

test("an image dropped on the composer goes out with the next message", async () => {
	const { page, cleanup } = await openPage();
	try {
		await page.evaluate((b64) => {
			const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
			const dt = new DataTransfer();
			dt.items.add(new File([bytes], "pixel.png", { type: "image/png" }));
			dt.items.add(new File(["not an image"], "notes.txt", { type: "text/plain" }));
			document.querySelector("#composer").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
		}, pixel);
		await page.waitForSelector("#images img.thumb");
		assert.equal(await page.evaluate(() => document.querySelectorAll("#images img.thumb").length), 1, "only the image is attached");
		await page.focus("#input");
		await page.keyboard.type("what is this?");
		await page.keyboard.press("Enter");
		const sent = await page.evaluate(() => window.__posted.at(-1));
		assert.deepEqual(sent, { type: "send", text: "what is this?", images: [{ data: pixel, mimeType: "image/png" }], mode: "prompt" });
		assert.equal(await page.evaluate(() => document.querySelector("#images").hidden), true, "the attachment is cleared");
	} finally {
		await page.close();
		await cleanup();
	}
});
