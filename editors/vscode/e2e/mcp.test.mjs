// gopi: MCP Servers in real VS Code: the session's servers from mcp.json in
// gopi's agent directory, a failed one first with its error, a connected
// one's tools a pick away; a server that fails to start is a warning.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { e2e, tempFolder, until } from "./lib.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

e2e("MCP servers: a failed server is a warning that opens the list; the list shows it first with its error, and a connected server's tools", async ({ start }) => {
	const folder = tempFolder("mcp");
	const agentDir = fs.mkdtempSync(path.join(path.dirname(folder), "agent-"));
	const server = path.join(agentDir, "mcpserver");
	execFileSync("go", ["build", "-o", server, "./core/mcp/testdata/mcpserver"], { cwd: repo, stdio: "inherit" });
	fs.writeFileSync(
		path.join(agentDir, "mcp.json"),
		JSON.stringify({
			mcpServers: {
				tools: { command: server, exposure: "direct" },
				broken: { command: "gopi-no-such-mcp-server", exposure: "direct" },
			},
		}),
	);
	const wb = await start({ folder, userSettings: { "gopi.env": { PI_CODING_AGENT_DIR: agentDir } } });
	await wb.openGopi();
	// gopi reports the failure (mcp_server_state): a toast, not a dialog,
	// whose button opens the list.
	const warning = await wb.waitForNotification('MCP server "broken" failed: ', { timeout: 60_000 });
	assert.match(warning, /gopi-no-such-mcp-server/);
	await wb.screenshot("mcp-warning");
	await wb.answerNotification('MCP server "broken" failed: ', "Show MCP Servers");
	let items = await wb.quickPickItems({ title: "MCP servers" });
	assert.match(items[0], /broken[\s\S]*failed/, `the failed server comes first: ${JSON.stringify(items)}`);
	await wb.page.keyboard.press("Escape");
	await wb.send("reply: ready");
	await wb.waitForChat("ready", { where: "replies" });

	await until(
		async () => {
			await wb.page.keyboard.press("Escape");
			await wb.runCommand("gopi: MCP Servers");
			items = await wb.quickPickItems({ title: "MCP servers" });
			return items.some((i) => /tools[\s\S]*connected/.test(i));
		},
		{ message: "the tools server connected", timeout: 60_000, interval: 1000 },
	);
	assert.match(items[0], /broken[\s\S]*failed/, `the failed server comes first: ${JSON.stringify(items)}`);
	assert.match(items[0], /gopi-no-such-mcp-server/, "its error names the missing command");
	await wb.screenshot("mcp-servers");

	await wb.pickQuickItem("tools");
	const tools = await wb.quickPickItems({ title: "tools" });
	assert.ok(tools.some((t) => /echo/.test(t) && /read-only/.test(t)), `echo is listed as read-only: ${JSON.stringify(tools)}`);
	await wb.screenshot("mcp-tools");
});
