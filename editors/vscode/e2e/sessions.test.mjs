// New Session starts over; "gopi: Sessions of This Workspace" lists the
// workspace's conversations and resumes the one picked.
import assert from "node:assert/strict";
import { e2e, tempFolder, until } from "./lib.mjs";

e2e("sessions: New Session, then Sessions of This Workspace resumes the first conversation", async ({ start }) => {
	const wb = await start({ folder: tempFolder("sessions") });
	await wb.openGopi();
	await wb.send("reply: the first conversation");
	await wb.waitForChat("the first conversation", { where: "replies" });
	await wb.waitIdle();

	await wb.runCommand("gopi: New Session");
	await until(async () => !(await wb.chatText()).includes("the first conversation"), { message: "an empty chat" });
	await wb.chat().locator("#input").waitFor();
	await wb.send("reply: the second conversation");
	await wb.waitForChat("the second conversation", { where: "replies" });
	await wb.waitIdle();

	await wb.runCommand("gopi: Sessions of This Workspace");
	const items = await wb.quickPickItems({ title: "resume a session" });
	assert.ok(items.some((i) => i.includes("reply: the first conversation")), `the first session is listed: ${JSON.stringify(items)}`);
	assert.ok(items.some((i) => i.includes("reply: the second conversation")), `the second session is listed: ${JSON.stringify(items)}`);
	await wb.pickQuickItem("reply: the first conversation");
	await wb.waitForChat("the first conversation", { where: "replies" });
	assert.equal((await wb.chatText()).includes("the second conversation"), false, "the chat shows only the resumed session");

	// The resumed conversation goes on.
	await wb.send("reply: still the first");
	await wb.waitForChat("still the first", { where: "replies" });
	await wb.screenshot("sessions-resumed");
});
