// Review in real VS Code: a question waits where the user looks (the tool
// card, the status bar, the proposal's toolbar) until it is answered; the
// proposal is editable, hunk by hunk, and what is left of it is written;
// Stop withdraws the question; each run's changes stay that run's.
import assert from "node:assert/strict";
import { e2e, tempFolder, until } from "./lib.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const writes = { "gopi.approval": "writes" };
const tenLines = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

e2e("a waiting question stays on the card, in the status bar and on the proposal's toolbar; the toolbar answers it and every one of them goes", async ({ start }) => {
	const wb = await start({ folder: tempFolder("wait"), userSettings: writes });
	await wb.openGopi();
	await wb.send("write: a.txt :: hello");
	await wb.waitForApproval("a.txt");
	await wb.approvalStatus().waitFor();
	assert.match(await wb.approvalStatus().innerText(), /a\.txt/);
	await wb.proposalAction("Accept gopi's Proposal").waitFor();
	await wb.screenshot("review-waiting");
	// Notifications fade into the bell after 10-20 s; the question must not.
	await sleep(20_000);
	assert.equal(await wb.approvalCard("a.txt").isVisible(), true, "the card still asks after 20 s");
	assert.equal(await wb.approvalStatus().isVisible(), true, "the status bar still asks after 20 s");
	assert.equal(await wb.proposalAction("Accept gopi's Proposal").isVisible(), true, "the toolbar still asks after 20 s");
	assert.equal(wb.exists("a.txt"), false);

	await wb.proposalAction("Accept gopi's Proposal").click();
	await wb.waitForFile("a.txt", "hello");
	await wb.waitIdle();
	await wb.chat().locator(".tool .approval-outcome.outcome-accepted").waitFor();
	await wb.approvalStatus().waitFor({ state: "hidden" });
	await until(async () => !(await wb.proposalAction("Accept gopi's Proposal").isVisible()), { message: "the toolbar's buttons to go" });
	assert.equal(await wb.approvalCard("a.txt").count(), 0, "the card no longer asks");

	// The status bar item answers too, from a quick pick.
	await wb.send("write: b.txt :: from the status bar");
	await wb.approvalStatus().waitFor();
	await wb.approvalStatus().click();
	await wb.pickQuickItem("Reject");
	await wb.waitIdle();
	await wb.chat().locator(".tool .approval-outcome.outcome-rejected").waitFor();
	assert.equal(wb.exists("b.txt"), false);
});

e2e("the proposal is the user's: a hunk taken back with the diff editor's Revert Block is not written, the rest is, and the model is told", async ({ start }) => {
	const wb = await start({ folder: tempFolder("hunks", { "a.txt": tenLines }), userSettings: writes });
	await wb.openGopi();
	await wb.send(`write: a.txt ::\n${tenLines.replace("one", "ONE").replace("ten", "TEN")}`);
	await wb.waitForApproval("a.txt");
	await until(async () => /TEN/.test(await wb.diffSide("modified")), { message: "the proposal in the diff editor" });
	// The second hunk (ten -> TEN) has the diff editor's own revert arrow.
	const revert = wb.page.locator('.monaco-diff-editor a[aria-label="Revert Block"]').last();
	await revert.click({ force: true });
	await until(async () => !/TEN/.test(await wb.diffSide("modified")), { message: "the hunk to be taken back" });
	await wb.screenshot("review-hunk-reverted");
	await wb.answerApproval("a.txt", "Accept");
	await wb.waitIdle();
	assert.equal(wb.readFile("a.txt"), tenLines.replace("one", "ONE"), "the kept hunk is written, the reverted one is not");
	// gopi told the model; the card's result says so too.
	const result = await wb.toolCard("a.txt").last().textContent();
	assert.match(result, /user changed/i);
});

e2e("Stop while a question waits: the card says aborted, the proposal closes, nothing is written and nothing still asks", async ({ start }) => {
	const wb = await start({ folder: tempFolder("stop"), userSettings: writes });
	await wb.openGopi();
	await wb.send("write: c.txt :: never");
	await wb.waitForApproval("c.txt");
	await wb.proposalAction("Accept gopi's Proposal").waitFor();
	await wb.chat().locator("#stop").click();
	await wb.waitIdle({ timeout: 15_000 });
	await wb.chat().locator(".tool .approval-outcome.outcome-aborted").waitFor();
	const card = await wb.toolCard("c.txt").last().innerText();
	assert.match(card, /abort/i);
	assert.doesNotMatch(card, /denied by the user/i, "the user never denied it");
	await until(async () => !(await wb.editorTabs()).some((t) => t.includes("proposal")), { message: "the proposal's tab to close" });
	assert.equal(await wb.approvalShown("c.txt"), false, "nothing still asks");
	await sleep(1000);
	assert.equal(wb.exists("c.txt"), false);
	await wb.screenshot("review-stopped");
});

e2e("Changed lists only what changed, and each run's link shows that run's change", async ({ start }) => {
	const wb = await start({ folder: tempFolder("changes"), userSettings: writes });
	await wb.openGopi();
	await wb.send("write: a.txt :: hello");
	await wb.answerApproval("a.txt", "Accept");
	await wb.waitIdle();
	await wb.chat().locator(".changes").first().waitFor();
	// A rejected edit changes nothing, and no Changed box says otherwise.
	await wb.send("edit: a.txt :: hello => nope");
	await wb.answerApproval("a.txt", "Reject");
	await wb.waitIdle();
	await sleep(500);
	assert.equal(await wb.chat().locator(".changes").count(), 1, "a rejected edit lists no change");
	await wb.send("edit: a.txt :: hello => bye");
	await wb.answerApproval("a.txt", "Accept");
	await wb.waitIdle();
	await until(async () => (await wb.chat().locator(".changes").count()) === 2, { message: "the second run's changes" });
	assert.equal(wb.readFile("a.txt"), "bye");

	// The first run's link: nothing before, hello after (not today's bye).
	await wb.chat().locator(".changes").first().locator(".change").click();
	await until(async () => (await wb.diffSide("modified")).trim() === "hello", { message: "the first run's after" });
	assert.equal((await wb.diffSide("original")).trim(), "");
	await wb.screenshot("review-first-run-change");
	await wb.chat().locator(".changes").nth(1).locator(".change").click();
	await until(async () => (await wb.diffSide("modified")).trim() === "bye", { message: "the second run's after" });
	assert.equal((await wb.diffSide("original")).trim(), "hello");
});
