package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 37, item 9: with the agent directory set under a regular file
// (every mkdir and read there fails with ENOTDIR) gopi exited 1 ("create
// session dir: ... not a directory"). It serves, as pi does: sessions in
// memory, nothing read from that directory, and one warning on stderr.
func TestUnusableAgentDirStillServes(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	file := filepath.Join(t.TempDir(), "plain-file")
	require.NoError(t, os.WriteFile(file, []byte("not a folder"), 0o644))
	agentDir := filepath.Join(file, "agent")

	oneWarning := func(t *testing.T, stderr string) {
		t.Helper()
		assert.Equal(t, 1, strings.Count(stderr, "gopi: warning:"), "one warning, naming the directory:\n%s", stderr)
		assert.Contains(t, stderr, agentDir)
		assert.NotContains(t, stderr, "problem:", "nothing else is reported about the directory")
	}

	t.Run("rpc", func(t *testing.T) {
		p := startProc(t, cwd, agentDir, "--mode", "rpc", "--model", "faux/faux-1")
		state := p.state("1")
		assert.Empty(t, state["sessionFile"], "the session is in memory")
		p.ok("2", map[string]any{"type": "prompt", "message": "reply: still here"})
		p.idle()
		assert.Equal(t, "still here", p.ok("3", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)["text"])
		// A new session is in memory too.
		p.ok("4", map[string]any{"type": "new_session"})
		assert.Empty(t, p.state("5")["sessionFile"])
		require.Equal(t, 0, p.exit())
		oneWarning(t, p.stderr.String())
	})

	t.Run("acp", func(t *testing.T) {
		p := startACP(t, cwd, agentDir, "--model", "faux/faux-1")
		p.started(cwd)
		p.newSession(cwd) // a second session does not warn again
		require.Equal(t, 0, p.exit())
		oneWarning(t, p.stderr.String())
	})

	t.Run("print", func(t *testing.T) {
		cmd := exec.Command(gopiBinary(t), "--model", "faux/faux-1", "-p", "reply: printed")
		cmd.Dir = cwd
		cmd.Env = append(binaryEnv(), "PI_CODING_AGENT_DIR="+agentDir, "TMPDIR="+t.TempDir())
		var stderr syncBuffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, stderr.String())
		assert.Equal(t, "printed\n", string(out))
		oneWarning(t, stderr.String())
	})
}
