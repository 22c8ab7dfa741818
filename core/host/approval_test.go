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
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/tools"
)

// An approval answer's content replaces an edit's or write's proposal
// only when it differs from what the call would write; the result then
// says so, once.
func TestApprovalTakesTheUserVersion(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644))
	h := &Host{}
	edit := json.RawMessage(`{"path":"a.txt","edits":[{"oldText":"two","newText":"2"}]}`)
	p, ok := tools.PreviewChange(context.Background(), dir, tools.NameEdit, edit)
	require.True(t, ok)

	same := &agent.Call{ID: "e1", Name: tools.NameEdit, Args: edit}
	h.takeUserVersion(same, p, "one\n2\n")
	assert.Equal(t, string(edit), string(same.Args), "the proposal as it was: nothing changes")
	res := agent.TextResult("done")
	assert.Equal(t, res, h.tellSettled(*same, res))

	changed := &agent.Call{ID: "e2", Name: tools.NameEdit, Args: edit}
	h.takeUserVersion(changed, p, "one\nzwei\n")
	assert.JSONEq(t, `{"path":"a.txt","finalContent":"one\nzwei\n"}`, string(changed.Args))
	got := h.tellSettled(*changed, agent.TextResult("Successfully replaced the content of a.txt."))
	assert.Equal(t, "Successfully replaced the content of a.txt.\n\n["+settledNote+"]", got.Content.Text())
	got = h.tellSettled(*changed, res)
	assert.Equal(t, res, got, "told once")

	failed := &agent.Call{ID: "e3", Name: tools.NameEdit, Args: edit}
	h.takeUserVersion(failed, p, "x")
	got = h.tellSettled(*failed, agent.Result{Content: llm.Contents{}, IsError: true})
	assert.Equal(t, "["+settledFailedNote+"]", got.Content.Text())

	// Content for a tool without a file to change is ignored.
	bash := &agent.Call{ID: "b1", Name: tools.NameBash, Args: json.RawMessage(`{"command":"true"}`)}
	h.takeUserVersion(bash, tools.Preview{}, "echo other")
	assert.Equal(t, `{"command":"true"}`, string(bash.Args))
	assert.Empty(t, h.approval.settled)
}
