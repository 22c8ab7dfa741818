package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/internal/testenv"
)

// mcpExtension registers MCP servers (bin is the test server) and reports
// what pi's API says of them through notifications: /mcp-tools, once the
// servers' tools are there, what pi.getAllTools() says of some (exposure,
// annotations, namespace, source), pi.getMcpServers() and the calls that
// threw while it loaded; /mcp-late registers a server after loading, waits
// for its tools and unregisters it, reporting the mcp_servers_change
// events.
const mcpExtension = `export default function (pi) {
	const BIN = %q;
	const errors = [];
	const attempt = (name, config) => {
		try { pi.registerMcpServer(name, config); } catch (err) { errors.push(err.message); }
	};
	attempt("reg", { command: BIN, exposure: "direct", toolExposure: { slow: "codemode-deferred", big: "hidden" }, description: "Registered." });
	attempt("cfg", { command: BIN }); // mcp.json's cfg wins
	attempt("bad name", { command: BIN });
	attempt("bad", { url: "ftp://x" });
	const atLoad = pi.getMcpServers().length;
	const changes = [];
	pi.on("mcp_servers_change", (event) => changes.push(event.servers.map((s) => s.name).join(",")));
	const waitFor = async (name) => {
		for (let i = 0; i < 400 && !pi.getAllTools().some((t) => t.name === name); i++) await new Promise((r) => setTimeout(r, 50));
	};
	const show = (t) => [t.name, t.exposure, JSON.stringify(t.annotations ?? null), t.namespace?.name,
		(t.namespace?.aliases ?? []).join("|"), t.namespace?.description ?? "-", t.sourceInfo?.path].join(" ");
	pi.registerCommand("mcp-tools", { description: "MCP tools", handler: async (_args, ctx) => {
		await waitFor("mcp__reg__echo");
		await waitFor("mcp__cfg__echo");
		const names = ["mcp__reg__echo", "mcp__reg__slow", "mcp__reg__big", "mcp__cfg__echo", "mcp__cfg__fail"];
		ctx.ui.notify("tools " + pi.getAllTools().filter((t) => names.includes(t.name)).map(show).sort().join("; "), "info");
		ctx.ui.notify("servers " + JSON.stringify(pi.getMcpServers().map((s) => [s.name, s.config, s.extensionPath === %q])), "info");
		ctx.ui.notify("errors " + errors.join(" | ") + " (at load: " + atLoad + ")", "info");
	} });
	pi.registerCommand("mcp-late", { description: "a server after loading", handler: async (_args, ctx) => {
		pi.registerMcpServer("la-te", { command: BIN, exposure: "direct" });
		attempt("la_te", { command: BIN });
		await waitFor("mcp__la_te__echo");
		const had = pi.getAllTools().some((t) => t.name === "mcp__la_te__echo");
		pi.unregisterMcpServer("la-te");
		pi.unregisterMcpServer("cfg-of-nobody");
		ctx.ui.notify("late " + had + "; changes " + changes.join(" / ") + "; " + errors[errors.length - 1], "info");
	} });
}
`

// otherMCPExtension tries to take a name mcpExtension registered.
const otherMCPExtension = `export default function (pi) {
	let error = "";
	try { pi.registerMcpServer("reg", { command: "x" }); } catch (err) { error = err.message; }
	pi.unregisterMcpServer("reg"); // not its own: nothing happens
	pi.registerCommand("other", { description: "its error", handler: async (_args, ctx) => ctx.ui.notify("other " + error, "info") });
}
`

