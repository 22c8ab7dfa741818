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
async function recordEvents(prompts, args = []) {
	const root = await realpath(await mkdtemp(path.join(tmpdir(), "gopi-webview-")));
	const agentDir = path.join(root, "agent");
	await mkdir(agentDir);
	// A short conversation is enough to compact when little is kept.
	await writeFile(path.join(agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 10 } }));
	const child = spawn(gopiBin, ["--mode", "jsonrpc", "--provider", "faux", "--model", "faux-1", ...args], {
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
		// The 503 was retried and then went through: its status line is gone.
		assert.equal(await page.evaluate(() => document.querySelectorAll("#log .run-status.retrying").length), 0);
		assert.ok(notices.notices.includes("Compacting the context…"), notices.notices.join(" | "));
		assert.ok(notices.notices.includes("The context was compacted."), notices.notices.join(" | "));
		const failed = await page.evaluate(() => [...document.querySelectorAll("#log .run-status.failed")].map((n) => n.textContent));
		assert.ok(failed.some((e) => /400/.test(e)), `the model's error text is shown: ${failed}`);
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

// --- approvals, retries, / actions, mentions, welcome, stats, layout, accessibility ---

const post = (page, msgs) =>
	page.evaluate(async (list) => {
		for (const m of list) window.postMessage(m, "*");
		await new Promise((r) => setTimeout(r, 0));
		await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
	}, msgs);
const posted = (page) => page.evaluate(() => window.__posted.slice(1));
const clearPosted = (page) => page.evaluate(() => (window.__posted = [{ type: "mark" }]));

/** The events of the bash run, up to its tool starting (the moment gopi would ask). */
function bashRun() {
	const start = events.findIndex((e) => e.type === "message_start" && e.message.role === "user" && /echo hello from bash/.test(JSON.stringify(e.message.content)));
	const exec = events.findIndex((e, i) => i > start && e.type === "tool_execution_start");
	const end = events.findIndex((e, i) => i > exec && e.type === "agent_settled");
	return { upToTool: events.slice(start, exec + 1), rest: events.slice(exec + 1, end + 1), id: events[exec].toolCallId };
}

/** The events of the run whose user message matches re (through agent_settled). */
function run(re) {
	const start = events.findIndex((e) => e.type === "message_start" && e.message.role === "user" && re.test(JSON.stringify(e.message.content)));
	let i = start;
	while (i > 0 && events[i - 1].type !== "agent_settled") i--;
	const end = events.findIndex((e, j) => j > start && e.type === "agent_settled");
	return events.slice(i, end + 1);
}

const approvalOptions = [
	{ answer: "accept", label: "Accept" },
	{ answer: "always", label: "Always" },
	{ answer: "reject", label: "Reject" },
];

test("an approval asks on its tool card; an answer posts approve and the card says what happened", async () => {
	const { page, errors, cleanup } = await openPage({ width: 300 });
	try {
		const { upToTool, id } = bashRun();
		await feed(page, upToTool);
		await post(page, [{ type: "approval", id: "q1", toolCallId: id, toolName: "bash", title: "Run echo hello from bash?", options: approvalOptions }]);
		let card = await page.evaluate((id) => {
			const c = document.querySelector(`.tool[data-id="${id}"]`);
			return {
				cards: document.querySelectorAll(".tool").length,
				pending: c.classList.contains("pending"),
				approval: c.dataset.approval,
				label: c.getAttribute("aria-label"),
				question: c.querySelector(".approval .approval-question")?.textContent,
				buttons: [...c.querySelectorAll(".approval-actions button.approval-button")].map((b) => [b.textContent, b.dataset.answer]),
				focused: document.activeElement === c.querySelector(".approval-button"),
			};
		}, id);
		assert.deepEqual(card, {
			cards: 1,
			pending: true,
			approval: "q1",
			label: "bash: echo hello from bash (waits for your answer)",
			question: "Run echo hello from bash?",
			buttons: [["Accept", "accept"], ["Always", "always"], ["Reject", "reject"]],
			focused: true,
		});
		// The keyboard answers: Tab to Reject, Enter.
		await page.keyboard.press("Tab");
		await page.keyboard.press("Tab");
		await page.keyboard.press("Enter");
		assert.deepEqual((await posted(page)).at(-1), { type: "approve", id: "q1", answer: "reject" });
		await post(page, [{ type: "approvalDone", id: "q1", outcome: "rejected" }]);
		card = await page.evaluate((id) => {
			const c = document.querySelector(`.tool[data-id="${id}"]`);
			return { pending: c.classList.contains("pending"), buttons: c.querySelectorAll(".approval-button").length, outcome: c.querySelector(".approval-outcome")?.textContent, label: c.getAttribute("aria-label") };
		}, id);
		assert.deepEqual(card, { pending: false, buttons: 0, outcome: "Rejected", label: "bash: echo hello from bash (rejected)" });
		// gopi's result for a refused call does not turn the card into a failure.
		await feed(page, [{ type: "tool_execution_end", toolCallId: id, toolName: "bash", result: { content: [{ type: "text", text: "The user declined this tool call." }] }, isError: true }]);
		assert.deepEqual(await page.evaluate((id) => [...document.querySelector(`.tool[data-id="${id}"]`).classList].filter((c) => ["error", "denied"].includes(c)), id), ["denied"]);
		// Two questions in a row, the second for a call with no card yet: it gets one.
		await post(page, [
			{ type: "approval", id: "q2", toolCallId: "call-new", toolName: "write", title: "Write notes.txt?", options: approvalOptions },
			{ type: "approval", id: "q3", toolName: "edit", title: "Edit main.go?", options: approvalOptions },
		]);
		const pending = await page.evaluate(() => [...document.querySelectorAll(".tool.pending")].map((c) => c.querySelector(".approval-question").textContent));
		assert.deepEqual(pending, ["Write notes.txt?", "Edit main.go?"]);
		await page.evaluate(() => document.querySelector('.tool[data-approval="q2"] .approval-button[data-answer="always"]').focus());
		await page.keyboard.press("Space");
		assert.deepEqual((await posted(page)).at(-1), { type: "approve", id: "q2", answer: "always" });
		// A second press before the answer lands sends nothing more.
		await page.keyboard.press("Space");
		assert.equal((await posted(page)).filter((m) => m.type === "approve" && m.id === "q2").length, 1);
		await post(page, [{ type: "approvalDone", id: "q2", outcome: "always" }]);
		// The focus goes on to the question still waiting.
		assert.equal(await page.evaluate(() => document.activeElement?.closest(".tool")?.dataset.approval), "q3");
		// Alt+A from the composer jumps to it too.
		await page.focus("#input");
		await page.keyboard.down("Alt");
		await page.keyboard.press("KeyA");
		await page.keyboard.up("Alt");
		assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Accept");
		await page.screenshot({ path: path.join(artifacts, "approval-dark-300.png") });
		await post(page, [{ type: "approvalDone", id: "q3", outcome: "timedOut" }]);
		assert.equal(await page.evaluate(() => document.querySelector(".tool:not(.pending) .outcome-timedOut")?.textContent), "Timed out");
		assert.deepEqual(errors, []);
	} finally {
		await page.close();
		await cleanup();
	}
});

// A codemode script that calls two tools at once, prints, and returns: the
// faux model's call directive makes the call.
const codemodeScript = [
	"const [a, b] = await Promise.all([",
	'  tools.bash({ command: "echo nested" }),',
	'  tools.read({ path: "missing.txt" }).catch((e) => String(e)),',
	"]);",
	'console.log("exit code", a.exit_code);',
	'text("first: " + a.output.trim());',
	"return b;",
].join("\n");

test("a codemode call is one card: its script highlighted, its calls as rows under it, its result read out; questions land on the rows", async () => {
	const failing = 'console.log("before");\ntext("partial");\nthrow new Error("boom");';
	const cm = await recordEvents(
		[{ message: `call: codemode ${JSON.stringify({ code: codemodeScript })}` }, { message: `call: codemode ${JSON.stringify({ code: failing })}` }],
		["--tools", "+codemode"],
	);
	const parent = cm.find((e) => e.type === "tool_execution_start" && e.toolName === "codemode")?.toolCallId;
	assert.ok(parent, "gopi ran the codemode call");
	const nested = cm.filter((e) => e.type === "tool_execution_start" && e.parentToolCallId === parent);
	assert.deepEqual(nested.map((e) => e.toolName).sort(), ["bash", "read"], "the script's calls came as nested events");
	const bashId = nested.find((e) => e.toolName === "bash").toolCallId;
	const { page, errors, cleanup } = await openPage({ width: 420 });
	try {
		// Up to the nested bash's start: a question about it lands on its row.
		const upToBash = cm.slice(0, cm.findIndex((e) => e.type === "tool_execution_start" && e.toolCallId === bashId) + 1);
		await feed(page, upToBash);
		await post(page, [{ type: "approval", id: "n1", toolCallId: bashId, toolName: "bash", title: "Run echo nested?", options: approvalOptions }]);
		const asked = await page.evaluate((id) => {
			const row = document.querySelector(`.tool[data-id="${id}"]`);
			return {
				inCard: row?.parentElement?.closest(".tool")?.classList.contains("codemode"),
				pending: row?.classList.contains("pending"),
				question: row?.querySelector(".approval-question")?.textContent,
				label: row?.getAttribute("aria-label"),
			};
		}, bashId);
		assert.deepEqual(asked, { inCard: true, pending: true, question: "Run echo nested?", label: "bash echo nested (waits for your answer)" });
		await page.click(`.tool[data-id="${bashId}"] .approval-button[data-answer="accept"]`);
		assert.deepEqual((await posted(page)).at(-1), { type: "approve", id: "n1", answer: "accept" });
		await post(page, [{ type: "approvalDone", id: "n1", outcome: "accepted" }]);
		await feed(page, cm.slice(upToBash.length));
		const card = await page.evaluate((parent) => {
			const c = document.querySelector(`.tool[data-id="${parent}"]`);
			return {
				cls: [...c.classList].filter((x) => ["codemode", "done", "error"].includes(x)),
				title: c.querySelector(":scope > .tool-head > .tool-title").textContent,
				state: c.querySelector(":scope > .tool-head > .tool-state").textContent,
				argsHidden: c.querySelector(":scope > .tool-args").hidden,
				code: c.querySelector(".cm-script code.language-javascript")?.textContent,
				keywords: [...c.querySelectorAll(".cm-script code .hljs-keyword")].map((k) => k.textContent),
				rows: [...c.querySelectorAll(".cm-calls > .tool.nested")].map((r) => ({
					name: r.querySelector(".cm-name").textContent,
					brief: r.querySelector(".cm-brief").textContent,
					cls: [...r.classList].filter((x) => ["done", "error", "running"].includes(x)),
					result: r.querySelector(".cm-row-result").textContent,
				})),
				status: c.querySelector(".cm-status")?.textContent,
				captions: [...c.querySelectorAll(".cm-caption")].map((x) => x.textContent),
				texts: [...c.querySelectorAll(".cm-text")].map((x) => x.textContent),
				console: { summary: c.querySelector(".cm-console summary")?.textContent, open: c.querySelector(".cm-console")?.open, text: c.querySelector(".cm-console pre")?.textContent },
				rawHidden: c.querySelector(":scope > .tool-result").hidden,
			};
		}, parent);
		assert.deepEqual(card.cls, ["codemode", "done"]);
		assert.equal(card.title, "codemode");
		assert.match(card.state, /^2 tool calls · [\d.]+ s$/);
		assert.equal(card.argsHidden, true, "the script replaces the JSON arguments");
		assert.equal(card.code, codemodeScript);
		assert.ok(card.keywords.includes("const") && card.keywords.includes("await"), `highlighted: ${card.keywords}`);
		assert.deepEqual(
			card.rows.map(({ result, ...r }) => r),
			[
				{ name: "bash", brief: "echo nested", cls: ["done"] },
				{ name: "read", brief: "missing.txt", cls: ["error"] },
			],
		);
		assert.match(card.rows[0].result, /^nested/);
		assert.match(card.rows[1].result, /missing\.txt/);
		assert.match(card.status, /^Script completed in [\d.]+ s$/);
		assert.deepEqual(card.captions, ["Text 1 of 2", "Text 2 of 2"]);
		assert.equal(card.texts[0], "first: nested");
		assert.match(card.texts[1], /missing\.txt/);
		assert.deepEqual(card.console, { summary: "Console output (1 line)", open: false, text: "exit code 0" });
		assert.equal(card.rawHidden, true);
		// No nested call has a card of its own in the log.
		assert.equal(await page.evaluate((parent) => [...document.querySelectorAll(".tool")].filter((c) => c.dataset.id?.startsWith(`${parent}/`) && !c.closest(".cm-calls")).length, parent), 0);
		// The failed read's row shows what it said; the bash row opens on a click.
		assert.deepEqual(await page.evaluate(() => [...document.querySelectorAll(".tool.nested .cm-row-result")].map((r) => r.hidden)), [true, false]);
		await page.click(".tool.nested.done .cm-toggle");
		assert.equal(await page.evaluate(() => document.querySelector(".tool.nested.done .cm-row-result").hidden), false);
		// The script's Copy button hands it to the extension.
		await page.evaluate(() => document.querySelector(".cm-script .copy").click());
		assert.deepEqual((await posted(page)).at(-1), { type: "copy", text: codemodeScript });
		await page.evaluate(() => (document.querySelector("#log").scrollTop = 0));
		await page.screenshot({ path: path.join(artifacts, "codemode-dark-420.png") });
		// The script's list of calls may report a call done before its start event arrives: the row
		// stays done, and while the script runs on, its icon is a still ✓, not its card's spinner.
		await feed(page, [
			{ type: "tool_execution_start", toolCallId: "cmx", toolName: "codemode", args: { code: "await tools.ls({})" } },
			{ type: "tool_execution_update", toolCallId: "cmx", toolName: "codemode", args: {}, partialResult: { content: [], details: { calls: [{ id: "cmx/1", name: "ls", args: "{}", status: "ok", durationMs: 2 }] } } },
			{ type: "tool_execution_start", toolCallId: "cmx/1", toolName: "ls", args: {}, parentToolCallId: "cmx" },
		]);
		const still = await page.evaluate(() => {
			const row = document.querySelector('.tool[data-id="cmx/1"]');
			const icon = getComputedStyle(row.querySelector(".tool-icon"), "::before");
			return { cls: [...row.classList], running: document.querySelector('.tool[data-id="cmx"]').classList.contains("running"), content: icon.content, animation: icon.animationName };
		});
		assert.deepEqual(still, { cls: ["tool", "nested", "done"], running: true, content: '"✓"', animation: "none" });
		// Calls a script makes at once may start in any order: the rows stay in the script's order
		// (the number their ids end with).
		await feed(page, [
			{ type: "tool_execution_start", toolCallId: "cmy", toolName: "codemode", args: { code: "await Promise.all([tools.ls({}), tools.ls({}), tools.ls({})])" } },
			{ type: "tool_execution_start", toolCallId: "cmy/3", toolName: "ls", args: { path: "c" }, parentToolCallId: "cmy" },
			{ type: "tool_execution_start", toolCallId: "cmy/1", toolName: "ls", args: { path: "a" }, parentToolCallId: "cmy" },
			{ type: "tool_execution_start", toolCallId: "cmy/2", toolName: "ls", args: { path: "b" }, parentToolCallId: "cmy" },
		]);
		assert.deepEqual(
			await page.evaluate(() => [...document.querySelectorAll('.tool[data-id="cmy"] .cm-calls > .tool.nested')].map((r) => r.dataset.id)),
			["cmy/1", "cmy/2", "cmy/3"],
		);
		// A failed script: its card says so, with the partial output, the console lines and the error.
		const failed = await page.evaluate(() => {
			const c = [...document.querySelectorAll(".tool.codemode")].filter((x) => !["cmx", "cmy"].includes(x.dataset.id))[1];
			return {
				error: c.classList.contains("error"),
				state: c.querySelector(":scope > .tool-head > .tool-state").textContent,
				status: c.querySelector(".cm-status").textContent,
				texts: [...c.querySelectorAll(".cm-text")].map((x) => x.textContent),
				console: c.querySelector(".cm-console pre")?.textContent,
				scriptError: c.querySelector(".cm-error")?.textContent,
				calls: c.querySelector(".cm-calls").hidden,
			};
		});
		assert.equal(failed.error, true);
		assert.match(failed.state, /^no tool calls · [\d.]+ s$/);
		assert.match(failed.status, /^Script failed after [\d.]+ s$/);
		assert.deepEqual(failed.texts, ["partial"]);
		assert.equal(failed.console, "before");
		assert.match(failed.scriptError, /^Error: boom/);
		assert.equal(failed.calls, true, "no calls, no list");
		assert.deepEqual(errors, []);
	} finally {
		await page.close();
		await cleanup();
	}
	// A history shows the same card: the rows come from the result's list of calls.
	const messages = cm.filter((e) => e.type === "message_end" && e.message.role !== "system").map((e) => e.message);
	const h = await openPage({ width: 300, theme: "light" });
	try {
		await post(h.page, [{ type: "history", messages }]);
		const card = await h.page.evaluate(() => {
			const c = document.querySelector(".tool.codemode");
			return {
				rows: [...c.querySelectorAll(".cm-calls > .tool.nested")].map((r) => [r.querySelector(".cm-name").textContent, r.querySelector(".cm-brief").textContent, r.className]),
				status: c.querySelector(".cm-status")?.textContent,
				cards: document.querySelectorAll(".tool:not(.nested)").length,
			};
		});
		assert.deepEqual(card.rows.map(([n, b]) => [n, b]), [["bash", "echo nested"], ["read", "missing.txt"]]);
		assert.match(card.rows[0][2], /done/);
		assert.match(card.rows[1][2], /error/);
		assert.match(card.status, /^Script completed/);
		assert.equal(card.cards, 2, "the two codemode calls, and no card for a nested call");
		await h.page.screenshot({ path: path.join(artifacts, "codemode-history-light-300.png") });
		assert.deepEqual(h.errors, []);
	} finally {
		await h.page.close();
		await h.cleanup();
	}
});

test("the sandbox's escape question: its lines as gopi wrote them, Allow once and Deny, and the card says what the answer did", async () => {
	const { page, errors, cleanup } = await openPage({ width: 700 });
	try {
		const { upToTool, id } = bashRun();
		await feed(page, upToTool);
		const title = "gopi's sandbox stopped bash: echo hello from bash\nRun it once outside the sandbox?";
		const options = [
			{ answer: "Allow once", label: "Allow once" },
			{ answer: "Deny", label: "Deny" },
		];
		await post(page, [{ type: "approval", id: "e1", toolCallId: id, toolName: "bash", title, options, escape: true }]);
		const card = await page.evaluate((id) => {
			const c = document.querySelector(`.tool[data-id="${id}"]`);
			const q = c.querySelector(".approval .approval-question");
			return {
				question: q.textContent,
				// Two lines on screen (a wide page): the command, then the question.
				lines: Math.round(q.getBoundingClientRect().height / parseFloat(getComputedStyle(q).lineHeight)),
				buttons: [...c.querySelectorAll(".approval-actions button.approval-button")].map((b) => b.textContent),
			};
		}, id);
		assert.deepEqual(card, { question: title, lines: 2, buttons: ["Allow once", "Deny"] });
		await page.keyboard.press("Tab");
		await page.keyboard.press("Enter");
		assert.deepEqual((await posted(page)).at(-1), { type: "approve", id: "e1", answer: "Deny" });
		await post(page, [{ type: "approvalDone", id: "e1", outcome: "rejected" }]);
		assert.deepEqual(
			await page.evaluate((id) => {
				const c = document.querySelector(`.tool[data-id="${id}"]`);
				return [c.querySelector(".approval-outcome")?.textContent, c.querySelector(".tool-state").textContent];
			}, id),
			["Kept in the sandbox", "kept in the sandbox"],
		);
		await post(page, [
			{ type: "approval", id: "e2", toolCallId: id, toolName: "bash", title, options, escape: true },
			{ type: "approvalDone", id: "e2", outcome: "accepted" },
		]);
		assert.equal(await page.evaluate((id) => document.querySelector(`.tool[data-id="${id}"] .approval-outcome`)?.textContent, id), "Ran once outside the sandbox");
		assert.deepEqual(errors, []);
	} finally {
		await page.close();
		await cleanup();
	}
});

test("a tool ended by a stop reads aborted, not failed", async () => {
	const { page, cleanup } = await openPage();
	try {
		const { upToTool, id } = bashRun();
		await feed(page, [
			...upToTool,
			{ type: "tool_execution_end", toolCallId: id, toolName: "bash", result: { content: [{ type: "text", text: "Operation aborted" }] }, isError: true },
		]);
		const c = await page.evaluate((id) => {
			const c = document.querySelector(`.tool[data-id="${id}"]`);
			return { cls: [...c.classList].filter((x) => ["error", "aborted", "done"].includes(x)), state: c.querySelector(".tool-state").textContent, open: c.querySelector(".tool-result").open };
		}, id);
		assert.deepEqual(c, { cls: ["aborted"], state: "aborted", open: false });
		await post(page, [{ type: "approval", id: "q9", toolName: "bash", title: "Run it?", options: approvalOptions }, { type: "approvalDone", id: "q9", outcome: "aborted" }]);
		assert.equal(await page.evaluate(() => document.querySelector(".outcome-aborted")?.textContent), "Aborted");
	} finally {
		await page.close();
		await cleanup();
	}
});

test("retries are one status line per cycle; giving up leaves one error with Retry", async () => {
	const { page, errors, cleanup } = await openPage({ width: 300 });
	try {
		const retried = run(/error: 503 1/);
		const first = retried.findIndex((e) => e.type === "auto_retry_start");
		assert.ok(first > 0, "gopi retried the 503");
		await feed(page, retried.slice(0, first + 1));
		let lines = await page.evaluate(() => [...document.querySelectorAll("#log .run-status")].map((l) => ({ cls: l.className, text: l.textContent, retry: !!l.querySelector(".retry") })));
		assert.equal(lines.length, 1, JSON.stringify(lines));
		assert.match(lines[0].cls, /retrying/);
		assert.match(lines[0].text, /^Retrying \(attempt 1 of \d+\)in \d s503 Service Unavailable/);
		assert.equal(lines[0].retry, false);
		assert.equal(await page.evaluate(() => document.querySelectorAll("#log .error-text, #log .notice.error").length), 0, "no error is shown while it retries");
		await feed(page, retried.slice(first + 1));
		assert.equal(await page.evaluate(() => document.querySelectorAll("#log .run-status").length), 0, "the line goes once an attempt succeeds");
		// A cycle that gives up: eight attempts, one line, a huge error cut to its first line.
		const huge = `529 overloaded\n${"x".repeat(5000)}`;
		const cycle = [{ type: "agent_start" }, { type: "message_start", message: { role: "user", content: "go" } }];
		for (let n = 1; n <= 8; n++) {
			cycle.push(
				{ type: "message_start", message: { role: "assistant", content: [] } },
				{ type: "message_end", message: { role: "assistant", content: [], stopReason: "error", errorMessage: huge } },
				{ type: "agent_end", messages: [] },
				{ type: "auto_retry_start", attempt: n, maxAttempts: 8, delayMs: 1000 * n, errorMessage: huge },
			);
		}
		cycle.push({ type: "auto_retry_end", success: false, attempt: 8, finalError: huge }, { type: "agent_settled" });
		await feed(page, cycle.slice(0, 11));
		lines = await page.evaluate(() => [...document.querySelectorAll("#log .run-status")].map((l) => `${l.querySelector(".run-status-text").textContent} ${l.querySelector(".run-status-countdown").textContent}`));
		assert.deepEqual(lines, ["Retrying (attempt 2 of 8) in 2 s"]);
		await page.screenshot({ path: path.join(artifacts, "retry-dark-300.png") });
		await feed(page, cycle.slice(11));
		lines = await page.evaluate(() =>
			[...document.querySelectorAll("#log .run-status")].map((l) => ({ cls: l.className, role: l.getAttribute("role"), error: l.querySelector(".run-status-error").textContent, retry: l.querySelector("button.retry")?.textContent })),
		);
		assert.deepEqual(lines, [{ cls: "run-status failed error", role: "alert", error: "529 overloaded", retry: "Retry" }]);
		await clearPosted(page);
		await page.click("#log .run-status button.retry");
		assert.deepEqual(await posted(page), [{ type: "retry" }]);
		await page.screenshot({ path: path.join(artifacts, "retry-failed-dark-300.png") });
		// A later successful run marks it resolved.
		await feed(page, run(/echo hello from bash/));
		lines = await page.evaluate(() => [...document.querySelectorAll("#log .run-status")].map((l) => ({ cls: l.className, retry: !!l.querySelector(".retry") })));
		assert.deepEqual(lines, [{ cls: "run-status failed resolved", retry: false }]);
		// A reply that fails without a retry: one error line with Retry.
		await feed(page, run(/error: 400/));
		lines = await page.evaluate(() => [...document.querySelectorAll("#log .run-status:not(.resolved)")].map((l) => ({ error: l.querySelector(".run-status-error").textContent, retry: !!l.querySelector(".retry") })));
		assert.deepEqual(lines, [{ error: "400 Bad Request (simulated by the faux model)", retry: true }]);
		// An extension notice with action retry has the button too.
		await post(page, [{ type: "notice", level: "error", text: "The prompt could not be sent: gopi restarted", action: "retry" }]);
		const n = await page.evaluate(() => [...document.querySelectorAll("#log .run-status")].map((l) => [l.querySelector(".run-status-error").textContent, !!l.querySelector(".retry")]));
		assert.deepEqual(n.slice(-2), [["400 Bad Request (simulated by the faux model)", false], ["The prompt could not be sent: gopi restarted", true]], "only the newest failure keeps Retry");
		// History: a run of the same failure is one line, and a later reply resolves it.
		const failedMsg = { role: "assistant", content: [], stopReason: "error", errorMessage: "503 overloaded" };
		await post(page, [
			{ type: "reset", label: "Chat" },
			{ type: "history", messages: [{ role: "user", content: "hi" }, failedMsg, failedMsg, failedMsg, { role: "assistant", content: [{ type: "text", text: "ok" }], stopReason: "stop" }] },
		]);
		assert.deepEqual(await page.evaluate(() => [...document.querySelectorAll("#log .run-status")].map((l) => [l.className, l.textContent])), [["run-status failed resolved", "Failed earlier:503 overloaded"]]);
		assert.equal(await page.evaluate(() => document.querySelectorAll("#log .msg.assistant").length), 1, "no empty messages for the failures");
		// Stopped during a retry's wait: the line says so and offers nothing.
		await feed(page, [{ type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 5000, errorMessage: "503" }, { type: "agent_settled", aborted: true }]);
		const stopped = await page.evaluate(() => { const l = [...document.querySelectorAll("#log .run-status")].at(-1); return [l.className, l.querySelector(".run-status-text").textContent, !!l.querySelector(".retry")]; });
		assert.deepEqual(stopped, ["run-status retrying stale", "Retrying stopped:", false]);
		assert.deepEqual(errors, []);
	} finally {
		await page.close();
		await cleanup();
	}
});

test("compaction failure says so once", async () => {
	const { page, cleanup } = await openPage();
	try {
		await feed(page, [
			{ type: "compaction_end", errorMessage: "Compaction failed: nothing to compact" },
			{ type: "compaction_end", errorMessage: "the model refused" },
		]);
		await post(page, [{ type: "notice", level: "error", text: "Compaction failed: Compaction failed: too short" }]);
		const n = await page.evaluate(() => [...document.querySelectorAll("#log .notice.error")].map((e) => e.textContent));
		assert.deepEqual(n, ["Compaction failed: nothing to compact", "Compaction failed: the model refused", "Compaction failed: too short"]);
	} finally {
		await page.close();
		await cleanup();
	}
});

const commandList = [
	{ name: "review", description: "Review the diff", source: "prompt" },
	{ name: "skill:tests", description: "Write tests", source: "skill" },
	{ name: "deploy", source: "extension" },
	{ name: "compact", description: "Summarise older messages", source: "action" },
	{ name: "model", description: "Switch model", source: "action" },
	{ name: "resume", description: "Resume a session", source: "action" },
];

test("/ lists actions first with a source tag; an action goes out as action, a prompt as send", async () => {
	const { page, cleanup } = await openPage();
	try {
		await post(page, [{ type: "commands", items: commandList }]);
		await page.focus("#input");
		await page.keyboard.type("/");
		const shown = await page.evaluate(() => ({
			rows: [...document.querySelectorAll("#completions [role=option]")].map((r) => [r.querySelector(".completion-label").textContent, r.querySelector(".completion-tag")?.textContent]),
			active: document.querySelector("#input").getAttribute("aria-activedescendant"),
			first: document.querySelector("#completions [role=option]").id,
			selected: document.querySelector("#completions [aria-selected=true]").id,
		}));
		assert.deepEqual(shown.rows, [
			["/compact", "action"],
			["/model", "action"],
			["/resume", "action"],
			["/review", "prompt"],
			["/skill:tests", "skill"],
			["/deploy", "extension"],
		]);
		assert.equal(shown.active, shown.first);
		assert.equal(shown.selected, shown.first);
		await page.keyboard.type("co");
		await page.keyboard.press("Tab");
		await page.keyboard.type("keep the API");
		await clearPosted(page);
		await page.keyboard.press("Enter");
		assert.deepEqual(await posted(page), [{ type: "action", name: "compact", args: "keep the API" }]);
		await page.keyboard.type("/rev");
		await page.keyboard.press("Enter");
		await page.keyboard.type("the parser");
		await page.keyboard.press("Enter");
		assert.deepEqual(await posted(page), [
			{ type: "action", name: "compact", args: "keep the API" },
			{ type: "send", text: "/review the parser", images: [], mode: "prompt" },
		]);
		// Escape while a run streams closes the list and does not stop the run.
		await feed(page, [{ type: "agent_start" }]);
		await clearPosted(page);
		await page.keyboard.type("/m");
		assert.equal(await page.evaluate(() => document.querySelector("#completions").hidden), false);
		await page.keyboard.press("Escape");
		assert.equal(await page.evaluate(() => document.querySelector("#completions").hidden), true);
		assert.deepEqual(await posted(page), []);
		await page.keyboard.press("Escape");
		assert.deepEqual(await posted(page), [{ type: "abort" }]);
	} finally {
		await page.close();
		await cleanup();
	}
});

test("/ with no commands at all says so; with only actions it shows them", async () => {
	const { page, cleanup } = await openPage();
	try {
		await page.focus("#input");
		await page.keyboard.type("/");
		assert.deepEqual(await page.evaluate(() => ({ hidden: document.querySelector("#completions").hidden, text: document.querySelector("#completions").textContent })), { hidden: false, text: "No commands" });
		await post(page, [{ type: "commands", items: commandList.filter((c) => c.source === "action") }]);
		const rows = await page.evaluate(() => [...document.querySelectorAll("#completions .completion-label")].map((e) => e.textContent));
		assert.deepEqual(rows, ["/compact", "/model", "/resume"]);
	} finally {
		await page.close();
		await cleanup();
	}
});

const expanded = `fix the loop in @main.go#L5-7 and see @selection

<file path="main.go" lines="5-7">
\`\`\`go
for i := range xs {
	total += i
}
\`\`\`
</file>
<selection path="a &quot;b&quot; &amp; c.go" lines="2-4">
\`\`\`\`
three
\`\`\`
backticks
\`\`\`\`
</selection>
<diagnostics count="3">
\`\`\`
main.go:3:6: ERROR: main redeclared
a.go:1:1: WARNING: unused
b.go:2:2: ERROR: typo
\`\`\`
</diagnostics>
<terminal name="bash" lines="40">
\`\`\`
$ make
ok
\`\`\`
</terminal>
<diff files="2">
\`\`\`diff
diff --git a/x b/x
-old
+new
\`\`\`
</diff>`;

test("a sent message shows its mentions as chips that open what was attached", async () => {
	const { page, errors, cleanup } = await openPage({ width: 300 });
	try {
		await post(page, [{ type: "history", messages: [{ role: "user", content: [{ type: "text", text: expanded }] }] }]);
		const r = await page.evaluate(() => {
			const m = document.querySelector(".msg.user");
			return {
				text: m.querySelector(".user-text").textContent,
				raw: m.textContent.includes("<file") || m.textContent.includes("</"),
				chips: [...m.querySelectorAll("button.mention-chip")].map((c) => [c.textContent, c.getAttribute("aria-expanded")]),
				bodiesHidden: [...m.querySelectorAll(".mention-body")].every((b) => b.hidden),
			};
		});
		assert.equal(r.text, "fix the loop in @main.go#L5-7 and see @selection");
		assert.equal(r.raw, false, "no raw tags");
		assert.deepEqual(r.chips, [
			["@main.go#L5-7 · 3 lines", "false"],
			['@selection a "b" & c.go#L2-4', "false"],
			["@problems 3", "false"],
			["@terminal bash · 40 lines", "false"],
			["@git 2 files", "false"],
		]);
		assert.ok(r.bodiesHidden);
		await page.click(".msg.user button.mention-chip[data-tag=selection]");
		const body = await page.evaluate(() => {
			const c = document.querySelector(".msg.user button.mention-chip[data-tag=selection]");
			const b = document.getElementById(c.getAttribute("aria-controls"));
			return { expanded: c.getAttribute("aria-expanded"), hidden: b.hidden, text: b.textContent, tag: b.tagName };
		});
		assert.deepEqual(body, { expanded: "true", hidden: false, text: "three\n```\nbackticks", tag: "PRE" });
		await page.screenshot({ path: path.join(artifacts, "chips-sent-dark-300.png") });
		await page.click(".msg.user button.mention-chip[data-tag=selection]");
		assert.equal(await page.evaluate(() => document.querySelector(".msg.user .mention-body:not([hidden])")), null);
		// Tags inside the attached text stay text.
		await post(page, [{ type: "history", messages: [{ role: "user", content: `x\n\n<file path="p.html">\n\`\`\`html\n<img src=x onerror="window.__pwned=1">\n\`\`\`\n</file>` }] }]);
		await page.click(".msg.user:last-of-type button.mention-chip");
		assert.equal(await page.evaluate(() => [document.querySelector(".msg.user:last-of-type .mention-body").textContent, window.__pwned, document.querySelectorAll("#log img").length].join("|")), '<img src=x onerror="window.__pwned=1">||0');
		assert.deepEqual(errors, []);
	} finally {
		await page.close();
		await cleanup();
	}
});

test("the composer shows its mentions as chips; × takes one out; @ offers the special mentions first", async () => {
	const { page, cleanup } = await openPage({ width: 300 });
	try {
		await page.focus("#input");
		await page.keyboard.type("look at @src/main.go#L5-7, @selection and @problems, not me@example.com ");
		let chips = await page.evaluate(() => ({ hidden: document.querySelector("#mentions").hidden, chips: [...document.querySelectorAll("#mentions .mention-chip")].map((c) => c.dataset.mention) }));
		assert.deepEqual(chips, { hidden: false, chips: ["@src/main.go#L5-7", "@selection", "@problems"] });
		assert.equal(await page.evaluate(() => document.querySelector('#mentions .mention-chip[data-mention="@selection"] .chip-remove').getAttribute("aria-label")), "Remove @selection");
		await page.click('#mentions .mention-chip[data-mention="@selection"] .chip-remove');
		assert.equal(await page.evaluate(() => document.querySelector("#input").value), "look at @src/main.go#L5-7, and @problems, not me@example.com ");
		chips = await page.evaluate(() => [...document.querySelectorAll("#mentions .mention-chip")].map((c) => c.dataset.mention));
		assert.deepEqual(chips, ["@src/main.go#L5-7", "@problems"]);
		await page.evaluate(() => {
			const i = document.querySelector("#input");
			i.setSelectionRange(i.value.length, i.value.length);
		});
		await clearPosted(page);
		await page.keyboard.type("@t");
		assert.deepEqual((await posted(page)).at(-1), { type: "complete", query: "t" });
		assert.equal(await page.evaluate(() => document.querySelectorAll("#mentions .mention-chip").length), 2, "the token being typed is no chip yet");
		await post(page, [{ type: "files", query: "t", items: ["test/a.ts", "tsconfig.json"] }]);
		const rows = await page.evaluate(() => [...document.querySelectorAll("#completions .completion-label")].map((e) => e.textContent));
		assert.deepEqual(rows, ["@terminal", "test/a.ts", "tsconfig.json"]);
		await page.screenshot({ path: path.join(artifacts, "chips-composer-dark-300.png") });
		await page.keyboard.press("Enter");
		assert.match(await page.evaluate(() => document.querySelector("#input").value), /@problems, not me@example.com @terminal $/);
		assert.deepEqual(await page.evaluate(() => [...document.querySelectorAll("#mentions .mention-chip")].map((c) => c.dataset.mention)), ["@src/main.go#L5-7", "@problems", "@terminal"]);
		await page.keyboard.press("Enter");
		assert.equal(await page.evaluate(() => document.querySelector("#mentions").hidden), true, "sent: no chips left");
	} finally {
		await page.close();
		await cleanup();
	}
});

const offline = { type: "welcome", welcome: { model: "faux/faux-1", offline: true, providers: ["faux"] } };

test("the first-run view: the model, what to try, and without a key what to do", async () => {
	const { page, cleanup } = await openPage({ width: 300 });
	try {
		await post(page, [offline]);
		const w = await page.evaluate(() => {
			const w = document.querySelector("#log #welcome");
			return w && { text: w.textContent, buttons: [...w.querySelectorAll("button")].map((b) => b.textContent) };
		});
		assert.ok(w, "shown");
		assert.match(w.text, /faux\/faux-1/);
		assert.deepEqual(w.buttons.slice(-2), ["Add an API key", "Switch model"]);
		await clearPosted(page);
		await page.click("#welcome-set-key");
		await page.click("#welcome-switch-model");
		assert.deepEqual(await posted(page), [{ type: "setKey" }, { type: "switchModel" }]);
		await page.click("#welcome .welcome-try");
		assert.equal(await page.evaluate(() => document.querySelector("#input").value), "bash: ls");
		await page.screenshot({ path: path.join(artifacts, "welcome-dark-300.png") });
		// The conversation starts: it goes.
		await feed(page, run(/echo hello from bash/));
		assert.equal(await page.evaluate(() => document.querySelector("#welcome")), null);
		// A new session: back, until history with messages arrives.
		await post(page, [{ type: "reset", label: "Chat" }]);
		assert.ok(await page.evaluate(() => !!document.querySelector("#welcome")));
		await post(page, [{ type: "history", messages: [] }]);
		assert.ok(await page.evaluate(() => !!document.querySelector("#welcome")), "empty history keeps it");
		await post(page, [{ type: "history", messages: [{ role: "user", content: "hi" }] }]);
		assert.equal(await page.evaluate(() => document.querySelector("#welcome")), null);
		// Not shown over a conversation; with a key, no key buttons.
		await post(page, [{ type: "welcome", welcome: { model: "anthropic/claude-sonnet-4-5", offline: false, providers: ["anthropic"] } }]);
		assert.equal(await page.evaluate(() => document.querySelector("#welcome")), null);
		await post(page, [{ type: "reset", label: "Chat" }]);
		assert.deepEqual(await page.evaluate(() => [...document.querySelectorAll("#welcome button")].length), 0);
		assert.match(await page.evaluate(() => document.querySelector("#welcome").textContent), /anthropic\/claude-sonnet-4-5/);
	} finally {
		await page.close();
		await cleanup();
	}
});

const sampleStats = {
	sessionFile: "/home/me/.pi/agent/sessions/--work--/2026-11-27T07-13-22-676Z_01a21bda.jsonl",
	sessionId: "01a21bda-04f4-707f-b594-95534e59a10e",
	userMessages: 2,
	assistantMessages: 5,
	toolCalls: 3,
	toolResults: 3,
	totalMessages: 10,
	tokens: { input: 56789, output: 1234, cacheRead: 20000, cacheWrite: 0, total: 78023 },
	cost: 0.0123,
	contextUsage: { tokens: 1159, contextWindow: 200000, percent: 0.5795 },
};

test("session statistics show as a table card", async () => {
	const { page, cleanup } = await openPage({ width: 300 });
	try {
		await post(page, [{ type: "stats", stats: sampleStats }]);
		const s = await page.evaluate(() => {
			const c = document.querySelector("#log .stats-card");
			return {
				label: c.getAttribute("aria-label"),
				rows: Object.fromEntries([...c.querySelectorAll("tr")].map((r) => [r.querySelector("th").textContent, r.querySelector("td").textContent])),
				json: c.textContent.includes("{"),
				meter: c.querySelector("[role=meter]")?.getAttribute("aria-valuenow"),
			};
		});
		assert.equal(s.label, "Session statistics");
		assert.equal(s.json, false);
		assert.deepEqual(s.rows, {
			Messages: "2 from you · 5 from gopi · 10 in all",
			"Tool calls": "3",
			Tokens: "78k (56.8k in · 1,234 out · 20k cache read)",
			Cost: "$0.01",
			Context: "1,159 of 200k (0.6%)",
			Session: "01a21bda-04f4-707f-b594-95534e59a10e",
			File: sampleStats.sessionFile,
		});
		assert.equal(s.meter, "1");
	} finally {
		await page.close();
		await cleanup();
	}
});

test("at 300 px the steer hint is whole and a short tool result has no scrollbar", async () => {
	const { page, cleanup } = await openPage({ width: 300 });
	try {
		const { upToTool, id } = bashRun();
		await feed(page, [
			{ type: "agent_start" },
			...upToTool,
			{ type: "tool_execution_end", toolCallId: id, toolName: "bash", result: { content: [{ type: "text", text: `hello from bash ${"and a rather long line ".repeat(6)}` }] }, isError: true },
		]);
		const r = await page.evaluate(() => {
			const h = document.querySelector("#hint");
			const pre = document.querySelector(".tool-result pre");
			const box = h.getBoundingClientRect();
			return {
				hint: h.textContent,
				cut: h.scrollWidth > h.clientWidth + 1 || box.right > window.innerWidth,
				preV: pre.scrollHeight > pre.clientHeight + 1,
				preH: pre.scrollWidth > pre.clientWidth + 1,
			};
		});
		assert.match(r.hint, /Enter steers/);
		assert.match(r.hint, /Esc stops/);
		assert.deepEqual({ cut: r.cut, preV: r.preV, preH: r.preH }, { cut: false, preV: false, preH: false });
		// A long result still scrolls, within its height.
		await feed(page, [{ type: "tool_execution_end", toolCallId: id, toolName: "bash", result: { content: [{ type: "text", text: "line\n".repeat(200) }] }, isError: true }]);
		assert.ok(await page.evaluate(() => { const p = document.querySelector(".tool-result pre"); return p.scrollHeight > p.clientHeight && getComputedStyle(p).overflowY === "auto"; }));
	} finally {
		await page.close();
		await cleanup();
	}
});

/** Every node of the accessibility tree, flattened. */
function flatten(node, out = []) {
	if (!node) return out;
	out.push(node);
	for (const c of node.children ?? []) flatten(c, out);
	return out;
}

test("accessibility: roles and names in Chromium's tree, and the focus order", async () => {
	const { page, cleanup } = await openPage({ width: 300 });
	try {
		const { upToTool, id } = bashRun();
		await feed(page, upToTool);
		await post(page, [
			{ type: "approval", id: "a1", toolCallId: id, toolName: "bash", title: "Run echo hello from bash?", options: approvalOptions },
			{ type: "commands", items: commandList },
		]);
		const tree = flatten(await page.accessibility.snapshot({ interestingOnly: false }));
		const has = (role, name) => tree.some((n) => n.role === role && (name instanceof RegExp ? name.test(n.name ?? "") : n.name === name));
		assert.ok(has("log", "Conversation"), "the log");
		assert.ok(has("article", "You"), "the user's message");
		assert.ok(has("article", "gopi"), "gopi's message");
		assert.ok(has("group", "bash: echo hello from bash (waits for your answer)"), "the tool card");
		for (const name of ["Accept", "Always", "Reject", "Send"]) assert.ok(has("button", name), name);
		assert.ok(has("textbox", "Message"));
		const unnamed = tree.filter((n) => n.role === "button" && !(n.name ?? "").trim());
		assert.deepEqual(unnamed, [], "every button has a name");
		// Focus order: log, the question's buttons, the composer, Send.
		await page.focus("#log");
		const order = ["log"];
		for (let i = 0; i < 12; i++) {
			await page.keyboard.press("Tab");
			order.push(await page.evaluate(() => {
				const a = document.activeElement;
				return a.id || a.textContent.trim().slice(0, 20) || a.tagName;
			}));
		}
		const at = (x) => order.indexOf(x);
		assert.ok(at("log") >= 0 && at("log") < at("Accept") && at("Accept") < at("Reject") && at("Reject") < at("input") && at("input") < at("send"), order.join(" → "));
		// The completion list: listbox, options, the textarea pointing at the selected one.
		await page.focus("#input");
		await page.keyboard.type("/");
		await page.keyboard.press("ArrowDown");
		const t2 = flatten(await page.accessibility.snapshot({ interestingOnly: false }));
		assert.ok(t2.some((n) => n.role === "listbox" && n.name === "Commands"));
		const options = t2.filter((n) => n.role === "option");
		assert.ok(options.length === commandList.length, JSON.stringify(options));
		assert.ok(options.some((o) => o.selected && /\/model/.test(o.name)), JSON.stringify(options));
		assert.equal(await page.evaluate(() => document.getElementById(document.querySelector("#input").getAttribute("aria-activedescendant"))?.textContent), "/modelactionSwitch model");
		// Sent chips and the stats card are named too.
		await post(page, [{ type: "history", messages: [{ role: "user", content: expanded }] }, { type: "stats", stats: sampleStats }]);
		const t3 = flatten(await page.accessibility.snapshot({ interestingOnly: false }));
		assert.ok(t3.some((n) => n.role === "button" && n.name === "@main.go#L5-7 · 3 lines"));
		assert.ok(t3.some((n) => n.role === "table" && /Session statistics/.test(n.name ?? "")) || t3.some((n) => n.role === "region" && n.name === "Session statistics"));
	} finally {
		await page.close();
		await cleanup();
	}
});

test("screenshots at 300 px: approval, retry, welcome, chips, stats, light and dark", async () => {
	for (const theme of ["light", "dark"]) {
		const { page, cleanup } = await openPage({ width: 300, theme });
		try {
			await post(page, [offline, { type: "commands", items: commandList }]);
			await page.screenshot({ path: path.join(artifacts, `welcome-${theme}-300.png`) });
			await post(page, [{ type: "history", messages: [{ role: "user", content: expanded }] }]);
			const { upToTool, id } = bashRun();
			await feed(page, upToTool);
			await post(page, [
				{ type: "approval", id: "s1", toolCallId: id, toolName: "bash", title: "Run echo hello from bash?", options: approvalOptions },
				{ type: "approval", id: "s2", toolName: "write", title: "Write notes.txt?", options: approvalOptions },
				{ type: "approvalDone", id: "s2", outcome: "rejected" },
			]);
			await feed(page, [
				{ type: "auto_retry_start", attempt: 3, maxAttempts: 8, delayMs: 8000, errorMessage: "529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\nmore" },
			]);
			await page.evaluate(() => (document.querySelector("#log").scrollTop = 0));
			await page.screenshot({ path: path.join(artifacts, `approval-retry-${theme}-300.png`) });
			await feed(page, [{ type: "auto_retry_end", success: false, attempt: 8, finalError: "529 overloaded_error: Overloaded" }]);
			await post(page, [{ type: "stats", stats: sampleStats }]);
			await page.focus("#input");
			await page.keyboard.type("see @main.go#L5-7 and @git ");
			await page.evaluate(() => (document.querySelector("#log").scrollTop = 1e6));
			await page.screenshot({ path: path.join(artifacts, `stats-chips-${theme}-300.png`) });
			await page.click(".msg.user button.mention-chip");
			await page.evaluate(() => (document.querySelector("#input").value = ""));
			await page.focus("#input");
			await page.keyboard.type("/");
			await page.evaluate(() => (document.querySelector("#log").scrollTop = 0));
			await page.screenshot({ path: path.join(artifacts, `commands-${theme}-300.png`) });
		} finally {
			await page.close();
			await cleanup();
		}
	}
});

test("a run's changed files: each opens its own run's diff, Review all opens them together", async () => {
	const { page, cleanup } = await openPage();
	try {
		await post(page, [
			{ type: "changes", run: 1, files: ["a.txt"] },
			{ type: "changes", run: 2, files: ["a.txt", "b.txt"] },
		]);
		const boxes = await page.evaluate(() =>
			[...document.querySelectorAll(".changes")].map((b) => ({ files: [...b.querySelectorAll(".change")].map((x) => x.textContent), all: Boolean(b.querySelector(".review-run")) })),
		);
		assert.deepEqual(boxes, [
			{ files: ["a.txt"], all: false },
			{ files: ["a.txt", "b.txt"], all: true },
		]);
		await page.evaluate(() => document.querySelectorAll(".changes")[0].querySelector(".change").click());
		await page.evaluate(() => document.querySelectorAll(".changes")[1].querySelector(".review-run").click());
		const posted = await page.evaluate(() => window.__posted.filter((m) => m.type === "openChange" || m.type === "reviewRun"));
		assert.deepEqual(posted.at(-2), { type: "openChange", path: "a.txt", run: 1 });
		assert.deepEqual(posted.at(-1), { type: "reviewRun", run: 2 });
	} finally {
		await page.close();
		await cleanup();
	}
});

test("each of the user's messages has Rewind to here, which names the message's timestamp to the extension", async () => {
	const { page, errors, cleanup } = await openPage({ width: 300 });
	try {
		await post(page, [{ type: "history", messages: [{ role: "user", content: [{ type: "text", text: "rename it" }], timestamp: 1700000000123 }] }]);
		await page.focus(".msg.user button.rewind");
		assert.match(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), /^Rewind to before this message: rename it/);
		assert.equal(await page.evaluate(() => getComputedStyle(document.activeElement).opacity), "1", "shown when reached with the keyboard");
		await page.keyboard.press("Enter");
		assert.deepEqual(await page.evaluate(() => window.__posted.at(-1)), { type: "rewind", timestamp: 1700000000123 });
		assert.deepEqual(errors, []);
	} finally {
		await cleanup();
	}
});

test("focusing the view puts the caret in the composer, from the first moment and after a run", async () => {
	const { page, errors, cleanup } = await openPage({ width: 300 });
	try {
		const focusView = () =>
			page.evaluate(() => {
				document.activeElement?.blur();
				window.dispatchEvent(new FocusEvent("focus"));
				return document.activeElement?.id;
			});
		// Before any run: a fresh chat, reached with Focus on Chat View.
		assert.equal(await focusView(), "input");
		await feed(page, run(/which file to read first/));
		assert.equal(await focusView(), "input");
		// Focus already inside the page stays where it is.
		await page.focus("#log");
		assert.equal(await page.evaluate(() => (window.dispatchEvent(new FocusEvent("focus")), document.activeElement.id)), "log");
		assert.deepEqual(errors, []);
	} finally {
		await page.close();
		await cleanup();
	}
});

/**
 * A page holding only the parts the entry exports (esbuild bundles them
 * apart from main.ts, so nothing of the whole page runs), as window.parts.
 */
async function openParts(entry) {
	const root = await mkdtemp(path.join(tmpdir(), "gopi-parts-"));
	await require("esbuild").build({
		stdin: { contents: entry, resolveDir: path.join(extDir, "src/webview"), loader: "ts" },
		bundle: true,
		format: "iife",
		globalName: "parts",
		platform: "browser",
		target: "chrome114",
		outfile: path.join(root, "parts.js"),
		logLevel: "warning",
	});
	await writeFile(path.join(root, "parts.html"), `<!DOCTYPE html><html><body><script src="parts.js"></script></body></html>`);
	const page = await browser.newPage();
	const errors = [];
	page.on("pageerror", (e) => errors.push(String(e)));
	await page.goto(pathToFileURL(path.join(root, "parts.html")).href, { waitUntil: "load" });
	return { page, errors, cleanup: () => rm(root, { recursive: true, force: true }) };
}

test("the composer is a part of its own: two on one page keep their own run, commands, queue and completion, and speak only through their post", async () => {
	const { page, errors, cleanup } = await openParts(`export { Composer } from "./composer";`);
	try {
		await page.evaluate(() => {
			for (const name of ["a", "b"]) {
				const make = (tag, part) => Object.assign(document.createElement(tag), { id: `${name}-${part}` });
				const form = make("form", "form");
				const [input, stop, hint, queue, completions, images, mentions] = [
					make("textarea", "input"), make("button", "stop"), make("span", "hint"), make("section", "queue"),
					make("div", "completions"), make("div", "images"), make("div", "mentions"),
				];
				// As html.ts lays them out: hidden until there is something to show.
				stop.type = "button";
				for (const e of [stop, queue, completions, images, mentions]) e.hidden = true;
				form.append(completions, images, mentions, input, hint, stop);
				document.body.append(queue, form);
				const posted = [];
				const part = { posted, waiting: false };
				part.composer = new window.parts.Composer({
					form, input, stop, hint, queue, completions, images, mentions,
					post: (m) => posted.push(m),
					sendKey: "enter",
					questionWaiting: () => part.waiting,
				});
				part.composer.setStreaming(false);
				window[name] = part;
			}
			// Only a runs, only a knows the /compact action, and a question waits only for a.
			a.composer.setStreaming(true);
			a.composer.setCommands([{ name: "compact", description: "Compact the context", source: "action" }]);
			a.waiting = true;
			a.composer.updateHint();
		});
		const typeInto = async (name, text, key = "Enter", mod) => {
			await page.focus(`#${name}-input`);
			await page.keyboard.type(text);
			if (mod) await page.keyboard.down(mod);
			await page.keyboard.press(key);
			if (mod) await page.keyboard.up(mod);
		};
		await typeInto("a", "look at the tests");
		await typeInto("b", "look at the tests");
		await typeInto("a", "then the docs", "Enter", "Alt");
		await typeInto("a", "/compact keep the plan");
		await typeInto("b", "/compact keep the plan");
		await typeInto("a", "", "Escape");
		await typeInto("b", "", "Escape");
		const state = () =>
			page.evaluate(() =>
				Object.fromEntries(
					["a", "b"].map((n) => [
						n,
						{
							posted: window[n].posted.splice(0),
							hint: document.getElementById(`${n}-hint`).textContent,
							stop: !document.getElementById(`${n}-stop`).hidden,
							queue: document.getElementById(`${n}-queue`).hidden ? null : [...document.querySelectorAll(`#${n}-queue .queued`)].map((r) => `${r.querySelector(".queued-kind").textContent}: ${r.querySelector(".queued-text").textContent}`),
							completions: document.getElementById(`${n}-completions`).hidden ? null : [...document.querySelectorAll(`#${n}-completions .completion-label`)].map((r) => r.textContent),
							input: document.getElementById(`${n}-input`).value,
						},
					]),
				),
			);
		assert.deepEqual(await state(), {
			a: {
				posted: [
					{ type: "send", text: "look at the tests", images: [], mode: "steer" },
					{ type: "send", text: "then the docs", images: [], mode: "followUp" },
					{ type: "action", name: "compact", args: "keep the plan" },
					{ type: "abort" },
				],
				hint: "Alt+A answers the question · Enter steers · Alt+Enter follows up · Esc stops",
				stop: true,
				queue: null,
				completions: null,
				input: "",
			},
			b: {
				posted: [
					{ type: "send", text: "look at the tests", images: [], mode: "prompt" },
					{ type: "send", text: "/compact keep the plan", images: [], mode: "prompt" },
				],
				hint: "",
				stop: false,
				queue: null,
				completions: null,
				input: "",
			},
		});
		// a's queue, and × on its second follow-up, say nothing of b's.
		await page.evaluate(() => a.composer.showQueue(["steer first"], ["follow one", "follow two"]));
		await page.click("#a-queue .queued:nth-child(3) .queued-remove");
		// @ in b asks b's post for files; the answer goes to b, and a (not completing) ignores the same answer.
		await page.focus("#b-input");
		await page.keyboard.type("@pro");
		await page.evaluate(() => {
			a.composer.setFiles("pro", ["not/for/a.go"]);
			b.composer.setFiles("pro", ["proj/main.go"]);
		});
		assert.deepEqual(await state(), {
			a: {
				posted: [{ type: "dequeue", kind: "followUp", index: 1 }],
				hint: "Alt+A answers the question · Enter steers · Alt+Enter follows up · Esc stops",
				stop: true,
				queue: ["steer: steer first", "follow-up: follow one", "follow-up: follow two"],
				completions: null,
				input: "",
			},
			b: {
				posted: [
					{ type: "complete", query: "" },
					{ type: "complete", query: "p" },
					{ type: "complete", query: "pr" },
					{ type: "complete", query: "pro" },
				],
				hint: "",
				stop: false,
				queue: null,
				completions: ["@problems", "proj/main.go"],
				input: "@pro",
			},
		});
		await page.keyboard.press("ArrowDown");
		await page.keyboard.press("Tab");
		assert.equal(await page.evaluate(() => document.getElementById("b-input").value), "@proj/main.go ");
		// a's run ends: Enter sends a prompt again there.
		await page.evaluate(() => a.composer.setStreaming(false));
		await typeInto("a", "next");
		assert.deepEqual((await state()).a.posted, [{ type: "send", text: "next", images: [], mode: "prompt" }]);
		assert.deepEqual(errors, []);
	} finally {
		await page.close();
		await cleanup();
	}
});
