package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/rpc"
)

// mcpToolNames are the model's names of every server's tools, as
// get_mcp_servers lists them: server → the server's name for the tool →
// the model's. It fails the test when two tools share a name.
func mcpToolNames(t *testing.T, servers map[string]map[string]any) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	owner := map[string]string{}
	for name, s := range servers {
		out[name] = map[string]string{}
		tools, _ := s["tools"].([]any)
		for _, tl := range tools {
			tm := tl.(map[string]any)
			model, remote := tm["name"].(string), tm["remoteName"].(string)
			if other, ok := owner[model]; ok {
				t.Errorf("%s names %s's tool and %s/%s", model, other, name, remote)
			}
			owner[model] = name + "/" + remote
			out[name][remote] = model
		}
	}
	return out
}

// searched is what a tool_search result loaded.
func searched(t *testing.T, end record) []string {
	t.Helper()
	details, _ := end.obj("result")["details"].(map[string]any)
	var out []string
	loaded, _ := details["loadedTools"].([]any)
	for _, n := range loaded {
		out = append(out, n.(string))
	}
	return out
}

var suffixed = regexp.MustCompile(`^mcp__a__b__c_[0-9a-f]{8}$`)

// Issue 37: server "a" offers "b__c" and server "a__b" offers "c"; both
// were mcp__a__b__c, so one shadowed the other (the direct one answered
// for both, and tool_search loaded a name the model could only call the
// other tool by). Each now has its own name, which get_mcp_servers lists,
// tool_search loads and a call reaches; the names hold when a server
// reconnects and when a tool list changes. A server's tools named like
// the built-ins (read, bash) never take a built-in's place.
func TestRPCMCPToolNamesAreOneToolEach(t *testing.T) {
	t.Parallel()
	bin := mcpServerBinary(t)
	w := newWorld(t)
	w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"a":    map[string]any{"command": bin, "args": []string{"-id", "a", "-tool", "b__c"}, "exposure": "direct"},
		"a__b": map[string]any{"command": bin, "args": []string{"-id", "a__b", "-tool", "c"}, "exposure": "deferred"},
		"r":    map[string]any{"command": bin, "args": []string{"-id", "r", "-tool", "read", "-tool", "bash"}, "exposure": "direct"},
	}})
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "note.txt"), []byte("the file's own text\n"), 0o644))
	p := startProc(t, w.cwd, w.agentDir, "--mode", "rpc", "--model", "faux/faux-fast")
	n := 0
	list := func() map[string]map[string]string {
		return mcpToolNames(t, mcpServersByName(t, func() any {
			n++
			return p.ok(fmt.Sprint("s", n), map[string]any{"type": "get_mcp_servers"})
		}))
	}
	names := list()
	ac, abc := names["a"]["b__c"], names["a__b"]["c"]
	assert.Regexp(t, suffixed, ac)
	assert.Regexp(t, suffixed, abc)
	require.NotEqual(t, ac, abc)
	assert.Equal(t, "mcp__a__echo", names["a"]["echo"], "a's other tools keep pi's names")
	assert.Equal(t, "mcp__r__read", names["r"]["read"])

	prompt := func(id, message, tool string) record {
		t.Helper()
		p.ok(id, map[string]any{"type": "prompt", "message": message})
		return toolEndOf(t, p, p.idle(), tool)
	}
	assert.Equal(t, "b__c of a", resultText(prompt("1", "call: "+ac, ac)), p.transcript())
	end := prompt("2", `call: tool_search {"query": "`+abc+`", "limit": 1}`, "tool_search")
	assert.Equal(t, []string{abc}, searched(t, end), "tool_search loads the name get_mcp_servers gives")
	assert.Equal(t, "c of a__b", resultText(prompt("3", "call: "+abc, abc)), p.transcript())

	// The built-ins stay the built-ins.
	assert.Contains(t, resultText(prompt("4", `call: read {"path": "note.txt"}`, "read")), "the file's own text")
	assert.Equal(t, "read of r", resultText(prompt("5", "call: mcp__r__read", "mcp__r__read")))

	// a crashes and comes back; it lists a new tool: every name holds.
	prompt("6", "call: mcp__a__crash", "mcp__a__crash")
	assert.Equal(t, "b__c of a", resultText(prompt("7", "call: "+ac, ac)), p.transcript())
	prompt("8", `call: mcp__a__add_tool {"name": "late"}`, "mcp__a__add_tool")
	var after map[string]map[string]string
	require.Eventually(t, func() bool { after = list(); return after["a"]["late"] != "" }, waitLimit, 20*time.Millisecond)
	assert.Equal(t, "mcp__a__late", after["a"]["late"])
	for server, tools := range names {
		for remote, model := range tools {
			assert.Equal(t, model, after[server][remote], "%s/%s was renamed", server, remote)
		}
	}
	assert.Equal(t, "c of a__b", resultText(prompt("10", "call: "+abc, abc)), p.transcript())
	assert.Equal(t, 0, p.exit())
}

