// gopi.sandbox: the user's setting reaches gopi, the status bar shows the
// sandbox gopi reports, a folder's own settings cannot loosen it (the
// setting has the machine scope), and a model's command that writes in the
// project under read-only is stopped, with the escape question on its card.
import assert from "node:assert/strict";
import * as path from "node:path";
import { artifacts, e2e, extensionId, tempFolder, until } from "./lib.mjs";

e2e("sandbox: read-only from the user's settings shows in the status bar and stops a command writing in the project; the folder cannot turn it off", async ({ t, start }) => {
	const folder = tempFolder("sandbox", { ".vscode/settings.json": JSON.stringify({ "gopi.sandbox": "off" }) });
	const wb = await start({ folder, userSettings: { "gopi.sandbox": "read-only", "gopi.approval": "writes" } });
	await wb.openGopi();
	const gopi = await wb.waitForGopi();
	t.diagnostic(`gopi ran as: ${gopi.argv.join(" ")}`);
	assert.equal(gopi.argv[gopi.argv.indexOf("--sandbox") + 1], "read-only", `the user's gopi.sandbox, not the folder's: ${gopi.argv.join(" ")}`);

	// The mark is what gopi reports.
	const markId = `${extensionId}.gopi.sandbox`;
	const text = await until(async () => {
		const s = await wb.statusBarItem(markId);
		return s.includes("read-only") && s;
	}, { message: "the sandbox's mark to say read-only" });
	assert.equal(text, "read-only");
	const mark = wb.page.locator(`[id="${markId}"]`);
	assert.equal(await mark.locator(".codicon-shield").count(), 1, "a shield");
	const label = await mark.locator("a").first().getAttribute("aria-label");
	assert.match(label ?? "", /gopi's sandbox: read-only, network off/);
	await wb.page.locator("#workbench\\.parts\\.statusbar").screenshot({ path: path.join(artifacts, "sandbox-status-bar.png") });

	// The model's command: the bash question, then the sandbox stops it and
	// gopi asks whether to run it once outside; Deny keeps it in.
	await wb.send("bash: echo no > blocked.txt");
	await wb.answerApproval("blocked.txt", "Accept");
	const card = wb.approvalCard("Run it once outside the sandbox?");
	await card.waitFor({ timeout: 30_000 });
	assert.deepEqual(await card.locator("button.approval-button").allInnerTexts(), ["Allow once", "Deny"]);
	assert.match(await card.locator(".approval-question").innerText(), /^gopi's sandbox stopped bash: echo no > blocked\.txt\nRun it once outside the sandbox\?$/);
	await wb.screenshot("sandbox-escape-question");
	await card.locator("button.approval-button", { hasText: /^Deny$/ }).click();
	await wb.waitIdle();
	await wb.chat().locator(".tool .approval-outcome", { hasText: "Kept in the sandbox" }).waitFor();
	assert.equal(wb.exists("blocked.txt"), false, "read-only: the command wrote in the project");

	// Clicking the mark opens the setting.
	await mark.click();
	await wb.page.locator('.settings-editor select[aria-label="gopi.sandbox"]').waitFor({ timeout: 30_000 });
});
