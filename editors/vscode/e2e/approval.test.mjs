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
	e2e(`approval: stopping the run (${how}) while the question is open writes nothing, even when the stale question is accepted later`, async ({ t, start }) => {
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
		// The question may outlive the run; answering it now must not write.
		const stale = await wb.approvalShown("c.txt");
		t.diagnostic(stale ? "the question outlived the stopped run" : "the question went with the run");
		if (stale) {
			await wb.answerApproval("c.txt", "Accept");
			await sleep(1500);
			assert.equal(wb.exists("c.txt"), false, "accepting a question of a stopped run wrote the file");
		}
	});
}

// Defect today: gopi withdraws the question when the run stops, but the
// notification stays until the user answers it (harmlessly: the answer
// writes nothing). Marked todo so the suite reports it without failing.
e2e("approval: the question goes away when the run stops", async ({ t, start }) => {
	const wb = await start({ folder: tempFolder("withdrawn"), userSettings: { "gopi.approval": "writes" } });
	await wb.openGopi();
	await wb.send("write: d.txt :: never");
	await wb.waitForApproval("d.txt");
	await wb.chat().locator("#stop").click();
	await wb.waitIdle({ timeout: 15_000 });
	await sleep(2000);
	const proposal = (await wb.editorTabs()).some((x) => x.includes("proposal"));
	t.diagnostic(proposal ? "the proposal's diff tab stays open too" : "the proposal's diff tab closed");
	// A toast also hides by itself after a while; the notification center keeps what is still open.
	await wb.runCommand("Notifications: Show Notifications");
	await wb.page.locator(".notifications-center").waitFor();
	await sleep(500);
	assert.equal(await wb.notification("d.txt").count(), 0, "the stopped run's question is still open in the notification center");
	assert.equal(wb.exists("d.txt"), false);
}, { todo: "defect: the question of a stopped run stays on screen" });
