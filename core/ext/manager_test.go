package ext

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The MCP servers extensions register are merged in extension order, the
// first of a name winning; a later registrations notification replaces
// one extension's; a host that stopped for good keeps none, and gopi is
// told.
func TestManagerMergesMCPServers(t *testing.T) {
	server := func(name, path string) MCPServer {
		return MCPServer{Name: name, Config: json.RawMessage(`{"command":"x"}`), ExtensionPath: path}
	}
	a := &Func{Regs: Registrations{MCPServers: []MCPServer{server("one", "a.ts"), server("two", "a.ts")}}}
	b := &Func{Regs: Registrations{MCPServers: []MCPServer{server("two", "b.ts"), server("three", "b.ts")}}}
	m := NewManager(a, b)
	peer := &notes{}
	m.Start(context.Background(), peer)
	names := func() []string {
		var out []string
		for _, s := range m.Registrations().MCPServers {
			out = append(out, s.Name+" "+s.ExtensionPath)
		}
		return out
	}
	assert.Equal(t, []string{"one a.ts", "two a.ts", "three b.ts"}, names())

	regs, err := json.Marshal(Registrations{MCPServers: []MCPServer{server("four", "b.ts")}})
	require.NoError(t, err)
	b.peer.Notification(PeerRegistrations, regs)
	assert.Equal(t, []string{"one a.ts", "two a.ts", "four b.ts"}, names())

	a.peer.Notification(PeerStopped, nil)
	assert.Equal(t, []string{"four b.ts"}, names())
	assert.True(t, peer.saw(PeerStopped))
}

// BenchmarkStateSync is what bringing an extension's copy of the state up
// to date costs before each hook call when nothing changed but the idle
// flag: a snapshot with 40 tools, compared field by field.
func BenchmarkStateSync(b *testing.B) {
	m := NewManager(&Func{})
	m.Start(context.Background(), nil)
	tools := make([]ToolInfo, 40)
	for i := range tools {
		tools[i] = ToolInfo{Name: fmt.Sprintf("tool%d", i), Description: strings.Repeat("does things. ", 20),
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"where"}},"required":["path"]}`),
			Exposure:   "direct", SourceInfo: map[string]string{"path": "builtin:x"}}
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	snap := Snapshot{Cwd: "/w", ThinkingLevel: "medium", ActiveTools: names, AllTools: tools,
		SystemPrompt: strings.Repeat("You are gopi. ", 400), SessionID: "s", SessionFile: "/s.jsonl"}
	mem := m.exts[0]
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		snap.Idle = i%2 == 0
		m.sync(mem, &State{Snapshot: snap})
	}
}
