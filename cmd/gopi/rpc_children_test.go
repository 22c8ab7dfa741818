package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// pipeScript shows the signals its shell ignores, then runs the two
// pipelines that end at once in a terminal and never end, or complain,
// when SIGPIPE is ignored. The endless one is bounded by timeout, so a
// regression fails the test with "rc=124" instead of hanging it.
const pipeScript = `grep SigIgn /proc/self/status; yes | head -c1; echo; ` +
	`timeout 10 bash -c 'while true; do echo y; done | head -1'; echo "rc=$?"`

// checkPipeOutput asserts that the script's shell started with SIGPIPE at
// its default and that both pipelines ended quietly.
func checkPipeOutput(t *testing.T, out string) {
	t.Helper()
	line, _, _ := strings.Cut(out[strings.Index(out, "SigIgn:"):], "\n")
	mask, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(line, "SigIgn:")), 16, 64)
	require.NoError(t, err, out)
	assert.Zero(t, mask&(1<<(int(syscall.SIGPIPE)-1)), "SIGPIPE is ignored in the command: %s", line)
	assert.NotContains(t, out, "Broken pipe")
	assert.Contains(t, out, "y\ny\nrc=0")
}

// Issue 25: gopi ignored SIGPIPE for itself, and an ignored signal is
// inherited across exec, so every command it ran had SIGPIPE ignored:
// `yes | head -c1` printed "Broken pipe" and `while true; do echo y; done |
// head -1` never ended. Commands now start with SIGPIPE at its default, in
// the bash command and the bash tool, while gopi itself still survives a
// client that closes its end of stdout (TestRPCClientClosingStdoutMidBash).
func TestRPCCommandsStartWithSIGPIPEAtItsDefault(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs Linux's /proc")
	}
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("t1", "bash", mustJSON(t, map[string]any{"command": pipeScript}))),
		llmtest.Text("done"),
	)
	p := w.start()
	out := p.ok("1", map[string]any{"type": "bash", "command": pipeScript}).(map[string]any)
	checkPipeOutput(t, record(out).str("output"))

	p.ok("2", map[string]any{"type": "prompt", "message": "run it"})
	var end record
	for _, r := range p.idle() {
		if r.is("tool_execution_end") {
			end = r
		}
	}
	require.NotNil(t, end, p.transcript())
	content := end.obj("result")["content"].([]any)
	checkPipeOutput(t, record(content[0].(map[string]any)).str("text"))
	assert.Equal(t, 0, p.exit())
}

// backgroundJob is a command that leaves a process running after it
// returns, named mark so the test can find it.
func backgroundJob(mark string) string {
	return fmt.Sprintf("(exec -a %s sleep 30) & echo started", mark)
}

// newMark returns a process name no other test uses, and makes sure that
// no process of that name is left when the test ends, whatever happens.
func newMark(t *testing.T, what string) string {
	mark := fmt.Sprintf("gopi-bg-%s-%d-%d", what, os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { killNamed(mark) })
	return mark
}

func killNamed(s string) {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(d))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// Issue 25: a background job of a command (`cmd &`) stayed in the
// command's process group after the shell exited, and gopi left it running
// when it exited. Now every group a command started is ended when gopi
// exits: stdin's end, SIGTERM, SIGHUP, and JSON-RPC's shutdown and exit.
// A background job still outlives its own command, as in pi (a dev server
// started with `&` keeps serving while the session goes on).
func TestRPCBackgroundJobsEndWithGopi(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs Linux's /proc")
	}
	t.Run("stdin closes", func(t *testing.T) {
		t.Parallel()
		cmdMark, toolMark := newMark(t, "cmd"), newMark(t, "tool")
		w := newWorld(t,
			llmtest.ToolCalls(llmtest.Call("t1", "bash", mustJSON(t, map[string]any{"command": backgroundJob(toolMark)}))),
			llmtest.Text("done"),
		)
		p := w.start()
		out := p.ok("1", map[string]any{"type": "bash", "command": backgroundJob(cmdMark)}).(map[string]any)
		assert.Equal(t, "started\n", record(out).str("output"))
		p.ok("2", map[string]any{"type": "prompt", "message": "start it"})
		p.idle()
		assert.True(t, processRunning(cmdMark), "the bash command's background job outlives the command")
		assert.True(t, processRunning(toolMark), "the bash tool's background job outlives the call")
		assert.Equal(t, 0, p.exit())
		assert.False(t, processRunning(cmdMark), "the bash command's background job ended with gopi")
		assert.False(t, processRunning(toolMark), "the bash tool's background job ended with gopi")
	})
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			mark := newMark(t, "sig")
			p := newWorld(t).start()
			p.ok("1", map[string]any{"type": "bash", "command": backgroundJob(mark)})
			require.True(t, processRunning(mark))
			p.signal(sig)
			assert.Equal(t, 0, p.wait())
			assert.False(t, processRunning(mark), "the background job ended with gopi")
		})
	}
	t.Run("jsonrpc shutdown and exit", func(t *testing.T) {
		t.Parallel()
		mark := newMark(t, "jsonrpc")
		w := newWorld(t)
		p := w.startJSONRPC(true, scriptedArgs("--mode", "rpc")...)
		p.call("initialize", map[string]any{"capabilities": map[string]any{}})
		p.notify("initialized", map[string]any{})
		res := p.call("pi/bash", map[string]any{"command": backgroundJob(mark)}).(map[string]any)
		assert.Equal(t, "started\n", record(res).str("output"))
		require.True(t, processRunning(mark))
		p.call("shutdown", nil)
		p.notify("exit", nil)
		assert.Equal(t, 0, p.wait())
		assert.False(t, processRunning(mark), "the background job ended with gopi")
	})
	t.Run("a job that ignores SIGTERM", func(t *testing.T) {
		t.Parallel()
		mark := newMark(t, "stubborn")
		p := newWorld(t).start()
		p.ok("1", map[string]any{"type": "bash", "command": fmt.Sprintf(`(trap "" TERM; exec -a %s sleep 30) & echo started`, mark)})
		require.True(t, processRunning(mark))
		assert.Equal(t, 0, p.exit())
		assert.False(t, processRunning(mark), "SIGKILL followed")
	})
}
