package gate

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/tools"
)

// recorder is a stage that writes down when it sees a call.
type recorder struct {
	name  string
	log   *[]string
	block bool
}

func (r recorder) Before(_ context.Context, c *Call) (bool, string) {
	*r.log = append(*r.log, "before "+r.name)
	return r.block, r.name + " said no"
}

func (r recorder) After(_ context.Context, c *Call, res agent.Result) agent.Result {
	*r.log = append(*r.log, "after "+r.name)
	return res
}

// The stages see a call in order before it runs and in reverse order
// after; a stage that blocks ends it there.
func TestPipelineOrder(t *testing.T) {
	var log []string
	p := New(recorder{name: "a", log: &log}, recorder{name: "b", log: &log}, recorder{name: "c", log: &log})
	call := agent.Call{ID: "1", Name: "x"}
	blocked, _ := p.Admit(context.Background(), &call)
	require.False(t, blocked)
	p.Finish(context.Background(), call, agent.TextResult("ok"))
	assert.Equal(t, []string{"before a", "before b", "before c", "after c", "after b", "after a"}, log)

	log = nil
	p = New(recorder{name: "a", log: &log}, recorder{name: "b", log: &log, block: true}, recorder{name: "c", log: &log})
	blocked, reason := p.Admit(context.Background(), &call)
	assert.True(t, blocked)
	assert.Equal(t, "b said no", reason)
	assert.Equal(t, "ok", p.Finish(context.Background(), call, agent.TextResult("ok")).Content.Text(), "a blocked call is not finished")
	assert.Equal(t, []string{"before a", "before b"}, log)
}

// fakeHooks are extension handlers.
type fakeHooks struct {
	args   json.RawMessage
	block  string
	err    error
	result string
}

func (f fakeHooks) ToolCall(_ context.Context, call agent.Call) (json.RawMessage, bool, string, error) {
	if f.err != nil {
		return call.Args, true, "", f.err
	}
	if f.args != nil {
		return f.args, false, "", nil
	}
	return call.Args, f.block != "", f.block, nil
}

func (f fakeHooks) ToolResult(_ context.Context, _ agent.Call, res agent.Result) (agent.Result, error) {
	if f.result != "" {
		return agent.TextResult(f.result), nil
	}
	return res, nil
}

// The extensions' tool_call handlers run before the approval question:
// what they change is what is asked about, and what they block is never
// asked. Their tool_result handlers see the result after the approval's
// note.
func TestHooksComeBeforeApproval(t *testing.T) {
	ctx := context.Background()
	ask := &askCounter{answer: AnswerAllow}
	failures := []string{}
	failed := func(ev string, err error) { failures = append(failures, ev+": "+err.Error()) }
	approval := approvalFor(ModeAll, t.TempDir(), ask)

	p := New(HookStage(fakeHooks{args: json.RawMessage(`{"command":"ls -l"}`), result: "patched"}, failed), approval)
	call := agent.Call{ID: "1", Name: tools.NameBash, Args: json.RawMessage(`{"command":"rm -rf /"}`)}
	blocked, _ := p.Admit(ctx, &call)
	require.False(t, blocked)
	require.Len(t, ask.asked, 1)
	assert.Equal(t, "Allow bash: ls -l?", ask.asked[0].Title, "the question shows the handlers' arguments")
	assert.JSONEq(t, `{"command":"ls -l"}`, string(call.Args))
	assert.Equal(t, "patched", p.Finish(ctx, call, agent.TextResult("raw")).Content.Text())

	p = New(HookStage(fakeHooks{block: "not today"}, failed), approval)
	blocked, reason := p.Admit(ctx, &call)
	assert.True(t, blocked)
	assert.Equal(t, "not today", reason)
	assert.Len(t, ask.asked, 1, "a blocked call is not asked about")

	p = New(HookStage(fakeHooks{err: errors.New("host down")}, failed), approval)
	blocked, reason = p.Admit(ctx, &call)
	assert.True(t, blocked, "a failing hook blocks (pi's fail-safe)")
	assert.Equal(t, "Extension failed, blocking execution: host down", reason)
	assert.Equal(t, []string{"tool_call: host down"}, failures)
}

