package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/tools"
)

// writeWrapperShell writes a shell that says it ran and then runs its
// arguments with bash.
func writeWrapperShell(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "wrapsh")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\necho wrapped-shell\nexec bash \"$@\"\n"), 0o755))
	return path
}

// TestLoadSettingsShell: shellPath and shellCommandPrefix are read from
// the global settings and a trusted project's, and a leading "~" in
// shellPath is the home directory (pi's getShellPath).
func TestLoadSettingsShell(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	agentDir, cwd := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(agentDir, "settings.json"),
		[]byte(`{"shellPath":"~/bin/wrapsh","shellCommandPrefix":"export A=global"}`), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(cwd, ".pi"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cwd, ".pi", "settings.json"),
		[]byte(`{"shellCommandPrefix":"export A=project"}`), 0o644))

	s, problems := LoadSettings(agentDir, cwd)
	require.Empty(t, problems)
	assert.Equal(t, filepath.Join(home, "bin", "wrapsh"), s.ShellPath)
	assert.Equal(t, "export A=project", s.ShellCommandPrefix)

	s, _ = LoadSettings(agentDir, "") // an untrusted project's are not read
	assert.Equal(t, "export A=global", s.ShellCommandPrefix)
}

// TestShellToolOptions: the bash tool built with the settings' options
// runs the command with shellPath's shell, shellCommandPrefix on the line
// before it; the command the model sent is what it ran otherwise.
func TestShellToolOptions(t *testing.T) {
	cwd := t.TempDir()
	s := Settings{ShellPath: writeWrapperShell(t, t.TempDir()), ShellCommandPrefix: "export GOPI_PREFIX_SEEN=yes"}
	bash, err := tools.New(tools.NameBash, cwd, s.ShellToolOptions()...)
	require.NoError(t, err)
	args, _ := json.Marshal(map[string]any{"command": "echo prefix=$GOPI_PREFIX_SEEN"})
	res, err := bash.Run(context.Background(), agent.Call{ID: "b1", Name: tools.NameBash, Args: args}, nil)
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Len(t, res.Content, 1)
	assert.Equal(t, "wrapped-shell\nprefix=yes\n", res.Content[0].(llm.TextContent).Text)

	// Without settings the tool runs the default shell and no prefix.
	bash, err = tools.New(tools.NameBash, cwd, Settings{}.ShellToolOptions()...)
	require.NoError(t, err)
	res, err = bash.Run(context.Background(), agent.Call{ID: "b2", Name: tools.NameBash, Args: args}, nil)
	require.NoError(t, err)
	assert.Equal(t, "prefix=\n", res.Content[0].(llm.TextContent).Text)
}

// TestLoadSettingsRetryAndCompaction: "retry" and "compaction" decode
// once, when the settings load, over pi's defaults: a trusted project's
// keys merge over the global ones, keys left out keep the default, an
// object of the wrong shape is the defaults whole without a warning (as
// when the host decoded them itself), and the other keys still load.
func TestLoadSettingsRetryAndCompaction(t *testing.T) {
	write := func(dir, body string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"), []byte(body), 0o644))
	}
	agentDir, cwd := t.TempDir(), t.TempDir()
	write(agentDir, `{"retry":{"maxRetries":7,"baseDelayMs":5},"compaction":{"enabled":false}}`)
	write(filepath.Join(cwd, ".pi"), `{"retry":{"baseDelayMs":9},"compaction":{"reserveTokens":100}}`)

	s, problems := LoadSettings(agentDir, cwd)
	require.Empty(t, problems)
	wantRetry := DefaultRetrySettings()
	wantRetry.MaxRetries, wantRetry.BaseDelayMs = 7, 9
	assert.Equal(t, wantRetry, *s.Retry)
	wantCompaction := compaction.DefaultSettings()
	wantCompaction.Enabled, wantCompaction.ReserveTokens = false, 100
	assert.Equal(t, wantCompaction, *s.Compaction)

	s, _ = LoadSettings(agentDir, "") // an untrusted project's are not read
	assert.Equal(t, 5, int(s.Retry.BaseDelayMs))
	assert.Equal(t, compaction.DefaultSettings().ReserveTokens, s.Compaction.ReserveTokens)

	write(agentDir, `{"retry":{"maxRetries":"seven"},"compaction":5,"steeringMode":"all"}`)
	s, problems = LoadSettings(agentDir, "")
	assert.Empty(t, problems)
	assert.Equal(t, DefaultRetrySettings(), *s.Retry)
	assert.Equal(t, compaction.DefaultSettings(), *s.Compaction)
	assert.Equal(t, "all", s.SteeringMode)

	s, _ = LoadSettings(t.TempDir(), "") // no settings at all
	assert.Equal(t, DefaultRetrySettings(), *s.Retry)
	assert.Equal(t, compaction.DefaultSettings(), *s.Compaction)
	// Settings built by hand without them run with the defaults too.
	assert.Equal(t, DefaultRetrySettings(), Settings{}.retrySettings())
	assert.Equal(t, compaction.DefaultSettings(), Settings{}.compactionSettings())
}
