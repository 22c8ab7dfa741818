// Rewind in real VS Code: a prompt changed a file in a git work tree; the
// chat's Rewind to here shows the change in VS Code's diff editor, asks in a
// modal dialog, puts the file back on disk and in its open editor, returns
// the message to the composer; gopi: Undo Rewind brings the change and the conversation back.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { e2e, tempFolder, until } from "./lib.mjs";

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" };

e2e("Rewind to here: the diff first, a modal confirm, the file back on disk and in its editor, the message in the composer; Undo Rewind", async ({ start }) => {
	const folder = tempFolder("rewind", { "a.txt": "original line\n" });
	for (const args of [["init", "-q"], ["add", "a.txt"], ["commit", "-qm", "start"]]) execFileSync("git", args, { cwd: folder, env: gitEnv });
	const wb = await start({ folder, userSettings: { "gopi.approval": "off" } });
	await wb.openGopi();
	const prompt = "write: a.txt :: changed by gopi";
	await wb.send(prompt);
	await wb.waitForFile("a.txt", "changed by gopi");
	await wb.waitIdle();

	// The user has the file open: VS Code shows what gopi wrote.
	await wb.runCommand("Go to File...").catch(async () => wb.page.keyboard.press("Control+P"));
	await wb.page.locator(".quick-input-widget input.input").fill("a.txt");
	await wb.page.locator(".quick-input-list .monaco-list-row", { hasText: "a.txt" }).first().click();
	// The one text editor open (the diff editor is closed before it is read again).
	const editorText = async () => (await wb.page.locator(".editor-group-container .monaco-editor .view-lines").first().innerText()).replace(/\u00a0/g, " ");
	await until(async () => /changed by gopi/.test(await editorText()), { message: "a.txt in its editor" });

	const user = wb.chat().locator(".msg.user").last();
	await user.hover();
	await user.locator("button.rewind").waitFor();
	await wb.screenshot("rewind-button");
	await user.locator("button.rewind").click();
	await wb.pickQuickItem("Code and conversation");
	// Before anything changes: the checkpoint's a.txt against today's, then the question.
	await until(async () => /original line/.test(await wb.diffSide("original")) && /changed by gopi/.test(await wb.diffSide("modified")), {
		message: "the checkpoint's a.txt against now in the diff editor",
	});
	const question = await wb.waitForDialog();
	assert.match(question, /Rewind code and conversation to before “write: a\.txt/);
	await wb.screenshot("rewind-confirm");
	assert.equal(wb.readFile("a.txt"), "changed by gopi", "nothing changes before the answer");
	await wb.answerDialog("Rewind");

	await wb.waitForFile("a.txt", "original line\n");
	await until(async () => (await wb.chat().locator("#input").inputValue()) === prompt, {
		message: "the message back in the composer",
	});
	assert.equal(await wb.chat().locator(".msg.user").count(), 0, "the chat is back to before the message");
	await wb.waitForNotification("restored to before");
	// The rewind's diff is the active editor; closed, a.txt's editor is left.
	await wb.runCommand("View: Close Editor");
	await until(async () => !(await wb.editorTabs()).some((t) => /rewind/.test(t)), { message: "the rewind's diff to close" });
	await until(async () => /original line/.test(await editorText()), { message: "the open editor to reload the restored file" });
	await wb.screenshot("rewind-restored");

	await wb.runCommand("gopi: Undo Rewind");
	await wb.waitForFile("a.txt", "changed by gopi");
	await until(async () => /changed by gopi/.test(await editorText()), { message: "the editor to show the change again" });
	// Code and conversation were rewound, so both come back.
	await until(async () => (await wb.chat().locator(".msg.user").count()) === 1, { message: "the conversation back in the chat" });
	assert.equal(await wb.chat().locator("#input").inputValue(), "", "the composer emptied of the message");
});
