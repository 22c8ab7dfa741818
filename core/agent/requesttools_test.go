package agent

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// RequestTools declares, from the next request of the same run, a tool a
// call made available, and that tool can be called; without the hook's
// help it is unknown.
func TestRequestTools(t *testing.T) {
	extra := echoTool("extra")
	fm := newFakeModel(
		toolTurn(callSpec{id: "c1", name: "load", args: `{}`}),
		toolTurn(callSpec{id: "c2", name: "extra", args: `{"x":1}`}),
		textTurn("done"))
	cfg := Config{RequestTools: func(_ context.Context, msgs []llm.Message, tools []Tool) []Tool {
		if slices.ContainsFunc(toolResults(msgs), func(r *llm.ToolResultMessage) bool { return r.ToolName == "load" }) {
			return append(tools, extra)
		}
		return tools
	}}
	a, _ := newTestAgent(t, fm, cfg, echoTool("load"))
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("hi")))

	reqs := fm.requests()
	require.Len(t, reqs, 3)
	names := func(r *llm.Request) []string {
		var out []string
		for _, s := range r.Tools {
			out = append(out, s.Name)
		}
		return out
	}
	assert.Equal(t, []string{"load"}, names(reqs[0]))
	assert.Equal(t, []string{"load", "extra"}, names(reqs[1]))
	results := toolResults(a.Messages())
	require.Len(t, results, 2)
	assert.False(t, results[1].IsError)
	assert.Equal(t, `extra {"x":1}`, results[1].Content.Text())
	assert.Equal(t, []string{"load"}, func() []string {
		var out []string
		for _, tl := range a.Tools() {
			out = append(out, tl.Spec().Name)
		}
		return out
	}(), "the agent's own tools are unchanged")
}
