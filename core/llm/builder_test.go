package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuilderEventsAndSnapshots(t *testing.T) {
	m := &Model{ID: "m", API: "x", Provider: "p", Cost: ModelCost{Input: 3, Output: 15}}
	b := NewBuilder(m)
	start := b.Start()
	assert.Equal(t, EventStart, start.Type)
	i, ev := b.BeginText()
	assert.Equal(t, EventTextStart, ev.Type)
	d1 := b.TextDelta(i, "Hel")
	d2 := b.TextDelta(i, "lo")
	// Earlier snapshots do not change as the message grows.
	assert.Equal(t, "Hel", d1.Partial.Content[0].(TextContent).Text)
	assert.Equal(t, "Hello", d2.Partial.Content[0].(TextContent).Text)
	end := b.EndText(i)
	assert.Equal(t, "Hello", end.Content)

	j, _ := b.BeginToolCall("c1", "read")
	b.ToolCallDelta(j, `{"pa`)
	mid := b.ToolCallDelta(j, `th":"a.t`)
	assert.JSONEq(t, `{"path":"a.t"}`, string(mid.Partial.Content[j].(ToolCall).Arguments))
	b.ToolCallDelta(j, `xt"}`)
	tc := b.EndToolCall(j)
	require.NotNil(t, tc.ToolCall)
	assert.JSONEq(t, `{"path":"a.txt"}`, string(tc.ToolCall.Arguments))

	b.Usage().Input, b.Usage().Output = 1000, 100
	done := b.Done("")
	assert.Equal(t, StopToolUse, done.Reason)
	assert.Equal(t, 1100, done.Partial.Usage.TotalTokens)
	assert.InDelta(t, 0.003+0.0015, done.Partial.Usage.Cost.Total, 1e-12)

	raw, err := json.Marshal(done)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"type":"done","reason":"toolUse","message":{"role":"assistant"`)
	raw, _ = json.Marshal(d2.Lean())
	assert.JSONEq(t, `{"type":"text_delta","contentIndex":0,"delta":"lo"}`, string(raw))
}

func TestMessageRoundTrip(t *testing.T) {
	lines := []string{
		`{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","data":"AA==","mimeType":"image/png"}],"timestamp":1}`,
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","thinkingSignature":"sig"},{"type":"toolCall","id":"c","name":"bash","arguments":{"command":"ls"}}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2,"responseId":"r"}`,
		`{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":3}`,
		`{"role":"bashExecution","command":"ls","output":"a","exitCode":0,"cancelled":false,"truncated":false,"timestamp":4}`,
		`{"role":"custom","customType":"k","content":"plain","display":true,"timestamp":5}`,
		`{"role":"mystery","anything":[1,2]}`,
	}
	for _, l := range lines {
		m, err := UnmarshalMessage([]byte(l))
		require.NoError(t, err, l)
		out, err := json.Marshal(m)
		require.NoError(t, err)
		if strings.Contains(l, `"content":"plain"`) {
			// A string content is kept as one text block.
			assert.Contains(t, string(out), `"content":[{"type":"text","text":"plain"}]`)
			continue
		}
		assert.JSONEq(t, l, string(out))
	}
}

// BenchmarkBuilderLongReply streams a 200 KB reply in 8-byte deltas and
// takes a snapshot per delta, as the agent does: cost per delta must stay
// flat as the reply grows.
func BenchmarkBuilderLongReply(b *testing.B) {
	delta := strings.Repeat("x", 8)
	n := 200 << 10 / len(delta)
	b.ReportAllocs()
	for range b.N {
		bl := NewBuilder(&Model{ID: "m"})
		i, _ := bl.BeginText()
		for range n {
			_ = bl.TextDelta(i, delta)
		}
		_ = bl.EndText(i)
		_ = bl.Done(StopStop)
	}
}

// BenchmarkBuilderToolArgs streams a 100 KB write-tool argument.
func BenchmarkBuilderToolArgs(b *testing.B) {
	body := strings.Repeat("line of file content\n", 100<<10/21)
	payload, _ := json.Marshal(map[string]string{"path": "big.txt", "content": body})
	s := string(payload)
	b.ReportAllocs()
	for range b.N {
		bl := NewBuilder(&Model{ID: "m"})
		i, _ := bl.BeginToolCall("c", "write")
		for k := 0; k < len(s); k += 16 {
			_ = bl.ToolCallDelta(i, s[k:min(k+16, len(s))])
		}
		_ = bl.EndToolCall(i)
	}
}

// The final message is timed (pi 1.5's durationMs), snapshots before it
// are not; its cost says whether the total is the catalog's estimate or
// what the provider billed, once the provider reported usage.
func TestBuilderTimesAndPricesTheReply(t *testing.T) {
	m := &Model{ID: "m", API: "x", Provider: "p", Cost: ModelCost{Input: 3, Output: 15}}

	b := NewBuilder(m)
	start := b.Start()
	assert.Nil(t, start.Partial.DurationMs)
	b.Usage().Input, b.Usage().Output = 1000, 100
	b.FinishUsage()
	mid := b.Message()
	require.NotNil(t, mid.Usage.Cost.TotalFromProvider)
	assert.False(t, *mid.Usage.Cost.TotalFromProvider)
	assert.Nil(t, mid.DurationMs)
	done := b.Done("").Partial
	require.NotNil(t, done.DurationMs)
	assert.GreaterOrEqual(t, *done.DurationMs, int64(0))
	raw, err := json.Marshal(done)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `,"totalFromProvider":false}`)
	assert.Contains(t, string(raw), `"durationMs":`)

	// A billed total replaces the estimate; the parts stay the catalog's.
	b = NewBuilder(m)
	b.Usage().Input = 1000
	b.SetBilledCost(0.01)
	b.FinishUsage()
	done = b.Done("").Partial
	assert.InDelta(t, 0.003, done.Usage.Cost.Input, 1e-12)
	assert.Equal(t, 0.01, done.Usage.Cost.Total)
	require.NotNil(t, done.Usage.Cost.TotalFromProvider)
	assert.True(t, *done.Usage.Cost.TotalFromProvider)

	// A reply that failed before the provider reported usage has a cost
	// but no word on where its total came from, as in pi; it is timed.
	b = NewBuilder(m)
	b.Start()
	failed := b.Fail(context.Background(), errors.New("boom")).Partial
	assert.Nil(t, failed.Usage.Cost.TotalFromProvider)
	require.NotNil(t, failed.DurationMs)
	raw, err = json.Marshal(failed)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "totalFromProvider")
}

