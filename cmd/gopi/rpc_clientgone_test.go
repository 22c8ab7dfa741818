package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/core/session"
)

// Issue 10: a client that closes its end of gopi's stdout while a bash
// command runs, then writes one more command, used to kill gopi with
// SIGPIPE, orphaning the command's process group and leaving the session
// unflushed. A broken stdout is now a client that left, as stdin EOF is.
func TestRPCClientClosingStdoutMidBash(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{"native", "jsonrpc"} {
		t.Run(dialect, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "started")
			bash := "touch " + marker + "; sleep 41.7"
			w := newWorld(t, llmtest.Text("hello"))
			var (
				p       *proc
				file    string
				oneMore func()
			)
			if dialect == "jsonrpc" {
				jp := w.startJSONRPC(true, scriptedArgs("--mode", "jsonrpc")...)
				jp.call("initialize", map[string]any{"capabilities": map[string]any{}})
				jp.notify("initialized", map[string]any{})
				jp.call("pi/prompt", map[string]any{"message": "hi"})
				jp.until(func(r record) bool { return event(r, "agent_end") })
				file = record(jp.call("pi/get_state", nil).(map[string]any)).str("sessionFile")
				jp.request("pi/bash", map[string]any{"command": bash})
				oneMore = func() { jp.request("pi/get_state", nil) }
				p = jp.proc
			} else {
				p = w.start()
				p.ok("1", map[string]any{"type": "prompt", "message": "hi"})
				p.idle()
				file = p.ok("2", map[string]any{"type": "get_state"}).(map[string]any)["sessionFile"].(string)
				p.send(map[string]any{"id": "3", "type": "bash", "command": bash})
				oneMore = func() { p.send(map[string]any{"id": "4", "type": "get_state"}) }
			}
			require.NotEmpty(t, file)
			require.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, waitLimit, pollEvery)

			require.NoError(t, p.stdout.Close())
			oneMore() // its answer meets the closed pipe
			assert.Equal(t, 0, p.wait(), "gopi must exit 0, not die of SIGPIPE\n%s", p.transcript())
			assert.False(t, processRunning("sleep 41.7"), "the bash command's process group outlived gopi")
			_, rep, err := session.Open(file)
			require.NoError(t, err)
			assert.True(t, rep.OK(), "the session file must load cleanly")
		})
	}
}