// journalFunc keeps what it is given.
type journalFunc func(agent.Call)

func (f journalFunc) Keep(_ context.Context, c agent.Call) { f(c) }

// The journal keeps only calls the user approved, with the arguments
// that will run.
func TestJournalSeesOnlyApprovedCalls(t *testing.T) {
	var kept []string
	ask := &askCounter{answer: AnswerDeny}
	p := New(approvalFor(ModeAll, t.TempDir(), ask), JournalStage(journalFunc(func(c agent.Call) { kept = append(kept, c.ID) })))
	denied := agent.Call{ID: "denied", Name: tools.NameWrite, Args: json.RawMessage(`{"path":"a","content":"x"}`)}
	p.Admit(context.Background(), &denied)
	ask.answer = AnswerAllow
	allowed := agent.Call{ID: "allowed", Name: tools.NameWrite, Args: json.RawMessage(`{"path":"a","content":"x"}`)}
	p.Admit(context.Background(), &allowed)
	assert.Equal(t, []string{"allowed"}, kept)
}

var _ api.Client = (*askCounter)(nil)

// nestedTool records its run in log and the call id its context carries.
type nestedTool struct {
	log *[]string
}

func (nestedTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "echo", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)}
}

func (t nestedTool) Run(ctx context.Context, call agent.Call, _ func(agent.Result)) (agent.Result, error) {
	id, _ := agent.CallID(ctx)
	bound, _ := ctx.Value(boundKey{}).(string)
	*t.log = append(*t.log, "run "+id+" "+string(call.Args)+" "+bound)
	return agent.TextResult("ran"), nil
}

type boundKey struct{}

// parentStage checks that stages see a nested call's parent, and binds a
// value the tool reads.
type parentStage struct {
	BeforeOnly
	log *[]string
}

func (s parentStage) Before(ctx context.Context, c *Call) (bool, string) {
	fromCtx, _ := agent.ParentCallID(ctx)
	*s.log = append(*s.log, "parent "+c.Parent+" "+fromCtx)
	c.Bind(func(ctx context.Context) context.Context { return context.WithValue(ctx, boundKey{}, "bound") })
	return false, ""
}

// A nested call (a codemode script's) is validated, then passes the same
// stages in the same order as the model's calls, runs with its own id
// and what the stages bound, and comes back through the stages' After.
func TestPipelineRunNestedCall(t *testing.T) {
	var log []string
	p := New(recorder{name: "a", log: &log}, parentStage{log: &log}, recorder{name: "b", log: &log})
	c := &Call{Call: agent.Call{ID: "cm1/1", Name: "echo", Args: json.RawMessage(`{"n":"2"}`)}, Parent: "cm1", Tool: nestedTool{log: &log}}
	res := p.Run(context.Background(), c, nil)
	assert.Equal(t, "ran", res.Content.Text())
	assert.Equal(t, []string{"before a", "parent cm1 cm1", "before b", `run cm1/1 {"n":2} bound`, "after b", "after a"}, log,
		"validation coerced the argument; the stages ran in order around the tool")

	log = nil
	c = &Call{Call: agent.Call{ID: "cm1/2", Name: "echo", Args: json.RawMessage(`{}`)}, Parent: "cm1", Tool: nestedTool{log: &log}}
	res = p.Run(context.Background(), c, nil)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content.Text(), `Validation failed for tool "echo"`)
	assert.Empty(t, log, "an invalid call reaches no stage")

	log = nil
	p = New(recorder{name: "a", log: &log}, recorder{name: "b", log: &log, block: true})
	c = &Call{Call: agent.Call{ID: "cm1/3", Name: "echo", Args: json.RawMessage(`{"n":1}`)}, Parent: "cm1", Tool: nestedTool{log: &log}}
	res = p.Run(context.Background(), c, nil)
	assert.True(t, res.IsError)
	assert.Equal(t, "b said no", res.Content.Text())
	assert.Equal(t, []string{"before a", "before b"}, log, "a blocked nested call does not run")
}
