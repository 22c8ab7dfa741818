package gate

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

// askCounter answers every approval question with its answer and counts
// the questions.
type askCounter struct {
	answer  string
	content *string
	asked   []api.UIRequest
	// during runs while the question waits, before the answer.
	during func()
}

func (c *askCounter) Emit(api.Event)       {}
func (c *askCounter) Notify(api.UIRequest) {}
func (c *askCounter) Ask(_ context.Context, req api.UIRequest) api.UIResponse {
	c.asked = append(c.asked, req)
	if c.during != nil {
		c.during()
	}
	return api.UIResponse{Value: &c.answer, Content: c.content}
}

func approvalFor(mode Mode, cwd string, c api.Client) *Approval {
	return NewApproval(ApprovalConfig{Mode: mode, Cwd: cwd, Client: func() api.Client { return c }})
}

// An approval answer's content replaces an edit's or write's proposal
// only when it differs from what the call would write; the result then
// says so.
func TestApprovalTakesTheUserVersion(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644))
	edit := json.RawMessage(`{"path":"a.txt","edits":[{"oldText":"two","newText":"2"}]}`)
	ask := &askCounter{answer: AnswerAllow}
	p := New(approvalFor(ModeAll, dir, ask))
	ctx := context.Background()
	run := func(id, content string, res agent.Result) (agent.Call, agent.Result) {
		ask.content = &content
		call := agent.Call{ID: id, Name: tools.NameEdit, Args: edit}
		blocked, _ := p.Admit(ctx, &call)
		require.False(t, blocked)
		return call, p.Finish(ctx, call, res)
	}

	same, res := run("e1", "one\n2\n", agent.TextResult("done"))
	assert.Equal(t, string(edit), string(same.Args), "the proposal as it was: nothing changes")
	assert.Equal(t, "done", res.Content.Text())

	changed, res := run("e2", "one\nzwei\n", agent.TextResult("Successfully replaced the content of a.txt."))
	assert.JSONEq(t, `{"path":"a.txt","finalContent":"one\nzwei\n"}`, string(changed.Args))
	assert.Equal(t, "Successfully replaced the content of a.txt.\n\n["+settledNote+"]", res.Content.Text())

	_, res = run("e3", "x", agent.Result{Content: llm.Contents{}, IsError: true})
	assert.Equal(t, "["+settledFailedNote+"]", res.Content.Text())

	// Content for a tool without a file to change is ignored.
	bash := agent.Call{ID: "b1", Name: tools.NameBash, Args: json.RawMessage(`{"command":"true"}`)}
	other := "echo other"
	ask.content = &other
	blocked, _ := p.Admit(ctx, &bash)
	require.False(t, blocked)
	assert.Equal(t, `{"command":"true"}`, string(bash.Args))
	assert.Equal(t, "ok", p.Finish(ctx, bash, agent.TextResult("ok")).Content.Text(), "nothing to tell")
}

// "Deny always" denies the tool at once for the rest of the session,
// while other tools are still asked; SetMode changes what is asked from
// then on.
func TestApprovalDenyAlwaysAndSetMode(t *testing.T) {
	c := &askCounter{answer: AnswerDenyAlways}
	a := approvalFor(ModeAll, t.TempDir(), c)
	ctx := context.Background()
	bash := func() *Call {
		return &Call{Call: agent.Call{ID: "b", Name: tools.NameBash, Args: json.RawMessage(`{"command":"rm -rf /tmp/x"}`)}}
	}
	block, reason := a.Before(ctx, bash())
	assert.True(t, block)
	assert.Equal(t, DeniedReason, reason)
	require.Len(t, c.asked, 1)
	assert.Equal(t, []string{AnswerAllow, AnswerAllowAlways, AnswerDeny}, c.asked[0].Options, "the offer is unchanged for pi's clients")
	d, ok := c.asked[0].Details.(api.ApprovalDetails)
	require.True(t, ok, "an approval question's details are api.ApprovalDetails")
	assert.Equal(t, "b", d.ToolCallID)

	block, reason = a.Before(ctx, bash())
	assert.True(t, block)
	assert.Equal(t, DeniedReason, reason)
	assert.Len(t, c.asked, 1, "denied always: not asked again")

	c.answer = AnswerAllow
	read := &Call{Call: agent.Call{ID: "r", Name: tools.NameRead, Args: json.RawMessage(`{"path":"a.txt"}`)}}
	block, _ = a.Before(ctx, read)
	assert.False(t, block)
	assert.Len(t, c.asked, 2, "another tool is still asked")

	assert.Equal(t, ModeAll, a.Mode())
	a.SetMode(ModeOff)
	assert.Equal(t, ModeOff, a.Mode())
	block, _ = a.Before(ctx, read)
	assert.False(t, block)
	assert.Len(t, c.asked, 2, "approval off: nothing is asked")
}