// Issue 29: pi.registerMcpServer, unregisterMcpServer, getMcpServers and
// mcp_servers_change, and what pi.getAllTools() says of MCP tools, run on
// gopi and on pi 1.6.0 alike: a server registered while loading connects
// with mcp.json's (which wins over a registered one of the same name), its
// direct tools reach the model; bad configs and another extension's names
// throw pi's messages; one registered later connects at once and goes when
// unregistered, each change an event listing every registered server.
func TestExtensionMCPServers(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	bin := mcpServerBinary(t)
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.ToolCalls(llmtest.Call("c1", "mcp__reg__echo", `{"text": "hi"}`)),
			llmtest.Text("Echoed."),
		}
	}
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
			"cfg": map[string]any{"command": bin, "exposure": "direct", "toolExposure": map[string]any{"fail": "hidden"}},
		}})
		path := filepath.Join(w.cwd, "mcp-ext.ts")
		w.writeExt("mcp-ext.ts", fmt.Sprintf(mcpExtension, bin, path))
		other := w.writeExt("other.ts", otherMCPExtension)
		p := start("-e", path, "-e", other)

		rs := p.command("1", map[string]any{"type": "prompt", "message": "/mcp-tools"}, "errors ")
		ns := strings.Join(notices(rs), "\n")
		for _, want := range []string{
			`mcp__cfg__echo direct {"readOnlyHint":true,"idempotentHint":true} mcp__cfg cfg - builtin:mcp`,
			`mcp__cfg__fail hidden null mcp__cfg cfg - builtin:mcp`,
			`mcp__reg__big hidden null mcp__reg reg Registered. builtin:mcp`,
			`mcp__reg__echo direct {"readOnlyHint":true,"idempotentHint":true} mcp__reg reg Registered. builtin:mcp`,
			`mcp__reg__slow deferred null mcp__reg reg Registered. builtin:mcp`,
		} {
			assert.Contains(t, ns, want)
		}
		// The config as given, the alias resolved.
		quoted, _ := json.Marshal(bin)
		assert.Contains(t, ns, fmt.Sprintf(`servers [["reg",{"command":%s,"exposure":"direct",`+
			`"toolExposure":{"slow":"codemode","big":"hidden"},"description":"Registered."},true],["cfg",{"command":%[1]s},true]]`, quoted))
		assert.Contains(t, ns, `errors Invalid MCP server registered by extension "`+path+`": invalid server name "bad name" (use letters, digits, "_" and "-")`+
			` | Invalid MCP server registered by extension "`+path+`": server "bad": url must be an http or https URL (at load: 0)`)

		rs = p.command("2", map[string]any{"type": "prompt", "message": "/other"}, "other ")
		assert.Contains(t, notices(rs), `other MCP server "reg" is already registered by extension "`+path+`"`)

		p.ok("3", map[string]any{"type": "prompt", "message": "use echo"})
		end := p.toolEnd("mcp__reg__echo")
		assert.Equal(t, "echo: hi", resultText(end))
		p.until(settled)

		rs = p.command("4", map[string]any{"type": "prompt", "message": "/mcp-late"}, "late ")
		assert.Contains(t, notices(rs), `late true; changes reg,cfg,la-te / reg,cfg; MCP server "la_te" conflicts with registered server "la-te"`)
		assert.Equal(t, 0, p.exit())
	})
}

// gopi's side of it: get_mcp_servers lists a registered server after
// mcp.json's, with scope "extension" and its extension as the source, and
// stops listing it once it is unregistered; its process ends then, and
// the others' with gopi.
func TestExtensionMCPServersListed(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	bin := mcpServerBinary(t)
	w := newWorld(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"cfg": map[string]any{"command": bin, "exposure": "direct"},
	}})
	path := w.writeExt("lister.ts", fmt.Sprintf(`export default function (pi) {
	pi.registerMcpServer("reg", { command: %q, args: ["-pidfile", %q], exposure: "deferred" });
	pi.registerCommand("drop", { description: "unregisters", handler: async () => pi.unregisterMcpServer("reg") });
}
`, bin, pidFile))
	p := e.gopi(t, w, "-e", path)
	n := 0
	get := func() any { n++; return p.ok(fmt.Sprint("s", n), map[string]any{"type": "get_mcp_servers"}) }
	var servers map[string]map[string]any
	require.Eventually(t, func() bool {
		servers = mcpServersByName(t, get)
		return len(servers) == 2
	}, 20*time.Second, 50*time.Millisecond)
	assert.Equal(t, "global", servers["cfg"]["scope"])
	reg := servers["reg"]
	assert.Equal(t, "extension", reg["scope"])
	assert.Equal(t, path, reg["source"])
	assert.Equal(t, "deferred", reg["exposure"])
	assert.Equal(t, "connected", reg["state"])
	assert.NotEmpty(t, reg["tools"])
	pid := testenv.ReadPID(t, pidFile)

	p.ok("d", map[string]any{"type": "prompt", "message": "/drop"})
	require.Eventually(t, func() bool { return len(mcpServersByName(t, get)) == 1 }, 10*time.Second, 50*time.Millisecond)
	assert.Eventually(t, func() bool { return !testenv.Alive(pid) }, 10*time.Second, 20*time.Millisecond,
		"the unregistered server's process ends")
	assert.Equal(t, 0, p.exit())
}
