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
	"github.com/gopi-dev/gopi/core/api"
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

// askCounter answers every approval question with its answer and counts
// the questions.
type askCounter struct {
	answer string
	asked  []api.UIRequest
}

func (c *askCounter) Emit(api.Event)       {}
func (c *askCounter) Notify(api.UIRequest) {}
func (c *askCounter) Ask(_ context.Context, req api.UIRequest) api.UIResponse {
	c.asked = append(c.asked, req)
	return api.UIResponse{Value: &c.answer}
}

// "Deny always" denies the tool at once for the rest of the session,
// while other tools are still asked; SetApproval changes what is asked
// from then on.
func TestApprovalDenyAlwaysAndSetApproval(t *testing.T) {
	h := &Host{opts: Options{Approval: ApprovalAll}}
	c := &askCounter{answer: AnswerDenyAlways}
	h.Bind(c)
	ctx := context.Background()
	bash := func() *agent.Call {
		return &agent.Call{ID: "b", Name: tools.NameBash, Args: json.RawMessage(`{"command":"rm -rf /tmp/x"}`)}
	}
	block, reason := h.approve(ctx, bash())
	assert.True(t, block)
	assert.Equal(t, deniedReason, reason)
	require.Len(t, c.asked, 1)
	assert.Equal(t, []string{AnswerAllow, AnswerAllowAlways, AnswerDeny}, c.asked[0].Options, "the offer is unchanged for pi's clients")
	d, ok := c.asked[0].Details.(api.ApprovalDetails)
	require.True(t, ok, "an approval question's details are api.ApprovalDetails")
	assert.Equal(t, "b", d.ToolCallID)

	block, reason = h.approve(ctx, bash())
	assert.True(t, block)
	assert.Equal(t, deniedReason, reason)
	assert.Len(t, c.asked, 1, "denied always: not asked again")

	c.answer = AnswerAllow
	read := &agent.Call{ID: "r", Name: tools.NameRead, Args: json.RawMessage(`{"path":"a.txt"}`)}
	block, _ = h.approve(ctx, read)
	assert.False(t, block)
	assert.Len(t, c.asked, 2, "another tool is still asked")

	assert.Equal(t, ApprovalAll, h.Approval())
	h.SetApproval(ApprovalOff)
	assert.Equal(t, ApprovalOff, h.Approval())
	block, _ = h.approve(ctx, read)
	assert.False(t, block)
	assert.Len(t, c.asked, 2, "approval off: nothing is asked")
}

// An edit's question carries the file's text before and after the change.
func TestApprovalDetailsCarryTheChange(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644))
	h := &Host{opts: Options{Approval: ApprovalAll, Cwd: dir}}
	c := &askCounter{answer: AnswerDeny}
	h.Bind(c)
	edit := &agent.Call{ID: "e", Name: tools.NameEdit, Args: json.RawMessage(`{"path":"a.txt","edits":[{"oldText":"two","newText":"2"}]}`)}
	h.approve(context.Background(), edit)
	write := &agent.Call{ID: "w", Name: tools.NameWrite, Args: json.RawMessage(`{"path":"new.txt","content":"hi\n"}`)}
	h.approve(context.Background(), write)
	require.Len(t, c.asked, 2)
	d := c.asked[0].Details.(api.ApprovalDetails)
	require.NotNil(t, d.Change)
	assert.Equal(t, filepath.Join(dir, "a.txt"), d.Change.Path)
	require.NotNil(t, d.Change.Before)
	assert.Equal(t, "one\ntwo\n", *d.Change.Before)
	assert.Equal(t, "one\n2\n", d.Change.After)
	d = c.asked[1].Details.(api.ApprovalDetails)
	require.NotNil(t, d.Change)
	assert.Nil(t, d.Change.Before, "a new file has no text before")
	assert.Equal(t, "hi\n", d.Change.After)
}
