// Settings a user changes while the chat is open. gopi.approval is the one
// that matters most: turning approval on must hold for the next tool call.
import assert from "node:assert/strict";
import { e2e, tempFolder, until } from "./lib.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

e2e("settings: turning gopi.approval from off to writes in the Settings editor makes the next write ask", async ({ start }) => {
	const wb = await start({ folder: tempFolder("settings"), userSettings: { "gopi.approval": "off" } });
	await wb.openGopi();
	await wb.send("write: free.txt :: no question");
	await wb.waitForFile("free.txt", "no question");
	await wb.waitIdle();

	// The Settings editor, as a user changes it.
	await wb.runCommand("Preferences: Open User Settings");
	// The editor opens with the cursor in its search box.
	await wb.page.locator(".settings-editor .settings-header").waitFor({ timeout: 30_000 });
	await sleep(500);
	await wb.page.keyboard.type("gopi.approval");
	const select = wb.page.locator('.settings-editor select[aria-label="gopi.approval"]');
	await select.waitFor({ timeout: 30_000 });
	await select.selectOption("writes");
	// "writes" is the default, so the Settings editor takes "off" out of settings.json.
	await until(() => !/"gopi.approval":\s*"off"/.test(wb.readUserSettings()), { message: "settings.json to lose approval off", timeout: 10_000 });
	await wb.screenshot("settings-approval-changed");
	await wb.page.keyboard.press("Escape");

	await wb.send("write: asked.txt :: only when accepted");
	const first = await until(async () => (wb.exists("asked.txt") ? "written" : (await wb.approvalShown("asked.txt")) ? "asked" : undefined), {
		message: "the write to be asked about or done",
	});
	assert.equal(first, "asked", "the write landed without a question: the running gopi still has approval off");
	await wb.answerApproval("asked.txt", "Reject");
	await wb.waitIdle();
	await sleep(1000);
	assert.equal(wb.exists("asked.txt"), false, "the write waited for the question and was rejected");
	// The conversation went on in the restarted gopi.
	await wb.waitForChat("no question");
});

// gopi.path, gopi.env and gopi.args have scope "machine": only the user's
// settings may set them, never a folder's.
e2e("settings: the user's gopi.env and gopi.args reach gopi", async ({ t, start }) => {
	const wb = await start({
		folder: tempFolder("user-env"),
		userSettings: { "gopi.env": { GOPI_E2E_USER_ENV: "from the user" }, "gopi.args": ["--name", "named by the user"] },
	});
	await wb.openGopi();
	const gopi = await wb.waitForGopi();
	t.diagnostic(`gopi ran as: ${gopi.argv.join(" ")}`);
	assert.equal(gopi.env.GOPI_E2E_USER_ENV, "from the user", "the user's gopi.env");
	assert.ok(gopi.argv.includes("named by the user"), `the user's gopi.args: ${gopi.argv.join(" ")}`);
});

e2e("settings: the remote machine's gopi.env and gopi.args reach gopi", async ({ t, start }) => {
	const wb = await start({
		folder: tempFolder("machine-env"),
		machineSettings: { "gopi.env": { GOPI_E2E_MACHINE_ENV: "from the machine" }, "gopi.args": ["--name", "named by the machine"] },
	});
	await wb.openGopi();
	const gopi = await wb.waitForGopi();
	t.diagnostic(`gopi ran as: ${gopi.argv.join(" ")}`);
	assert.equal(gopi.env.GOPI_E2E_MACHINE_ENV, "from the machine", "the machine's gopi.env");
	assert.ok(gopi.argv.includes("named by the machine"), `the machine's gopi.args: ${gopi.argv.join(" ")}`);
});
