package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// Issue 37, item 5: conf.txt is a regular file when the approval question
// is asked; before the user answers, it is swapped for a link to a file
// outside the project. After Allow the outside file used to be edited.
// What the user approved is the file they were shown: the edit is refused,
// the model reads why, and nothing outside changes. The same for a new
// file whose place a link takes while the question waits.
func TestRPCApprovedEditHoldsToTheFileShown(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("e1", "edit", `{"path":"conf.txt","edits":[{"oldText":"safe","newText":"owned"}]}`)),
		llmtest.Text("refused"),
		llmtest.ToolCalls(llmtest.Call("w1", "write", `{"path":"new.txt","content":"owned\n"}`)),
		llmtest.Text("refused too"),
	)
	conf := filepath.Join(w.cwd, "conf.txt")
	require.NoError(t, os.WriteFile(conf, []byte("safe\n"), 0o644))
	outside := filepath.Join(t.TempDir(), "bashrc")
	require.NoError(t, os.WriteFile(outside, []byte("safe\n"), 0o600))
	p := w.start("--approval", "writes")

	swapAndAllow := func(id, message, path, callID string) {
		t.Helper()
		p.ok(id, map[string]any{"type": "prompt", "message": message})
		rs := p.until(func(r record) bool { return r.is("extension_ui_request") })
		req := rs[len(rs)-1]
		_ = os.Remove(path)
		require.NoError(t, os.Symlink(outside, path))
		p.answer(req.str("id"), "Allow")
		end := toolEnd(p.idle(), callID)
		require.NotNil(t, end, p.transcript())
		assert.Equal(t, true, end["isError"])
		assert.Contains(t, resultText(end), "changed while the approval question waited")
		data, err := os.ReadFile(outside)
		require.NoError(t, err)
		assert.Equal(t, "safe\n", string(data), "the file outside the project is untouched")
	}
	swapAndAllow("1", "edit conf", conf, "e1")
	swapAndAllow("2", "write new", filepath.Join(w.cwd, "new.txt"), "w1")
	assert.Equal(t, 0, p.exit())
}

// The same in the JSON-RPC dialect, where the question is a
// window/showMessageRequest.
func TestJSONRPCApprovedEditHoldsToTheFileShown(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("e1", "edit", `{"path":"conf.txt","edits":[{"oldText":"safe","newText":"owned"}]}`)),
		llmtest.Text("refused"),
	)
	conf := filepath.Join(w.cwd, "conf.txt")
	require.NoError(t, os.WriteFile(conf, []byte("safe\n"), 0o644))
	outside := filepath.Join(t.TempDir(), "bashrc")
	require.NoError(t, os.WriteFile(outside, []byte("safe\n"), 0o600))
	// The dialect's default sandbox would refuse the write outside the
	// project before the pin is looked at; this test is the pin's.
	p := w.startApprovalJSONRPC(map[string]any{"window": map[string]any{"showMessage": map[string]any{}}}, "--sandbox", "off")
	p.request("pi/prompt", map[string]any{"message": "edit conf"})
	rs := p.until(func(r record) bool { return r["method"] == "window/showMessageRequest" })
	ask := rs[len(rs)-1]
	require.NoError(t, os.Remove(conf))
	require.NoError(t, os.Symlink(outside, conf))
	p.write(map[string]any{"id": ask["id"], "result": map[string]any{"title": "Allow"}})
	rs = append(rs, p.until(func(r record) bool { return event(r, "agent_end") })...)
	end := jsonrpcToolEnd(rs, "e1")
	require.NotNil(t, end)
	assert.Contains(t, resultText(end), "changed while the approval question waited")
	data, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "safe\n", string(data))
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}
