// While gopi works: Enter steers (the message goes in before gopi's next
// step), Alt+Enter queues a follow-up (after it finishes). Both show in the
// queue above the composer until gopi takes them.
import assert from "node:assert/strict";
import { e2e, tempFolder, until } from "./lib.mjs";

e2e("steer and follow-up while a long reply streams", async ({ start }) => {
	const wb = await start({ folder: tempFolder("steer") });
	await wb.openGopi();
	await wb.send("stream: 400");
	await wb.waitForChat(/\b20\b/, { where: "replies" });
	await wb.chat().locator("#stop").waitFor();
	await wb.send("reply: steered in", "Enter");
	await wb.send("reply: followed up", "Alt+Enter");
	const queue = wb.chat().locator("#queue");
	await until(async () => {
		const q = await queue.innerText();
		return q.includes("steered in") && q.includes("followed up");
	}, { message: "both messages in the queue", timeout: 10_000 });
	assert.equal(await wb.replies().then((r) => r.includes("400")), false, "the queue showed while the reply still streamed");
	await wb.screenshot("steer-queue");

	await wb.waitForChat("followed up", { where: "replies", timeout: 60_000 });
	await wb.waitIdle();
	const replies = await wb.replies();
	const at = (s) => replies.indexOf(s);
	assert.ok(at("400") >= 0, "the stream finished");
	assert.ok(at("steered in") > at("400"), `the steering message was answered after the stream:\n${replies}`);
	assert.ok(at("followed up") > at("steered in"), `the follow-up came last:\n${replies}`);
	assert.equal(await queue.isVisible(), false, "the queue is empty");
});