// mcpNameExtension registers a tool named like the test server's echo of
// server "srv", and reports what pi.getAllTools() calls the tools whose
// names begin so.
const mcpNameExtension = `export default function (pi) {
	pi.registerTool({
		name: "mcp__srv__echo", label: "Echo", description: "The extension's echo",
		parameters: { type: "object", properties: {} },
		execute: async () => ({ content: [{ type: "text", text: "the extension's echo" }] }),
	});
	pi.registerCommand("echoes", { description: "the echo tools", handler: async (_args, ctx) => {
		for (let i = 0; i < 400 && !pi.getAllTools().some((t) => t.name.startsWith("mcp__srv__echo_")); i++) await new Promise((r) => setTimeout(r, 50));
		const echoes = pi.getAllTools().filter((t) => t.name.startsWith("mcp__srv__echo")).map((t) => t.name + " " + t.sourceInfo?.path);
		ctx.ui.notify("echoes " + echoes.sort().join(", "), "info");
	} });
}
`

// Issue 37: an extension's tool named mcp__srv__echo keeps its name, and
// the server's echo takes pi's suffix: get_mcp_servers, tool_search,
// pi.getAllTools() and a call all mean the same tool by each name. (Both
// had the name: tool_search loaded it and the call ran the extension's.)
func TestExtensionToolNamedLikeAnMCPTool(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	bin := mcpServerBinary(t)
	w := newWorld(t)
	w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"srv": map[string]any{"command": bin, "exposure": "deferred"},
	}})
	ext := w.writeExt("echo-ext.ts", mcpNameExtension)
	p := launchArgv(t, w.cwd, w.agentDir, rpc.FramingNewline,
		[]string{"GOPI_NODE=" + e.node, "GOPI_PI_PACKAGE=" + e.piPackage, "HOME=" + w.home(t)},
		gopiBinary(t), "--mode", "rpc", "--model", "faux/faux-fast", "-e", ext)

	rs := p.command("1", map[string]any{"type": "prompt", "message": "/echoes"}, "echoes ")
	var echoes string
	for _, n := range notices(rs) {
		if strings.HasPrefix(n, "echoes ") {
			echoes = n
		}
	}
	n := 0
	names := mcpToolNames(t, mcpServersByName(t, func() any {
		n++
		return p.ok(fmt.Sprint("s", n), map[string]any{"type": "get_mcp_servers"})
	}))
	echo := names["srv"]["echo"]
	assert.Regexp(t, `^mcp__srv__echo_[0-9a-f]{8}$`, echo)
	assert.Equal(t, "echoes mcp__srv__echo "+ext+", "+echo+" builtin:mcp", echoes)

	prompt := func(id, message, tool string) record {
		t.Helper()
		p.ok(id, map[string]any{"type": "prompt", "message": message})
		return toolEndOf(t, p, p.idle(), tool)
	}
	end := prompt("2", `call: tool_search {"query": "echo"}`, "tool_search")
	assert.Contains(t, searched(t, end), echo)
	assert.NotContains(t, searched(t, end), "mcp__srv__echo")
	assert.Equal(t, "echo: hi", resultText(prompt("3", `call: `+echo+` {"text": "hi"}`, echo)), p.transcript())
	assert.Equal(t, "the extension's echo", resultText(prompt("4", "call: mcp__srv__echo", "mcp__srv__echo")), p.transcript())
	assert.Equal(t, 0, p.exit())
}
