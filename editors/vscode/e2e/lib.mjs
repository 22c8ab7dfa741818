// The end-to-end suite's library: real VS Code (code-server, VS Code for
// the browser) with the packaged extension installed, driven through
// Chromium by playwright-core, as a user would drive it. e2e/run.sh sets up
// what this reads from the environment; a test file only calls
// startWorkbench and the Workbench's methods.
//
//   GOPI_E2E_CODE_SERVER  where install-code-server.sh put code-server,
//                         its Node and playwright-core
//   GOPI_E2E_EXTENSIONS   an extensions folder with the .vsix installed
//   GOPI_E2E_TMP          scratch space; each workbench gets a folder in it
//   GOPI_E2E_ARTIFACTS    where screenshots go
//   CHROMIUM              the browser (default: chromium on PATH)
import { spawn, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as net from "node:net";
import * as path from "node:path";
import { test } from "node:test";

const env = (name) => {
	const v = process.env[name];
	if (!v) throw new Error(`${name} is not set: run the suite with editors/vscode/e2e/run.sh`);
	return v;
};
const codeServer = env("GOPI_E2E_CODE_SERVER");
const extensionsDir = env("GOPI_E2E_EXTENSIONS");
const tmpRoot = env("GOPI_E2E_TMP");
export const artifacts = env("GOPI_E2E_ARTIFACTS");
const { chromium } = createRequire(path.join(codeServer, "node_modules", "x.js"))("playwright-core");

/** The extension's id, as VS Code prefixes its status bar items and webviews. */
export const extensionId = "gopi-dev.gopi";

/**
 * Closes an editor VS Code opened as a modal (its block covers the
 * workbench and takes clicks and keys) with Escape; reports whether there
 * was one.
 */
async function dismissModalEditor(page) {
	const block = page.locator(".monaco-modal-editor-block");
	if (!(await block.count())) return false;
	await page.keyboard.press("Escape");
	await block.first().waitFor({ state: "detached", timeout: 10_000 }).catch(() => {});
	return true;
}

/** User settings every workbench starts with: no welcome page, tours, telemetry or AI side panel. */
const baseSettings = {
	"workbench.startupEditor": "none",
	"workbench.welcomePage.walkthroughs.openOnInstall": false,
	"workbench.tips.enabled": false,
	"workbench.enableExperiments": false,
	"workbench.secondarySideBar.defaultVisibility": "hidden",
	"chat.disableAIFeatures": true,
	"telemetry.telemetryLevel": "off",
	"update.mode": "none",
	"extensions.autoCheckUpdates": false,
	"extensions.ignoreRecommendations": true,
	"security.workspace.trust.enabled": true,
	"security.workspace.trust.startupPrompt": "never",
	"security.workspace.trust.banner": "always",
	"git.enabled": false,
	"window.confirmBeforeClose": "never",
};

let seq = 0;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A fresh folder under the suite's scratch space, holding files
 * ({"relative/path": "content"}; a content of {mode, text} sets the mode).
 */
export function tempFolder(name, files = {}) {
	const dir = fs.mkdtempSync(path.join(tmpRoot, `${name}-`));
	for (const [rel, content] of Object.entries(files)) {
		const abs = path.join(dir, rel);
		fs.mkdirSync(path.dirname(abs), { recursive: true });
		if (typeof content === "string") fs.writeFileSync(abs, content);
		else fs.writeFileSync(abs, content.text, { mode: content.mode });
	}
	return dir;
}

function freePort() {
	return new Promise((resolve, reject) => {
		const srv = net.createServer();
		srv.unref();
		srv.on("error", reject);
		srv.listen(0, "127.0.0.1", () => {
			const { port } = srv.address();
			srv.close(() => resolve(port));
		});
	});
}

function writeJSON(file, obj) {
	fs.mkdirSync(path.dirname(file), { recursive: true });
	fs.writeFileSync(file, JSON.stringify(obj, null, 2));
}

/** Polls f until it returns something truthy; throws what message says after timeout. */
export async function until(f, { timeout = 30_000, interval = 200, message = "condition" } = {}) {
	const end = Date.now() + timeout;
	let last;
	for (;;) {
		try {
			const v = await f();
			if (v) return v;
		} catch (err) {
			last = err;
		}
		if (Date.now() > end) throw new Error(`timed out after ${timeout} ms waiting for ${message}${last ? ` (${last.message})` : ""}`);
		await sleep(interval);
	}
}

/**
 * Starts code-server (its own user data and HOME, a free port, no auth, no
 * telemetry) and a headless Chromium page on folder, and waits for the
 * workbench. trust: "trusted" (the user trusts the folder in VS Code's
 * Workspace Trust editor), "untrusted" (Restricted Mode) or "disabled"
 * (Workspace Trust off: everything is trusted). userSettings are merged over
 * the base settings; machineSettings go to the remote machine's settings,
 * where VS Code reads settings of scope "machine" from in a remote window.
 */
export async function startWorkbench({ folder, trust = "trusted", userSettings = {}, machineSettings, name = path.basename(folder) } = {}) {
	const dir = fs.mkdtempSync(path.join(tmpRoot, `wb-${++seq}-`));
	const userData = path.join(dir, "user-data");
	const home = path.join(dir, "home");
	fs.mkdirSync(home, { recursive: true });
	const settings = { ...baseSettings, ...(trust === "disabled" ? { "security.workspace.trust.enabled": false } : {}), ...userSettings };
	writeJSON(path.join(userData, "User", "settings.json"), settings);
	if (machineSettings) writeJSON(path.join(userData, "Machine", "settings.json"), machineSettings);
	const port = await freePort();
	const node = path.join(codeServer, "node", "bin", "node");
	const log = fs.openSync(path.join(dir, "code-server.log"), "a");
	// Its own process group, so close() ends code-server, its extension
	// hosts and every gopi under them at once. A bare environment: no API
	// key of the caller's reaches gopi, which then runs the faux model.
	const proc = spawn(
		node,
		[
			path.join(codeServer, "node_modules", "code-server", "out", "node", "entry.js"),
			"--config", path.join(dir, "config.yaml"),
			"--bind-addr", `127.0.0.1:${port}`,
			"--auth", "none",
			"--disable-telemetry",
			"--disable-update-check",
			"--disable-getting-started-override",
			"--user-data-dir", userData,
			"--extensions-dir", extensionsDir,
			"--reconnection-grace-time", "5",
		],
		{
			detached: true,
			stdio: ["ignore", log, log],
			env: {
				HOME: home,
				PATH: `${path.dirname(node)}:/usr/local/bin:/usr/bin:/bin`,
				LANG: "C.UTF-8",
				TMPDIR: dir,
			},
		},
	);
	fs.closeSync(log);
	const wb = new Workbench({ dir, folder, port, proc, userData, name });
	try {
		await until(() => fs.readFileSync(path.join(dir, "code-server.log"), "utf8").includes("HTTP server listening"), {
			timeout: 30_000,
			message: "code-server to listen",
		});
		wb.browser = await chromium.launch({
			executablePath: process.env.CHROMIUM || "chromium",
			headless: true,
			args: ["--no-sandbox", "--disable-dev-shm-usage"],
		});
		// The clipboard as a user's browser has it once they allowed it (the
		// terminal's Copy and @terminal go through it).
		const context = await wb.browser.newContext({ viewport: { width: 1400, height: 900 } });
		await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: `http://127.0.0.1:${port}` });
		wb.page = await context.newPage();
		await wb.page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}`);
		await wb.page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
		await wb.page.locator("#workbench\\.parts\\.statusbar").waitFor({ timeout: 60_000 });
		if (trust === "trusted") await wb.trustFolder();
		else if (trust === "untrusted") await wb.page.locator(".statusbar-item", { hasText: "Restricted Mode" }).waitFor({ timeout: 30_000 });
	} catch (err) {
		await wb.close().catch(() => undefined);
		throw err;
	}
	return wb;
}

export class Workbench {
	constructor({ dir, folder, port, proc, userData, name }) {
		this.dir = dir;
		this.folder = folder;
		this.port = port;
		this.proc = proc;
		this.userData = userData;
		this.name = name;
		/** @type {import("playwright-core").Browser} */
		this.browser = undefined;
		/** @type {import("playwright-core").Page} */
		this.page = undefined;
	}

	/** Trusts the folder as a user does: Restricted Mode's status bar item, then Trust. */
	async trustFolder() {
		const p = this.page;
		await p.locator(".statusbar-item", { hasText: "Restricted Mode" }).click({ timeout: 30_000 });
		await p.locator(".workspace-trust-editor .monaco-button", { hasText: /^Trust$/ }).click();
		await p.locator(".statusbar-item", { hasText: "Restricted Mode" }).waitFor({ state: "detached", timeout: 30_000 });
		await dismissModalEditor(p);
		await this.runCommand("View: Close All Editors");
	}

	// --- the chat ---

	/**
	 * The chat webview's document. VS Code nests each webview in two
	 * iframes: iframe.webview (its host page) and, inside, #active-frame
	 * (the extension's HTML). purpose: "webviewView" for the side bar,
	 * "webviewPanel" for a chat in an editor tab.
	 */
	chat(purpose = "webviewView") {
		return this.page
			.frameLocator(`iframe.webview[src*="extensionId=${extensionId}"][src*="purpose=${purpose}"]`)
			.last()
			.frameLocator("iframe#active-frame");
	}

	/** Opens the gopi view from the activity bar; resolves once its composer shows. */
	async openGopi() {
		await this.page.locator('.activitybar a[aria-label^="gopi"]').first().click();
		await this.chat().locator("#input").waitFor({ timeout: 60_000 });
		return this.chat();
	}

	/**
	 * Types text in the composer and presses key: "Enter" sends (or steers
	 * while gopi works), "Alt+Enter" queues a follow-up.
	 */
	async send(text, key = "Enter") {
		const input = this.chat().locator("#input");
		await input.click();
		await input.fill(text);
		await input.press(key);
	}

	/** The chat's text (#log) as the user sees it. */
	async chatText() {
		return this.chat().locator("#log").innerText();
	}

	/** The text of gopi's replies only (not the user's messages). */
	async replies() {
		return (await this.chat().locator("#log .msg.assistant").allInnerTexts()).join("\n");
	}

	/** Waits until the chat (#log) shows text (a string or RegExp); where: "log" or "replies". */
	async waitForChat(text, { timeout = 30_000, where = "log" } = {}) {
		const read = () => (where === "replies" ? this.replies() : this.chatText());
		const has = (s) => (typeof text === "string" ? s.includes(text) : text.test(s));
		return until(async () => has(await read()), { timeout, message: `${JSON.stringify(String(text))} in the chat` });
	}

	/** Waits until gopi is not working (the composer's Stop button is hidden). */
	async waitIdle({ timeout = 30_000 } = {}) {
		await this.chat().locator("#stop").waitFor({ state: "hidden", timeout });
	}

	/** The tool cards whose title contains text. */
	toolCard(text) {
		return this.chat().locator("#log .tool", { has: this.chat().locator(".tool-title", { hasText: text }) });
	}

	// --- the workbench ---

	/** Runs a command from the Command Palette by its title ("gopi: New Session"). */
	async runCommand(title, { timeout = 15_000 } = {}) {
		const p = this.page;
		const box = p.locator(".quick-input-widget input.input");
		for (let i = 0; ; i++) {
			await p.keyboard.press("Control+Shift+P");
			try {
				await box.waitFor({ state: "visible", timeout: 3000 });
				break;
			} catch (err) {
				if (i >= 2) throw err;
				// An editor opened as a modal (the workspace trust editor
				// sometimes is) holds the keys: close it as a user would.
				if (await dismissModalEditor(p)) continue;
				// Focus was in a webview that kept the key; give the workbench focus.
				await p.locator("#workbench\\.parts\\.statusbar").click({ position: { x: 700, y: 5 } });
			}
		}
		await box.fill(`>${title}`);
		const row = p.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
		await row.waitFor({ timeout });
		await row.click();
	}

	/**
	 * The rows of the quick pick a command opened; title (text it contains)
	 * tells it from the Command Palette it replaces.
	 */
	async quickPickItems({ title, timeout = 15_000 } = {}) {
		const w = this.page.locator(".quick-input-widget");
		if (title) await w.locator(".quick-input-title", { hasText: title }).waitFor({ timeout });
		const rows = w.locator(".quick-input-list .monaco-list-row");
		await rows.first().waitFor({ timeout });
		return rows.allInnerTexts();
	}

	/** Picks the quick pick's row that contains text. */
	async pickQuickItem(text, { timeout = 15_000 } = {}) {
		const row = this.page.locator(".quick-input-widget .quick-input-list .monaco-list-row", { hasText: text }).first();
		await row.waitFor({ timeout });
		await row.click();
	}

	/**
	 * A notification (a toast, or one in the notification center once its
	 * toast has timed out) whose message matches text.
	 */
	notification(text) {
		return this.page.locator(".notification-list-item", {
			has: this.page.locator(".notification-list-item-message", { hasText: text }),
		});
	}

	/** Waits for a notification matching text; resolves to its message. */
	async waitForNotification(text, { timeout = 30_000 } = {}) {
		const n = this.notification(text).first();
		await n.waitFor({ timeout });
		return n.locator(".notification-list-item-message").innerText();
	}

	/** Clicks a button of the notification matching text; shows the notification center if its toast is gone. */
	async answerNotification(text, button, { timeout = 30_000 } = {}) {
		const n = this.notification(text).first();
		try {
			await n.waitFor({ timeout });
		} catch (err) {
			await this.runCommand("Notifications: Show Notifications");
			await n.waitFor({ timeout: 5000 }).catch(() => {
				throw err;
			});
		}
		await n.hover();
		await n.locator(".notification-list-item-buttons-container .monaco-button", { hasText: new RegExp(`^${escapeRe(button)}$`) }).click();
	}

	/** A modal dialog's message, once one shows. */
	async waitForDialog({ timeout = 30_000 } = {}) {
		const d = this.page.locator(".monaco-dialog-box");
		await d.waitFor({ timeout });
		return d.locator(".dialog-message-row").innerText();
	}

	/** Clicks a button of the modal dialog. */
	async answerDialog(button, { timeout = 30_000 } = {}) {
		const d = this.page.locator(".monaco-dialog-box");
		await d.waitFor({ timeout });
		await d.locator(".dialog-buttons .monaco-button", { hasText: new RegExp(`^${escapeRe(button)}$`) }).click();
		await d.waitFor({ state: "detached", timeout: 10_000 });
	}

	/**
	 * The card in the chat that asks gopi's question about message (text it
	 * contains, e.g. "a.txt"), while it waits for an answer.
	 */
	approvalCard(message) {
		return this.chat().locator("#log .tool.pending[data-approval]", { hasText: message }).first();
	}

	/**
	 * Waits for gopi's question before a tool runs (message: text it
	 * contains, e.g. "a.txt"). It waits on the tool's card in the chat, in
	 * the status bar and, for an edit or write, on the proposal's toolbar;
	 * resolves to "card" once the card shows it.
	 */
	async waitForApproval(message, { timeout = 30_000 } = {}) {
		await this.approvalCard(message).waitFor({ timeout });
		return "card";
	}

	/**
	 * Answers gopi's question about message with the card's button:
	 * "Accept", "Always" (or "Allow always") or "Reject".
	 */
	async answerApproval(message, answer, { timeout = 30_000 } = {}) {
		await this.waitForApproval(message, { timeout });
		const label = answer === "Allow always" ? "Always" : answer;
		await this.approvalCard(message).locator("button.approval-button", { hasText: new RegExp(`^${escapeRe(label)}$`) }).click();
	}

	/** Whether gopi's question about message is still shown anywhere: on a card, in the status bar or a proposal's toolbar. */
	async approvalShown(message) {
		if (await this.approvalCard(message).isVisible()) return true;
		if (await this.approvalStatus().isVisible()) return true;
		return this.page.locator('.editor-actions a[aria-label^="Accept gopi\'s Proposal"]').isVisible();
	}

	/** The status bar item of a waiting question. */
	approvalStatus() {
		return this.page.locator(`[id="${extensionId}.gopi.approval"]`);
	}

	/** The proposal's diff editor toolbar button: "Accept gopi's Proposal", "Always Allow This Tool", "Reject gopi's Proposal". */
	proposalAction(label) {
		return this.page.locator(`.editor-actions a[aria-label^="${label}"]`);
	}

	/** The text of the diff editor's side ("original" or "modified") as shown. */
	async diffSide(side) {
		const lines = this.page.locator(`.monaco-diff-editor .editor.${side} .view-lines`).first();
		return (await lines.innerText()).replace(/\u00a0/g, " ");
	}

	/** The labels of the editor tabs. */
	async editorTabs() {
		return this.page.locator(".tabs-container .tab .label-name, .tabs-container .tab .monaco-icon-label").allInnerTexts();
	}

	/** A status bar item's text: id is the item's (an extension's is prefixed with its id). */
	async statusBarItem(id, { timeout = 30_000 } = {}) {
		const item = this.page.locator(`[id="${id}"]`);
		await item.waitFor({ timeout });
		return (await item.innerText()).trim();
	}

	/** The text of gopi's own status bar item (model, thinking, context). */
	async gopiStatus(opts) {
		return this.statusBarItem(`${extensionId}.gopi.status`, opts);
	}

	/** All status bar items' texts. */
	async statusBar() {
		return this.page.locator("#workbench\\.parts\\.statusbar .statusbar-item").allInnerTexts();
	}

	/** The user's settings.json as text. */
	readUserSettings() {
		return fs.readFileSync(path.join(this.userData, "User", "settings.json"), "utf8");
	}

	/** Merges settings into the user's settings.json (VS Code picks the change up by itself). */
	setUserSettings(settings) {
		const file = path.join(this.userData, "User", "settings.json");
		writeJSON(file, { ...JSON.parse(fs.readFileSync(file, "utf8")), ...settings });
	}

	// --- the workspace folder ---

	file(rel) {
		return path.join(this.folder, rel);
	}

	exists(rel) {
		return fs.existsSync(this.file(rel));
	}

	readFile(rel) {
		return fs.readFileSync(this.file(rel), "utf8");
	}

	/** Waits until rel exists (and, with content, holds it). */
	async waitForFile(rel, content, { timeout = 30_000 } = {}) {
		return until(() => this.exists(rel) && (content === undefined || this.readFile(rel) === content), {
			timeout,
			message: `${rel}${content === undefined ? "" : ` to hold ${JSON.stringify(content)}`}`,
		});
	}

	/**
	 * The gopi processes this workbench runs: pid, argv, cwd and
	 * environment, read from /proc.
	 */
	gopiProcesses() {
		const out = [];
		for (const pid of descendants(this.proc.pid)) {
			let argv;
			try {
				argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
			} catch {
				continue;
			}
			if (!argv.length || !/(^|\/)gopi$/.test(argv[0]) || !argv.includes("jsonrpc")) continue;
			let environ = {};
			try {
				environ = Object.fromEntries(
					fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
				);
			} catch {}
			let cwd = "";
			try {
				cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
			} catch {}
			out.push({ pid, argv, cwd, env: environ });
		}
		return out;
	}

	/** Waits for a gopi process to run for this workbench; resolves to it. */
	async waitForGopi({ timeout = 30_000 } = {}) {
		return until(() => this.gopiProcesses()[0], { timeout, message: "a gopi process" });
	}

	/** Saves a screenshot of the whole window as artifacts/name.png; resolves to its path. */
	async screenshot(name) {
		fs.mkdirSync(artifacts, { recursive: true });
		const file = path.join(artifacts, `${name}.png`);
		// A notification fades in; let it finish.
		await sleep(400);
		await this.page.screenshot({ path: file });
		return file;
	}

	/** Closes the browser and ends code-server with everything under it (gopi too). */
	async close() {
		await this.browser?.close().catch(() => undefined);
		const pgid = this.proc.pid;
		const alive = () => {
			try {
				process.kill(-pgid, 0);
				return true;
			} catch {
				return false;
			}
		};
		// Processes that left the group (none should) are found by ancestry first.
		const strays = descendants(pgid);
		try {
			process.kill(-pgid, "SIGTERM");
		} catch {}
		for (let i = 0; i < 50 && alive(); i++) await sleep(100);
		try {
			process.kill(-pgid, "SIGKILL");
		} catch {}
		for (const pid of strays) {
			try {
				process.kill(pid, "SIGKILL");
			} catch {}
		}
	}
}

/** pid's descendants (not pid itself), from ps. */
function descendants(pid) {
	let table;
	try {
		table = execFileSync("ps", ["-e", "-o", "pid=,ppid="], { encoding: "utf8" });
	} catch {
		return [];
	}
	const children = new Map();
	for (const line of table.trim().split("\n")) {
		const [p, pp] = line.trim().split(/\s+/).map(Number);
		if (!children.has(pp)) children.set(pp, []);
		children.get(pp).push(p);
	}
	const out = [];
	const walk = (p) => {
		for (const c of children.get(p) ?? []) {
			out.push(c);
			walk(c);
		}
	};
	walk(pid);
	return out;
}

function escapeRe(s) {
	return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Declares a test (node:test) that gets start(opts), startWorkbench for
 * this test: each workbench it started is closed after it, with a
 * screenshot (FAILED-<name>.png) first when the test failed.
 *
 *   e2e("a user's flow", async ({ start }) => { const wb = await start({ folder }); ... });
 */
export function e2e(name, fn, { timeout = 240_000, skip, todo } = {}) {
	test(name, { timeout, skip, todo }, async (t) => {
		const opened = [];
		const start = async (opts) => {
			const wb = await startWorkbench(opts);
			opened.push(wb);
			return wb;
		};
		try {
			await fn({ t, start });
		} catch (err) {
			const slug = name.replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "").slice(0, 60);
			for (const wb of opened) await wb.screenshot(`FAILED-${slug}`).catch(() => undefined);
			throw err;
		} finally {
			for (const wb of opened) await wb.close();
		}
	});
}
