package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server's log messages reach mcp.log, one line each, in a private file.
func TestServerLogReceivesNotifications(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent", "mcp.log")
	m := NewManager(Options{Servers: entries(map[string]Server{"s": stdio()}), Cwd: t.TempDir(), TempDir: t.TempDir(),
		Version: "test", Log: NewServerLog(path)})
	m.Start()
	defer func() { require.NoError(t, m.Close()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, m.Wait(ctx, nil))

	res := call(t, ctx, tool(t, m, "mcp__s__log"), map[string]any{"level": "warning", "logger": "db", "text": "slow query\nsecond line"})
	require.False(t, res.IsError, res.Content.Text())
	// The notification is written before the call's answer is read, but
	// by another goroutine of the session: wait for the line.
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), "second line")
	}, 10*time.Second, 10*time.Millisecond)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \[s\] warning db: slow query\n    second line\n$`, string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestServerLogFormatAndRotation(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	assert.Equal(t, "2026-11-27T10:00:00.000Z [a] info {\"n\":1}\n", formatLogLine(at, "a", "", "", map[string]any{"n": 1}))
	assert.Equal(t, "2026-11-27T10:00:00.000Z [a] error x: one\n    two\n", formatLogLine(at, "a", "error", "x", "one\r\ntwo"))

	path := filepath.Join(t.TempDir(), "mcp.log")
	require.NoError(t, os.WriteFile(path, make([]byte, maxLogBytes+1), 0o600))
	l := NewServerLog(path)
	l.now = func() time.Time { return at }
	l.Write("a", "info", "", "after")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "2026-11-27T10:00:00.000Z [a] info after\n", string(b), "the full log moved aside")
	fi, err := os.Stat(path + ".1")
	require.NoError(t, err)
	assert.EqualValues(t, maxLogBytes+1, fi.Size())

	var nilLog *ServerLog
	nilLog.Write("a", "info", "", "dropped") // no log: nothing happens
	NewServerLog("").Write("a", "info", "", "dropped")
}
