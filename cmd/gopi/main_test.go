package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// env gives each test its own agent dir and cwd, with no provider keys, so
// gopi falls back to the offline faux model.
func env(t *testing.T) (cwd, agentDir string) {
	t.Helper()
	agentDir = t.TempDir()
	cwd = t.TempDir()
	t.Setenv("PI_CODING_AGENT_DIR", agentDir)
	for _, k := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"} {
		t.Setenv(k, "")
	}
	t.Chdir(cwd)
	return cwd, agentDir
}

func TestPrintModeRunsAToolOnFaux(t *testing.T) {
	cwd, agentDir := env(t)
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "greeting.txt"), []byte("hello file\n"), 0o644))
	var out, errb bytes.Buffer
	code := run([]string{"-p", "read: greeting.txt"}, strings.NewReader(""), &out, &errb)
	require.Equal(t, 0, code, errb.String())
	assert.Equal(t, "Tool said: hello file\n", out.String())

	// The session was written where pi keeps it, with pi's entry types.
	files, _ := filepath.Glob(filepath.Join(agentDir, "sessions", "*", "*.jsonl"))
	require.Len(t, files, 1)
	b, _ := os.ReadFile(files[0])
	var types []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct{ Type string }
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		types = append(types, e.Type)
	}
	// The first message is the system message (the prompt and tools).
	assert.Equal(t, []string{"session", "model_change", "thinking_level_change", "message", "message", "message", "message", "message"}, types)

	// --continue picks the conversation up again.
	out.Reset()
	code = run([]string{"-c", "-p", "reply: again"}, strings.NewReader(""), &out, &errb)
	require.Equal(t, 0, code, errb.String())
	assert.Equal(t, "again\n", out.String())
	b2, _ := os.ReadFile(files[0])
	assert.Greater(t, len(b2), len(b))
	// Continuing on the same model records no second model or level change.
	assert.Equal(t, 1, strings.Count(string(b2), `"type":"model_change"`))
	assert.Equal(t, 1, strings.Count(string(b2), `"type":"thinking_level_change"`))
}

func TestJSONModeStreamsEvents(t *testing.T) {
	env(t)
	var out, errb bytes.Buffer
	code := run([]string{"--mode", "json", "--no-session", "stream: 5"}, strings.NewReader(""), &out, &errb)
	require.Equal(t, 0, code, errb.String())
	var types []string
	deltas := 0
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var ev struct {
			Type string
			Ame  *struct{ Type string } `json:"assistantMessageEvent"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), sc.Text())
		types = append(types, ev.Type)
		if ev.Ame != nil && ev.Ame.Type == "text_delta" {
			deltas++
		}
	}
	require.NotEmpty(t, types)
	assert.Equal(t, "agent_start", types[0])
	// pi 1.5: agent_end closes the run, agent_settled the whole prompt.
	assert.Equal(t, []string{"agent_end", "agent_settled"}, types[len(types)-2:])
	assert.GreaterOrEqual(t, deltas, 5)
}

func TestBadInputsGetClearErrors(t *testing.T) {
	_, agentDir := env(t)
	// The 500 is retried, as pi retries it, without pi's seconds of backoff.
	require.NoError(t, os.WriteFile(filepath.Join(agentDir, "settings.json"), []byte(`{"retry":{"baseDelayMs":5}}`), 0o644))
	var out, errb bytes.Buffer
	assert.Equal(t, 2, run([]string{"--mode", "bogus"}, strings.NewReader(""), &out, &errb))
	assert.Contains(t, errb.String(), `unknown mode "bogus"`)

	errb.Reset()
	assert.Equal(t, 1, run([]string{"--model", "no-such-model-xyz", "-p", "hi"}, strings.NewReader(""), &out, &errb))
	assert.NotEmpty(t, errb.String())

	errb.Reset()
	assert.Equal(t, 1, run([]string{"--no-session", "-p", "error: 500"}, strings.NewReader(""), &out, &errb))
	assert.Contains(t, errb.String(), "500")

	errb.Reset()
	assert.Equal(t, 1, run([]string{"--approval", "sometimes"}, strings.NewReader(""), &out, &errb))
	assert.Contains(t, errb.String(), "invalid approval mode")

	// A client that leaves without a word ends RPC mode cleanly.
	out.Reset()
	assert.Equal(t, 0, run([]string{"--mode", "rpc"}, strings.NewReader(""), &out, &errb))
	assert.Empty(t, out.String())
}

func TestListModels(t *testing.T) {
	env(t)
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"--list-models", "faux"}, strings.NewReader(""), &out, &errb))
	assert.Contains(t, out.String(), "faux-1")
	assert.NotContains(t, out.String(), "claude")
}
