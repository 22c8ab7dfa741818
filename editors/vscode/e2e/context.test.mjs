// Context in real VS Code: mentions attach what they name (the editor's
// unsaved text, a terminal's output), shown as chips; / lists the chat's
// actions and gopi's commands; statistics show in the chat.
import assert from "node:assert/strict";
import { e2e, tempFolder, until } from "./lib.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const goFile = "package main\n\nfunc a() {}\nfunc b() {}\nfunc c() {}\n";

e2e("@main.go#L4-5 attaches those lines as the editor holds them, unsaved change included, and shows a chip", async ({ start }) => {
	const wb = await start({ folder: tempFolder("mention", { "main.go": goFile }), userSettings: { "files.autoSave": "off" } });
	// The user opens main.go and changes line 4 without saving.
	await wb.runCommand("Go to File...").catch(async () => wb.page.keyboard.press("Control+P"));
	await wb.page.locator(".quick-input-widget input.input").fill("main.go");
	await wb.page.locator(".quick-input-list .monaco-list-row", { hasText: "main.go" }).first().click();
	await wb.page.locator(".monaco-editor .view-lines", { hasText: "func b()" }).first().waitFor();
	await wb.page.locator(".monaco-editor .view-line", { hasText: "func b()" }).first().click();
	await wb.page.keyboard.press("End");
	await wb.page.keyboard.type(" // UNSAVED");
	await wb.page.locator(".monaco-editor .view-line", { hasText: "UNSAVED" }).first().waitFor();

	await wb.openGopi();
	const input = wb.chat().locator("#input");
	await input.click();
	// A space after it: the word being typed is still a completion, not a mention.
	await input.fill("reply: seen @main.go#L4-5 ");
	// The composer shows the mention as a chip before it is sent.
	await wb.chat().locator('#mentions .mention-chip[data-mention="@main.go#L4-5"]').waitFor();
	await input.press("Enter");
	await wb.waitIdle();
	const chip = wb.chat().locator('.msg.user .sent-chips button.mention-chip[data-tag="file"]').last();
	await chip.waitFor();
	assert.match(await chip.innerText(), /main\.go#L4-5/);
	await chip.click();
	const body = await wb.chat().locator(".msg.user pre.mention-body").last().innerText();
	assert.match(body, /func b\(\) \{\} \/\/ UNSAVED/, "the unsaved text went with the message");
	assert.match(body, /func c\(\)/);
	assert.doesNotMatch(body, /package main/, "only the lines named");
	await wb.screenshot("context-mention-chip");
	assert.equal(wb.readFile("main.go"), goFile, "nothing was saved");
});

e2e("@terminal attaches what the active terminal printed", async ({ start }) => {
	const wb = await start({ folder: tempFolder("terminal"), userSettings: { "terminal.integrated.defaultProfile.linux": "bash" } });
	await wb.runCommand("Terminal: Create New Terminal");
	await wb.page.locator(".terminal-wrapper .xterm").first().waitFor({ timeout: 30_000 });
	await sleep(2000);
	await wb.page.locator(".terminal-wrapper .xterm").first().click();
	await wb.page.keyboard.type("echo from-the-$((40+2))-terminal");
	await wb.page.keyboard.press("Enter");
	// xterm paints on a canvas; give the command a moment to print.
	await sleep(2000);
	await wb.openGopi();
	await wb.send("reply: noted @terminal ");
	await wb.waitIdle();
	const chip = wb.chat().locator('.msg.user .sent-chips button.mention-chip[data-tag="terminal"]').last();
	await chip.waitFor({ timeout: 15_000 });
	await chip.click();
	const body = await wb.chat().locator(".msg.user pre.mention-body").last().textContent();
	await wb.screenshot("context-terminal");
	assert.match(body, /from-the-42-terminal/, `the terminal block: ${JSON.stringify(body)}`);
});

e2e("/ lists the chat's actions and gopi's templates; /stats shows a table in the chat", async ({ start }) => {
	const folder = tempFolder("slash", { ".pi/prompts/review.md": "---\ndescription: Review the diff\n---\nReview it.\n" });
	const wb = await start({ folder });
	await wb.openGopi();
	await wb.send("reply: hi");
	await wb.waitIdle();
	const input = wb.chat().locator("#input");
	await input.click();
	await input.fill("");
	await input.type("/");
	const items = wb.chat().locator("#completions .completion[role=option]");
	await items.first().waitFor();
	const texts = await items.allInnerTexts();
	for (const want of ["compact", "model", "new", "fork", "resume", "export", "help"]) {
		assert.ok(texts.some((x) => x.includes(want)), `/${want} is offered: ${texts.join(" | ")}`);
	}
	assert.ok(texts.some((x) => x.includes("review")), "the project's prompt template is offered");
	await wb.screenshot("context-slash");
	await input.fill("/stats");
	await input.press("Escape");
	await input.press("Enter");
	const card = wb.chat().locator('#log section.stats-card[aria-label="Session statistics"]');
	await card.waitFor();
	assert.match(await card.innerText(), /1/);
	assert.equal((await wb.editorTabs()).some((t) => /Untitled/.test(t)), false, "no Untitled editor");
});
