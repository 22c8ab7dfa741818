// The first thing a user does: open the gopi view, say hello, watch the
// reply stream in, and see a tool run.
import assert from "node:assert/strict";
import { e2e, tempFolder } from "./lib.mjs";

e2e("the gopi view answers hello with a streamed reply, and a bash tool card shows its output", async ({ start }) => {
	const wb = await start({ folder: tempFolder("chat", { "README.md": "# a project\n" }) });
	await wb.openGopi();
	await wb.send("hello");
	await wb.waitForChat("faux", { where: "replies" });
	await wb.waitIdle();
	assert.match(await wb.gopiStatus(), /gopi · faux-1/);
	await wb.screenshot("chat-reply");

	// bash asks first (gopi.approval is "writes" by default).
	await wb.send("bash: echo hi");
	await wb.answerApproval("echo hi", "Accept");
	const card = wb.toolCard("bash: echo hi");
	await card.waitFor();
	await wb.waitForChat("Tool said: hi", { where: "replies" });
	await wb.waitIdle();
	assert.match(await card.locator(".tool-result pre").textContent(), /^hi\s*$/);
	assert.match(await card.getAttribute("class"), /\bdone\b/);
	await card.locator(".tool-result summary").click();
	await wb.screenshot("chat-tool-card");
});