// Summing usages keeps the total the provider's only when both are.
func TestUsageAddTotalFromProvider(t *testing.T) {
	for _, tc := range []struct {
		a, b *bool
		want bool
	}{{new(true), new(true), true}, {new(true), new(false), false}, {nil, new(true), false}, {nil, nil, false}} {
		u := Usage{Cost: Cost{Total: 1, TotalFromProvider: tc.a}}
		u.Add(Usage{Cost: Cost{Total: 2, TotalFromProvider: tc.b}})
		require.NotNil(t, u.Cost.TotalFromProvider)
		assert.Equal(t, tc.want, *u.Cost.TotalFromProvider)
		assert.Equal(t, 3.0, u.Cost.Total)
	}
}

// A reply the provider failed with ErrRefused is marked Refused; other
// failures, a cancelled one and the stored form are not.
func TestBuilderFailMarksARefusal(t *testing.T) {
	m := &Model{ID: "m", API: "x", Provider: "p"}
	refused := NewBuilder(m).Fail(context.Background(), fmt.Errorf("%w (stop_reason refusal)", ErrRefused)).Partial
	assert.Equal(t, StopError, refused.StopReason)
	assert.True(t, refused.Refused)
	assert.Equal(t, "the model declined to answer (stop_reason refusal)", refused.ErrorMessage)
	b, err := json.Marshal(refused)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "efused", "pi's stop reason stays error; the mark is not written")

	assert.False(t, NewBuilder(m).Fail(context.Background(), errors.New("boom")).Partial.Refused)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	aborted := NewBuilder(m).Fail(ctx, ErrRefused).Partial
	assert.Equal(t, StopAborted, aborted.StopReason)
	assert.False(t, aborted.Refused)
}
