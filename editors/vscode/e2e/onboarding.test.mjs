// The first minutes in real VS Code: the first view says which model runs
// and what to do without a key; a key goes to secret storage, never to
// settings; the chat works from the keyboard alone and reads well to a
// screen reader; a failing provider shows one retry line with Retry;
// export asks where and opens the page in VS Code.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { e2e, tempFolder, until } from "./lib.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** gopi's agent directory for a workbench (its HOME is its own). */
const agentDir = (wb) => path.join(wb.dir, "home", ".pi", "agent");

e2e("the first view names the model and, without a key, offers to add one; the key goes to secret storage, not settings, and gopi gets it", async ({ start }) => {
	const wb = await start({ folder: tempFolder("welcome") });
	await wb.openGopi();
	const welcome = wb.chat().locator("#welcome");
	await welcome.waitFor();
	assert.match(await welcome.innerText(), /faux/);
	await wb.screenshot("onboarding-welcome");
	await wb.chat().locator("#welcome-set-key").click();
	await wb.pickQuickItem("Anthropic");
	// The picker's own input stays until the key's box replaces it.
	const box = wb.page.locator(".quick-input-widget input.input");
	await until(async () => (await box.getAttribute("type")) === "password", { message: "the key is typed into a password box" });
	await box.fill("sk-ant-e2e-not-a-real-key");
	await box.press("Enter");
	await until(() => wb.gopiProcesses().some((p) => p.env.ANTHROPIC_API_KEY === "sk-ant-e2e-not-a-real-key"), {
		message: "gopi restarted with the key in its environment",
	});
	assert.doesNotMatch(wb.readUserSettings(), /sk-ant-e2e/, "the key is not in settings.json");
	for (const f of fs.readdirSync(wb.folder, { recursive: true })) {
		const abs = path.join(wb.folder, String(f));
		if (fs.statSync(abs).isFile()) assert.doesNotMatch(fs.readFileSync(abs, "utf8"), /sk-ant-e2e/, `the key is not in ${f}`);
	}
});

e2e("keyboard only: Ctrl+Alt+G lands in the composer, Enter sends, Tab reaches the question's buttons, and the chat has roles and names", async ({ start }) => {
	const wb = await start({ folder: tempFolder("keys"), userSettings: { "gopi.approval": "writes" } });
	await wb.openGopi();
	// Focus somewhere else first: the Explorer.
	await wb.runCommand("View: Show Explorer");
	await wb.page.locator(".explorer-folders-view, .explorer-viewlet").first().waitFor();
	await sleep(500);
	await wb.page.keyboard.press("Control+Alt+G");
	await until(async () => wb.chat().locator("#input:focus").count(), { message: "the composer to have focus" });
	await wb.page.keyboard.type("write: k.txt :: typed only");
	await wb.page.keyboard.press("Enter");
	await wb.waitForApproval("k.txt");
	// Alt+A moves to the question; Enter on the focused button answers.
	await wb.page.keyboard.press("Alt+A");
	await until(async () => wb.chat().locator("button.approval-button:focus").count(), { message: "a question's button to have focus" });
	const focused = await wb.chat().locator("button.approval-button:focus").innerText();
	assert.equal(focused, "Accept");
	await wb.page.keyboard.press("Enter");
	await wb.waitForFile("k.txt", "typed only");
	await wb.waitIdle();
	// What a screen reader is given (Chromium's accessibility tree).
	const tree = await wb.chat().locator("#app").ariaSnapshot();
	assert.match(tree, /log "Conversation"/);
	assert.match(tree, /article "You"/);
	assert.match(tree, /article "gopi"/);
	assert.match(tree, /textbox "Message"/);
	assert.match(tree, /button "Send"/);
});

e2e("a provider that keeps failing: one retry line, updated in place, then Retry; Retry runs the prompt again", async ({ start }) => {
	const wb = await start({ folder: tempFolder("retry"), userSettings: { "gopi.approval": "off" } });
	fs.mkdirSync(agentDir(wb), { recursive: true });
	fs.writeFileSync(path.join(agentDir(wb), "settings.json"), JSON.stringify({ retry: { enabled: true, maxRetries: 2, baseDelayMs: 200 } }));
	await wb.openGopi();
	await wb.send("error: 503");
	await wb.chat().locator("#log .run-status.failed button.retry").waitFor({ timeout: 60_000 });
	assert.equal(await wb.chat().locator("#log .run-status").count(), 1, "one line for the whole retry cycle");
	await wb.waitIdle();
	await wb.screenshot("onboarding-retry-failed");
	// faux fails every time for "error: 503"; Retry sends it again and fails again, once more in one line.
	await wb.chat().locator("#log .run-status.failed button.retry").click();
	await until(async () => (await wb.chat().locator("#log .msg.user").count()) === 2, { message: "the prompt sent again" });
	// The first failure's button may still be on screen for a moment: wait for the second failure itself.
	await until(async () => (await wb.chat().locator("#log .run-status.failed").count()) === 2, { timeout: 60_000, message: "the second failure" });
	assert.equal(await wb.chat().locator("#log .run-status.failed button.retry").count(), 1, "only the newest failure offers Retry");
});

e2e("Export asks where, writes there, opens the page in VS Code and says where it went", async ({ start }) => {
	const wb = await start({ folder: tempFolder("export") });
	await wb.openGopi();
	await wb.send("reply: words worth keeping");
	await wb.waitIdle();
	await wb.runCommand("gopi: Export Session to HTML");
	// VS Code for the browser asks with its own file dialog: a path box.
	const box = wb.page.locator(".quick-input-widget input.input");
	await box.waitFor();
	const proposed = await until(async () => {
		const v = await box.inputValue();
		return /\.html$/.test(v) && v;
	}, { message: "the proposed file name" });
	assert.ok(!proposed.startsWith(wb.folder + path.sep) || proposed.includes(".pi"), `not the workspace root: ${proposed}`);
	const out = path.join(wb.dir, "exported.html");
	await box.fill(out);
	await sleep(300);
	await wb.page.locator(".quick-input-widget .monaco-button", { hasText: /^OK$/ }).click();
	await until(() => fs.existsSync(out), { message: "the exported file" });
	assert.match(fs.readFileSync(out, "utf8"), /words worth keeping/);
	await wb.waitForNotification("exported the session to");
	await until(async () => (await wb.editorTabs()).some((t) => t.includes("exported.html")), { message: "the page's tab" });
	await wb.screenshot("onboarding-export");
});
