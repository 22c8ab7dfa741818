package gate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/tools"
)

// markSandbox "confines" a command by telling it so in its environment;
// it refuses every write of the file tools.
type markSandbox struct{}

func (markSandbox) Enabled() bool { return true }
func (markSandbox) Start(cmd *exec.Cmd) error {
	cmd.Env = append(os.Environ(), "CONFINED=yes")
	return cmd.Start()
}
func (markSandbox) CheckWrite(string) error { return errors.New("no writes") }
func (markSandbox) Describe() string        { return "The command ran in the test's sandbox." }

// noSelect is a client that cannot show a select.
type noSelect struct{ askCounter }

func (*noSelect) CanAsk(api.UIMethod) bool { return false }

// The sandbox stage hands the bash tool the escape question: with the
// approval gate on, a command the sandbox stopped is put to the user,
// "Allow once" or "Deny", with the call's id and command; "Allow once"
// (or a dialect's own "Allow") runs it once more outside, anything else
// keeps the sandboxed result. With the gate off, no client, or a client
// that cannot show a select, nothing is asked. A command that the
// sandbox did not stop asks nothing.
func TestSandboxStageAsksToRunOutside(t *testing.T) {
	dir := t.TempDir()
	bash, err := tools.New(tools.NameBash, dir, tools.WithSandbox(markSandbox{}))
	require.NoError(t, err)
	command := `if [ "$CONFINED" = yes ]; then echo 'x: Permission denied' >&2; exit 1; fi; echo outside`
	run := func(mode Mode, c api.Client, command string) agent.Result {
		t.Helper()
		p := New(NewSandbox(SandboxConfig{Mode: func() Mode { return mode }, Timeout: 1234, Client: func() api.Client { return c }}))
		call := agent.Call{ID: "b1", Name: tools.NameBash, Args: mustArgs(t, map[string]string{"command": command})}
		blocked, _ := p.Admit(context.Background(), &call)
		require.False(t, blocked)
		require.NotNil(t, call.Bind, "the stage binds its question")
		res, err := bash.Run(call.Bind(context.Background()), call, nil)
		require.NoError(t, err)
		return p.Finish(context.Background(), call, res)
	}

	for _, answer := range []string{api.AnswerAllowOnce, api.AnswerAllow} {
		ask := &askCounter{answer: answer}
		res := run(ModeWrites, ask, command)
		assert.False(t, res.IsError, answer)
		assert.Contains(t, res.Content.Text(), "outside\n", answer)
		require.Len(t, ask.asked, 1, answer)
		req := ask.asked[0]
		assert.Equal(t, api.UISelect, req.Method)
		assert.Equal(t, "gopi's sandbox stopped bash: "+command+"\nRun it once outside the sandbox?", req.Title)
		assert.Equal(t, []string{api.AnswerAllowOnce, api.AnswerDeny}, req.Options)
		assert.Equal(t, int64(1234), req.Timeout)
		assert.Equal(t, "The command ran in the test's sandbox.", req.Message)
		d, ok := req.Details.(api.ApprovalDetails)
		require.True(t, ok)
		assert.Equal(t, tools.NameBash, d.ToolName)
		assert.Equal(t, "b1", d.ToolCallID)
		assert.True(t, d.SandboxEscape)
		assert.JSONEq(t, string(mustArgs(t, map[string]string{"command": command})), string(d.Args))
	}

	for _, answer := range []string{api.AnswerDeny, api.AnswerAllowAlways, "Allow once please"} {
		ask := &askCounter{answer: answer}
		res := run(ModeAll, ask, command)
		assert.True(t, res.IsError, answer)
		assert.Contains(t, res.Content.Text(), "Permission denied", answer)
		assert.Len(t, ask.asked, 1, answer)
	}

	ask := &askCounter{answer: api.AnswerAllowOnce}
	assert.True(t, run(ModeOff, ask, command).IsError, "the gate off: the sandboxed result stands")
	assert.True(t, run(ModeWrites, nil, command).IsError, "nobody to ask")
	ns := &noSelect{askCounter{answer: api.AnswerAllowOnce}}
	assert.True(t, run(ModeWrites, ns, command).IsError, "a client without selects")
	assert.Equal(t, "ok\n", run(ModeWrites, ask, "echo ok").Content.Text())
	assert.True(t, run(ModeWrites, ask, "exit 2").IsError)
	assert.Empty(t, ask.asked, "nothing asked")
	assert.Empty(t, ns.asked)

	// A question the client cancels denies.
	cancel := &cancelClient{}
	assert.True(t, run(ModeAll, cancel, command).IsError)
	assert.Equal(t, 1, cancel.asked)
}

// cancelClient cancels every question.
type cancelClient struct{ asked int }

func (c *cancelClient) Emit(api.Event)       {}
func (c *cancelClient) Notify(api.UIRequest) {}
func (c *cancelClient) Ask(_ context.Context, req api.UIRequest) api.UIResponse {
	c.asked++
	return api.Cancelled(req.ID)
}

func mustArgs(t *testing.T, v any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return raw
}

// TestEscapesAsksOnlyToStepOut: under ModeEscapes the approval stage
// asks about no tool, and the sandbox stage still puts a command the
// sandbox stopped to the user.
func TestEscapesAsksOnlyToStepOut(t *testing.T) {
	m, err := ParseMode(" Escapes ")
	require.NoError(t, err)
	require.Equal(t, ModeEscapes, m)

	dir := t.TempDir()
	bash, err := tools.New(tools.NameBash, dir, tools.WithSandbox(markSandbox{}))
	require.NoError(t, err)
	ask := &askCounter{answer: api.AnswerAllowOnce}
	approval := NewApproval(ApprovalConfig{Mode: ModeEscapes, Cwd: dir, Client: func() api.Client { return ask }})
	for _, name := range []string{tools.NameBash, tools.NameWrite, tools.NameEdit, tools.NameRead, "mcp__x__y"} {
		assert.False(t, approval.Needs(name), name)
	}
	p := New(approval, NewSandbox(SandboxConfig{Mode: approval.Mode, Client: func() api.Client { return ask }}))
	command := `if [ "$CONFINED" = yes ]; then echo 'x: Permission denied' >&2; exit 1; fi; echo outside`
	call := agent.Call{ID: "b1", Name: tools.NameBash, Args: mustArgs(t, map[string]string{"command": command})}
	blocked, _ := p.Admit(context.Background(), &call)
	require.False(t, blocked, "nothing asked before the call")
	assert.Empty(t, ask.asked)
	res, err := bash.Run(call.Bind(context.Background()), call, nil)
	require.NoError(t, err)
	res = p.Finish(context.Background(), call, res)
	assert.False(t, res.IsError)
	assert.Contains(t, res.Content.Text(), "outside\n")
	require.Len(t, ask.asked, 1, "the escape question alone")
	assert.True(t, ask.asked[0].Details.(api.ApprovalDetails).SandboxEscape)
}
