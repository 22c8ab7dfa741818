package mcpstate

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/mcp"
)

// Issue 29, reports to clients: mcp_server_state carries a server as
// get_mcp_servers lists it each time it changes. Nothing is sent before
// the client subscribes; what happened before reaches it at once then;
// later changes (a tool list that changed) follow as they come, after
// the host declared the tools again; closing says nothing.
func TestServerStateEvents(t *testing.T) {
	bin := buildServer(t)
	events := make(chan api.MCPServerState, 100)
	s, heard := newState(t, Config{Servers: []mcp.Entry{
		{Name: "broken", Server: mcp.Server{Command: "sh", Args: []string{"-c", "echo cannot start >&2; exit 3"}}},
		entry("t", bin, mcp.ExposureDirect),
		{Name: "off", Server: mcp.Server{Command: bin, Enabled: new(false)}},
	}}, events)
	settled(t, s)
	require.Empty(t, events, "nobody listens yet")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	next := func() api.MCPServer {
		t.Helper()
		select {
		case e := <-events:
			return e.Server
		case <-ctx.Done():
			t.Fatal("no mcp_server_state")
			return api.MCPServer{}
		}
	}
	listed := func(name string) api.MCPServer {
		t.Helper()
		for _, srv := range s.Servers() {
			if srv.Name == name {
				return srv
			}
		}
		t.Fatalf("no server %s", name)
		return api.MCPServer{}
	}
	s.Subscribed()
	// Both settled before the subscription: each is heard of once, as
	// the listing has it; the disabled one never changed.
	broken := next()
	assert.Equal(t, api.MCPFailed, broken.State)
	assert.Contains(t, broken.Error, "cannot start")
	assert.Equal(t, listed("broken"), broken)
	srv := next()
	assert.Equal(t, api.MCPConnected, srv.State)
	assert.Equal(t, listed("t"), srv)
	assert.Equal(t, api.MCPDisabled, listed("off").State)
	require.Empty(t, events)

	heard.mu.Lock()
	changes := heard.changes
	heard.mu.Unlock()
	run(t, named(s.Declared(), "mcp__t__add_tool"), `{"name": "late"}`)
	srv = next()
	assert.Equal(t, "t", srv.Name)
	assert.Len(t, srv.Tools, len(listed("t").Tools))
	assert.True(t, slices.ContainsFunc(srv.Tools, func(tl api.MCPTool) bool { return tl.Name == "mcp__t__late" }), "%v", srv.Tools)
	heard.mu.Lock()
	assert.Greater(t, heard.changes, changes, "the host heard of the change first")
	heard.mu.Unlock()

	s.Close()
	assert.Empty(t, events, "closing is no change")
}

// Without servers and without extensions there is no manager: nothing to
// list, declare or wait for. With extensions there is one (they may
// register servers), and under Off none either way.
func TestNoServers(t *testing.T) {
	s, _ := newState(t, Config{}, nil)
	assert.Nil(t, s.mgr)
	assert.Equal(t, []api.MCPServer{}, s.Servers())
	assert.Empty(t, s.Declared())
	assert.Empty(t, s.ServerLines())
	s.WaitFirst(context.Background())

	withExts, _ := newState(t, Config{Extensions: extensions{}}, nil)
	assert.NotNil(t, withExts.mgr)
	off, _ := newState(t, Config{Extensions: extensions{}, Off: true}, nil)
	assert.Nil(t, off.mgr)
}

// entries hands out a copy: /mcp's changes write the configured servers
// in place (under the lock), while a listing made before reads its own
// (the race the binary's /mcp test found with its dialects in parallel).
func TestEntriesAreACopy(t *testing.T) {
	s, _ := newState(t, Config{Servers: []mcp.Entry{
		{Name: "one", Server: mcp.Server{Command: "true", Enabled: new(false)}},
	}}, nil)
	got := s.entries()
	s.registered.mu.Lock()
	s.registered.configured[0].Name = "changed"
	s.registered.mu.Unlock()
	assert.Equal(t, "one", got[0].Name)
}
