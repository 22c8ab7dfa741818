package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/host"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/faux"
	"github.com/gopi-dev/gopi/core/models"
	"github.com/gopi-dev/gopi/core/tools"
)

// resolveEnv is an agent dir and a project folder with the settings
// given ("" writes no file), and an app over the offline models whose
// warnings land in stderr.
type resolveEnv struct {
	ap     *app
	cwd    string
	stderr *bytes.Buffer
}

func newResolveEnv(t *testing.T, user, project string) resolveEnv {
	t.Helper()
	t.Setenv("PI_CODING_AGENT_SESSION_DIR", "")
	agentDir, cwd := t.TempDir(), t.TempDir()
	write := func(dir, body string) {
		t.Helper()
		if body == "" {
			return
		}
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"), []byte(body), 0o644))
	}
	write(agentDir, user)
	write(filepath.Join(cwd, ".pi"), project)
	reg, err := models.Load(models.Options{AgentDir: agentDir, Getenv: func(string) string { return "" }, Builtin: faux.Models()})
	require.NoError(t, err)
	stderr := &bytes.Buffer{}
	return resolveEnv{ap: &app{agentDir: agentDir, registry: reg, stderr: stderr}, cwd: cwd, stderr: stderr}
}

func (e resolveEnv) resolve(t *testing.T, trusted bool, argv ...string) resolved {
	t.Helper()
	a := parseArgs(argv)
	require.Empty(t, a.errors)
	r, err := e.ap.resolve(a, e.cwd, trusted)
	require.NoError(t, err)
	return r
}

func scopeIDs(s []models.ScopedModel) []string {
	var out []string
	for _, m := range s {
		out = append(out, m.Model.ID)
	}
	return out
}

// TestResolveFlagsBeatSettings: each flag wins over the setting it
// overrides; without the flags the settings count.
func TestResolveFlagsBeatSettings(t *testing.T) {
	e := newResolveEnv(t, `{"approval":"all","enabledModels":["faux/faux-1"],"defaultTools":["read"],"sessionDir":"from-settings"}`, "")

	r := e.resolve(t, true)
	assert.Equal(t, host.ApprovalAll, r.opts.Approval)
	assert.Equal(t, []string{"faux-1"}, scopeIDs(r.opts.Scope))
	assert.Equal(t, []string{"read"}, r.opts.ToolSelection.ActiveBuiltins())
	assert.Equal(t, filepath.Join(e.cwd, "from-settings"), r.sessionDir)
	assert.Nil(t, r.opts.Model, "no --model: the session and settings choose in the host")
	assert.Empty(t, r.opts.Thinking)

	t.Setenv("PI_CODING_AGENT_SESSION_DIR", "/from-env")
	assert.Equal(t, "/from-env", e.resolve(t, true).sessionDir)

	r = e.resolve(t, true, "--approval", "writes", "--models", "faux/faux-fast", "--tools", "ls",
		"--session-dir", "/from-flag", "--model", "faux/faux-1", "--thinking", "high")
	assert.Equal(t, host.ApprovalWrites, r.opts.Approval)
	assert.Equal(t, []string{"faux-fast"}, scopeIDs(r.opts.Scope))
	assert.Equal(t, []string{"ls"}, r.opts.ToolSelection.ActiveBuiltins())
	assert.Equal(t, "/from-flag", r.sessionDir)
	require.NotNil(t, r.opts.Model)
	assert.Equal(t, "faux-1", r.opts.Model.ID)
	assert.Equal(t, llm.ThinkingHigh, r.opts.Thinking)
	assert.Empty(t, e.stderr.String())
}

// TestResolveProjectSettings: a trusted project's settings merge over the
// user's, key by key and inside objects; an untrusted project's are not
// read at all. The shell settings reach the bash tool built from the
// resolved options.
func TestResolveProjectSettings(t *testing.T) {
	e := newResolveEnv(t,
		`{"approval":"writes","shellCommandPrefix":"export A=user","retry":{"maxRetries":1},"steeringMode":"all"}`,
		`{"approval":"all","shellCommandPrefix":"export A=project","retry":{"baseDelayMs":5}}`)

	r := e.resolve(t, true)
	assert.Equal(t, host.ApprovalAll, r.opts.Approval)
	assert.False(t, r.opts.UntrustedProject)
	assert.Equal(t, "all", r.opts.Settings.SteeringMode)
	retry := host.DefaultRetrySettings()
	retry.MaxRetries, retry.BaseDelayMs = 1, 5
	assert.Equal(t, retry, *r.opts.Settings.Retry)
	assert.Equal(t, "A=project\n", runBash(t, r, e.cwd, "echo A=$A"))

	r = e.resolve(t, false)
	assert.Equal(t, host.ApprovalWrites, r.opts.Approval)
	assert.True(t, r.opts.UntrustedProject)
	assert.Equal(t, int64(2000), r.opts.Settings.Retry.BaseDelayMs)
	assert.Equal(t, "A=user\n", runBash(t, r, e.cwd, "echo A=$A"))
}

// runBash runs command with a bash tool built as buildHost builds it.
func runBash(t *testing.T, r resolved, cwd, command string) string {
	t.Helper()
	bash, err := tools.New(tools.NameBash, cwd, r.shell...)
	require.NoError(t, err)
	args, _ := json.Marshal(map[string]string{"command": command})
	res, err := bash.Run(context.Background(), agent.Call{ID: "c1", Name: tools.NameBash, Args: args}, nil)
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	return res.Content[0].(llm.TextContent).Text
}

// TestResolveBadSettings: a settings file that does not parse is skipped
// and a key of the wrong type dropped, each with a warning, and the rest
// still counts; an approval mode gopi does not know, from the settings
// or the flag, stops gopi with the same words.
func TestResolveBadSettings(t *testing.T) {
	e := newResolveEnv(t, `{"approval": "all",`, `{"approval":"writes","enabledModels":"faux-1"}`)
	r := e.resolve(t, true)
	assert.Equal(t, host.ApprovalWrites, r.opts.Approval)
	assert.Empty(t, r.opts.Scope)
	warnings := e.stderr.String()
	assert.Contains(t, warnings, "gopi: warning: settings "+filepath.Join(e.ap.agentDir, "settings.json")+" ignored: ")
	assert.Contains(t, warnings, "gopi: warning: settings: json: cannot unmarshal")

	e = newResolveEnv(t, `{"approval":"sometimes"}`, "")
	_, err := e.ap.resolve(parseArgs(nil), e.cwd, true)
	assert.EqualError(t, err, `invalid approval mode "sometimes": use off, escapes, writes or all`)
	_, err = e.ap.resolve(parseArgs([]string{"--approval", "never"}), e.cwd, true)
	assert.EqualError(t, err, `invalid approval mode "never": use off, escapes, writes or all`)
	r = e.resolve(t, true, "--approval", "off")
	assert.Equal(t, host.ApprovalOff, r.opts.Approval, "the flag wins over a bad setting")
}
