// A codemode call in real VS Code: the model (faux) runs a script that
// reads a file and runs bash at once. The chat shows one card for it: the
// script as highlighted JavaScript, the two calls as rows under it, bash's
// question on its row (answered there), and what the script returned.
import assert from "node:assert/strict";
import { e2e, tempFolder } from "./lib.mjs";

const script = [
	"const [cmd, notes] = await Promise.all([",
	'  tools.bash({ command: "echo nested" }),',
	'  tools.read({ path: "notes.txt" }),',
	"]);",
	'console.log("bash exited with", cmd.exit_code);',
	'text("bash said: " + cmd.output.trim());',
	"return notes;",
].join("\n");

e2e("codemode: one card with the script, its calls as rows under it, a nested question answered on its row, and the result", async ({ start }) => {
	const wb = await start({
		folder: tempFolder("codemode", { "notes.txt": "remember the milk\n" }),
		userSettings: { "gopi.approval": "writes", "gopi.args": ["--tools", "+codemode"] },
	});
	await wb.openGopi();
	await wb.send(`call: codemode ${JSON.stringify({ code: script })}`);

	// bash asks first: on its row inside the codemode card.
	await wb.waitForApproval("echo nested");
	const chat = wb.chat();
	const card = chat.locator("#log .tool.codemode");
	const row = card.locator(".cm-calls > .tool.nested.pending");
	assert.equal(await row.count(), 1, "the question is on a row of the codemode card");
	assert.match(await row.locator(".cm-name").innerText(), /^bash$/);
	await wb.screenshot("codemode-question");
	await wb.answerApproval("echo nested", "Accept");

	await card.locator(".cm-status", { hasText: "Script completed" }).waitFor({ timeout: 30_000 });
	await wb.waitIdle();
	assert.equal(await card.count(), 1, "one card for the codemode call");
	assert.equal(await card.locator(".cm-script code.language-javascript").innerText(), script);
	assert.ok((await card.locator(".cm-script code .hljs-keyword").count()) > 0, "the script is highlighted");
	const rows = await card.locator(".cm-calls > .tool.nested").evaluateAll((rs) =>
		rs.map((r) => [r.querySelector(".cm-name").textContent, r.querySelector(".cm-brief").textContent, r.classList.contains("done")]),
	);
	assert.deepEqual(rows, [
		["bash", "echo nested", true],
		["read", "notes.txt", true],
	]);
	// Neither nested call has a top-level card of its own.
	assert.equal(await chat.locator("#log .tool:not(.nested)").count(), 1);
	assert.deepEqual(await card.locator(".cm-text").allInnerTexts(), ["bash said: nested", "remember the milk"]);
	assert.equal(await card.locator(".cm-console").getAttribute("open"), null, "the console output is folded");
	await card.locator(".cm-console summary").click();
	assert.equal(await card.locator(".cm-console pre").innerText(), "bash exited with 0");
	await card.locator(".cm-script").scrollIntoViewIfNeeded();
	await wb.screenshot("codemode-card");
});
