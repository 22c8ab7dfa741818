package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// TestSandboxKeepsSessionsCheckpointsAndMCP: with the sandbox on, what
// gopi does for itself still works: the session file is written in the
// agent dir (outside the project), the edit journal records the
// prompt's changes and restores them, and an MCP server the user
// configured runs and answers (it is the user's, outside the sandbox).
// After a restart the session continues from its file.
func TestSandboxKeepsSessionsCheckpointsAndMCP(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	bin := mcpServerBinary(t)
	w := newSandboxWorld(t,
		llmtest.ToolCalls(
			llmtest.Call("w", "write", `{"path":"new.txt","content":"fresh\n"}`),
			llmtest.Call("e", "edit", `{"path":"a.txt","edits":[{"oldText":"one","newText":"uno"}]}`),
			sandboxBash(t, "b", "echo made > made.txt && cat a.txt"),
			sandboxBash(t, "out", "echo x > ../outside/x.txt"),
			llmtest.Call("m", "mcp__test__echo", `{"text":"through the sandbox"}`),
		),
		llmtest.Text("done"),
	)
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "a.txt"), []byte("one\n"), 0o644))
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"sandbox": map[string]any{"mode": "workspace-write"}})
	w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"test": map[string]any{"command": bin, "exposure": "direct"},
	}})
	p := w.start()
	st := p.ok("s", map[string]any{"type": "get_state"}).(map[string]any)
	require.NotNil(t, st["sandbox"], "the sandbox is on")
	assert.Equal(t, "workspace-write", st["sandbox"].(map[string]any)["mode"])

	p.ok("1", map[string]any{"type": "prompt", "message": "change things"})
	rs := p.idle()
	for _, id := range []string{"w", "e", "b", "m"} {
		end := toolEnd(rs, id)
		require.NotNil(t, end, id)
		assert.Equal(t, false, end["isError"], "%s: %s", id, resultText(end))
	}
	assert.Equal(t, "uno\n", resultText(toolEnd(rs, "b")), "bash sees the edit")
	assert.Equal(t, "echo: through the sandbox", resultText(toolEnd(rs, "m")))
	assert.Equal(t, true, toolEnd(rs, "out")["isError"], "the sandbox is in force for bash")
	assert.NoFileExists(t, filepath.Join(w.outside, "x.txt"))

	// The session file, outside the project, holds the whole run.
	sessionFile, _ := p.ok("s2", map[string]any{"type": "get_state"}).(map[string]any)["sessionFile"].(string)
	require.NotEmpty(t, sessionFile)
	assert.False(t, strings.HasPrefix(sessionFile, w.cwd+string(filepath.Separator)), "the session file is not in the project")
	data, err := os.ReadFile(sessionFile)
	require.NoError(t, err)
	assert.Contains(t, string(data), "echo: through the sandbox")
	assert.Contains(t, string(data), `"done"`)

	// The journal recorded the prompt's write and edit; a restore puts
	// the files back.
	cps := decodeAs[struct{ Checkpoints []checkpointJSON }](t, p.ok("2", map[string]any{"type": "list_checkpoints"})).Checkpoints
	require.Len(t, cps, 1, p.transcript())
	p.ok("3", map[string]any{"type": "restore_checkpoint", "checkpointId": cps[0].ID, "restore": "code"})
	data, err = os.ReadFile(filepath.Join(w.cwd, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "one\n", string(data))
	assert.NoFileExists(t, filepath.Join(w.cwd, "new.txt"))
	assert.Equal(t, 0, p.exit())

	// A new gopi continues the session from its file, sandbox on.
	p = w.start("--continue")
	var texts []string
	for _, m := range decodeAs[struct{ Messages []map[string]any }](t, p.ok("4", map[string]any{"type": "get_messages"})).Messages {
		if m["role"] == "assistant" {
			for _, c := range m["content"].([]any) {
				if s, ok := c.(map[string]any)["text"].(string); ok {
					texts = append(texts, s)
				}
			}
		}
	}
	assert.Contains(t, texts, "done", "the conversation is back")
	assert.Equal(t, 0, p.exit())
}
