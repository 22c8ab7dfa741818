package main

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pi 1.5's shutdown rule (rpc.md, Shutdown): stdin's end, SIGTERM and
// SIGHUP start an orderly shutdown, which neither a stdin EOF nor a single
// signal interrupts; a second signal exits at once (status 128+signal, as
// pi's). The orderly shutdown here is slow on purpose: a background job
// that ignores SIGTERM gets a second's grace before SIGKILL.
func TestRPCShutdownRule(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs Linux's /proc")
	}
	stubborn := func(mark string) string {
		return fmt.Sprintf(`(trap "" TERM; exec -a %s sleep 30) & echo started`, mark)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run("a second "+sig.String()+" exits at once", func(t *testing.T) {
			mark := newMark(t, "twice")
			p := newWorld(t).start()
			p.ok("1", map[string]any{"type": "bash", "command": stubborn(mark)})
			require.True(t, processRunning(mark))
			p.signal(sig)
			time.Sleep(100 * time.Millisecond)
			start := time.Now()
			p.signal(sig)
			assert.Equal(t, 128+int(sig), p.wait())
			assert.Less(t, time.Since(start), 900*time.Millisecond, "did not wait for the job's grace")
			assert.False(t, processRunning(mark), "the job was killed, not left behind")
		})
	}
	t.Run("one signal after stdin's end does not interrupt", func(t *testing.T) {
		mark := newMark(t, "eof")
		p := newWorld(t).start()
		p.ok("1", map[string]any{"type": "bash", "command": stubborn(mark)})
		require.True(t, processRunning(mark))
		_ = p.stdin.Close()
		time.Sleep(100 * time.Millisecond)
		p.signal(syscall.SIGTERM)
		assert.Equal(t, 0, p.wait(), "the orderly shutdown finished")
		assert.False(t, processRunning(mark), "SIGKILL followed the grace")
	})
}