// An edit's question carries the file's text before and after the change.
func TestApprovalDetailsCarryTheChange(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644))
	c := &askCounter{answer: AnswerDeny}
	a := approvalFor(ModeAll, dir, c)
	edit := &Call{Call: agent.Call{ID: "e", Name: tools.NameEdit, Args: json.RawMessage(`{"path":"a.txt","edits":[{"oldText":"two","newText":"2"}]}`)}}
	a.Before(context.Background(), edit)
	write := &Call{Call: agent.Call{ID: "w", Name: tools.NameWrite, Args: json.RawMessage(`{"path":"new.txt","content":"hi\n"}`)}}
	a.Before(context.Background(), write)
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

// Issue 37, item 5: the file an approved edit or write changes is the one
// the question showed. A target swapped for a link to a file outside the
// project while the question waits (or a new file's place taken by one)
// is refused when the tool runs, and nothing is written anywhere.
func TestApprovedWriteHoldsToTheFileShown(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, tool, args string
		existed          bool
	}{
		{"edit", tools.NameEdit, `{"path":"conf.txt","edits":[{"oldText":"a","newText":"b"}]}`, true},
		{"write over", tools.NameWrite, `{"path":"conf.txt","content":"b\n"}`, true},
		{"write new", tools.NameWrite, `{"path":"conf.txt","content":"b\n"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, outside := t.TempDir(), filepath.Join(t.TempDir(), "secret.txt")
			require.NoError(t, os.WriteFile(outside, []byte("a\n"), 0o600))
			conf := filepath.Join(dir, "conf.txt")
			if tc.existed {
				require.NoError(t, os.WriteFile(conf, []byte("a\n"), 0o644))
			}
			c := &askCounter{answer: AnswerAllow, during: func() {
				_ = os.Remove(conf)
				require.NoError(t, os.Symlink(outside, conf))
			}}
			p := New(approvalFor(ModeWrites, dir, c))
			call := agent.Call{ID: "1", Name: tc.tool, Args: json.RawMessage(tc.args)}
			blocked, _ := p.Admit(ctx, &call)
			require.False(t, blocked, "approved")
			require.NotNil(t, call.Bind, "the approved file goes with the call")
			tool, err := tools.ByName(dir, []string{tc.tool})
			require.NoError(t, err)
			res, err := tool[0].Run(call.Bind(ctx), call, func(agent.Result) {})
			require.NoError(t, err)
			assert.True(t, res.IsError, "refused: %s", res.Content.Text())
			assert.Contains(t, res.Content.Text(), "changed while the approval question waited")
			assert.Contains(t, res.Content.Text(), "nothing was read or written")
			got, err := os.ReadFile(outside)
			require.NoError(t, err)
			assert.Equal(t, "a\n", string(got), "the file outside is untouched")
		})
	}
}

// An approved write whose file is left alone writes.
func TestApprovedWriteToTheSameFileWrites(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "conf.txt"), []byte("a\n"), 0o644))
	p := New(approvalFor(ModeWrites, dir, &askCounter{answer: AnswerAllow}))
	call := agent.Call{ID: "1", Name: tools.NameEdit, Args: json.RawMessage(`{"path":"conf.txt","edits":[{"oldText":"a","newText":"b"}]}`)}
	blocked, _ := p.Admit(context.Background(), &call)
	require.False(t, blocked)
	tool, err := tools.ByName(dir, []string{tools.NameEdit})
	require.NoError(t, err)
	res, err := tool[0].Run(call.Bind(context.Background()), call, func(agent.Result) {})
	require.NoError(t, err)
	assert.False(t, res.IsError, res.Content.Text())
	got, _ := os.ReadFile(filepath.Join(dir, "conf.txt"))
	assert.Equal(t, "b\n", string(got))
}
