package mcp

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/internal/testenv"
)

// Reconnect stops a connected stdio server, starts it again and waits
// for it; subscribers hear it connecting, then connected. A disabled or
// unknown server is an error, and nothing changes.
func TestManagerReconnect(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	off := false
	m, rec := start(t, map[string]Server{
		"s":   stdio("-pidfile", pidFile),
		"off": {Command: serverBin, Enabled: &off},
	})
	first := testenv.ReadPID(t, pidFile)
	for len(rec.changes) > 0 {
		<-rec.changes
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, m.Reconnect(ctx, "s"))
	second := testenv.ReadPID(t, pidFile)
	assert.NotEqual(t, first, second, "the server was not started again")
	require.Eventually(t, func() bool { return !testenv.Alive(first) }, 10*time.Second, 20*time.Millisecond,
		"the old server process %d is still running", first)
	var states []State
	for len(rec.changes) > 0 {
		states = append(states, (<-rec.changes).State)
	}
	assert.Equal(t, []State{StateConnecting, StateConnected}, states)
	assert.NotEmpty(t, tool(t, m, "mcp__s__echo"))

	assert.True(t, errors.Is(m.Reconnect(ctx, "off"), ErrServerDisabled))
	assert.True(t, errors.Is(m.Reconnect(ctx, "nope"), ErrUnknownServer))
	assert.Equal(t, StateDisabled, m.Statuses()[0].State)
}
