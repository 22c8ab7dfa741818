// gopi.approval "writes": a write shows its diff and asks first. Accept
// writes the file, Reject does not, and stopping the run while the question
// is open leaves the file unwritten, whichever way the user stops it.
import assert from "node:assert/strict";
import { e2e, tempFolder, until } from "./lib.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

e2e("approval: a write opens the proposal's diff and asks; Accept writes the file, Reject does not", async ({ start }) => {
	const wb = await start({ folder: tempFolder("approval"), userSettings: { "gopi.approval": "writes" } });
	await wb.openGopi();

	await wb.send("write: a.txt :: hello");
	await wb.waitForApproval("a.txt");
	await until(async () => (await wb.editorTabs()).some((t) => t.includes("a.txt") && t.includes("proposal")), {
		message: "the proposal's diff tab",
	});
	assert.equal(await wb.page.locator(".monaco-diff-editor").count() > 0, true, "a diff editor shows the proposal");
	assert.equal(wb.exists("a.txt"), false, "nothing is written before the answer");
	await wb.screenshot("approval-pending");
	await wb.answerApproval("a.txt", "Accept");
	await wb.waitForFile("a.txt", "hello");
	await wb.waitIdle();
	await until(async () => !(await wb.editorTabs()).some((t) => t.includes("proposal")), { message: "the proposal's tab to close" });

	await wb.send("write: b.txt :: unwanted");
	await wb.answerApproval("b.txt", "Reject");
	await wb.waitIdle();
	await sleep(1000);
	assert.equal(wb.exists("b.txt"), false, "a rejected write leaves no file");
	assert.equal(wb.readFile("a.txt"), "hello");

	// An edit shows the file against the edited file, and Accept applies it.
	await wb.send("edit: a.txt :: hello => bye");
	await wb.answerApproval("a.txt", "Accept");
	await wb.waitForFile("a.txt", "bye");
	await wb.waitIdle();
});

for (const how of ["Escape in the composer", "the Stop button", "gopi: Stop from the Command Palette"]) {
	e2e(`approval: stopping the run (${how}) while the question is open writes nothing, and the question goes with the run`, async ({ t, start }) => {
		const wb = await start({ folder: tempFolder("abort"), userSettings: { "gopi.approval": "writes" } });
		await wb.openGopi();
		await wb.send("write: c.txt :: should not land");
		await wb.waitForApproval("c.txt");
		if (how.startsWith("Escape")) {
			await wb.chat().locator("#input").click();
			await wb.chat().locator("#input").press("Escape");
		} else if (how.startsWith("the Stop")) {
			await wb.chat().locator("#stop").click();
		} else {
			await wb.runCommand("gopi: Stop");
		}
		await wb.waitIdle({ timeout: 15_000 });
		await sleep(1000);
		assert.equal(wb.exists("c.txt"), false, "the stopped write did not happen");
		// The question goes with the run: nothing is left to answer.
		assert.equal(await wb.approvalShown("c.txt"), false, "the stopped run's question is still shown");
		await wb.chat().locator(".tool .approval-outcome.outcome-aborted").waitFor();
		assert.ok(t);
	});
}
