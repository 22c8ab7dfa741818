package mcp

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/internal/testenv"
)

// Issue 29 (extensions): a server added to a started manager connects at
// once and its tools join; one added before Start waits for it; a name
// that is there already is refused; Remove takes the server and its tools
// away at once and stops its process; nothing is added once the manager
// has closed.
func TestManagerAddAndRemove(t *testing.T) {
	rec := newRecorder()
	m := NewManager(Options{Cwd: t.TempDir(), TempDir: t.TempDir(), Version: "test", Report: rec.report})
	m.Subscribe(rec.changed)
	pidFile := filepath.Join(t.TempDir(), "pid")
	require.NoError(t, m.Add(Entry{Name: "early", Server: stdio()}))
	assert.Equal(t, StateConnecting, m.Statuses()[0].State, "nothing connects before Start")
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	require.NoError(t, m.Add(Entry{Name: "late", Server: stdio("-pidfile", pidFile), Scope: ScopeExtension}))
	require.ErrorContains(t, m.Add(Entry{Name: "late", Server: stdio()}), `server "late" is there already`)
	require.NoError(t, m.Wait(ctx, nil))
	assert.NotNil(t, tool(t, m, "mcp__early__echo"))
	echo := tool(t, m, "mcp__late__echo")
	res := call(t, ctx, echo, map[string]any{"text": "hi"})
	assert.Equal(t, "echo: hi", res.Content.Text())
	var names []string
	for _, st := range m.Statuses() {
		names = append(names, st.Name+" "+string(st.State))
	}
	assert.Equal(t, []string{"early connected", "late connected"}, names)

	pid := testenv.WaitPID(t, pidFile, 10*time.Second)
	assert.True(t, m.Remove("late"))
	assert.False(t, m.Remove("late"), "gone already")
	for _, tl := range m.Tools() {
		assert.NotEqual(t, "late", tl.Server(), "the removed server's tools are gone at once")
	}
	assert.Len(t, m.Statuses(), 1)
	assert.Eventually(t, func() bool { return !testenv.Alive(pid) }, 10*time.Second, 10*time.Millisecond,
		"the removed server's process stops")
	res = call(t, ctx, echo, map[string]any{"text": "again"})
	assert.True(t, res.IsError, "a removed server's tool no longer runs: %s", res.Content.Text())

	require.NoError(t, m.Close())
	assert.ErrorIs(t, m.Add(Entry{Name: "after", Server: stdio()}), ErrClosed)
	assert.False(t, m.Remove("early"))
	assert.Empty(t, rec.reported())
}

// A tool's namespace is its server as pi groups it: mcp__<server> with
// "-" as "_", the server's name as an alias, the configured description
// (trimmed) and the server's instructions.
func TestToolNamespace(t *testing.T) {
	srv := stdio()
	srv.Description = " Tests things. "
	m, _ := start(t, map[string]Server{"my-srv": srv})
	assert.Equal(t, ToolNamespace{Name: "mcp__my_srv", Aliases: []string{"my-srv"}, Description: "Tests things.",
		Instructions: "A server for gopi's tests.\nSecond line."}, tool(t, m, "mcp__my_srv__echo").Namespace())
}
