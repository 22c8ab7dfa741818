package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

func leanDelta(typ llm.StreamEventType, idx int, delta string, u llm.Usage) Event {
	return Event{Type: EventMessageUpdate, Usage: &u, AssistantEvent: &llm.StreamEvent{Type: typ, ContentIndex: idx, Delta: delta}}
}

// AppendJSON writes the same bytes as MarshalJSON for every delta.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	u := llm.Usage{Input: 120, Output: 7, CacheRead: 3, TotalTokens: 130, Cost: llm.Cost{Input: 0.00036, Output: 1.5e-5, Total: 0.000375, TotalFromProvider: new(false)}}
	for _, d := range []string{"", "plain", "quote \" and \\ slash", "<tag> & amp", "line\nbreak\ttab\r", "\u2028\u2029", "bad \xff utf-8 \xc3", "\x00\x1f control", "emoji 🚀"} {
		for _, typ := range []llm.StreamEventType{llm.EventTextDelta, llm.EventThinkingDelta, llm.EventToolCallDelta} {
			ev := leanDelta(typ, 3, d, u)
			want, err := json.Marshal(ev)
			require.NoError(t, err)
			got, ok := ev.AppendJSON(nil)
			require.True(t, ok)
			assert.Equal(t, string(want), string(got), "delta %q", d)
		}
	}
	// Everything else is left to MarshalJSON.
	for _, ev := range []Event{
		{Type: EventAgentStart},
		{Type: EventMessageUpdate, Message: &llm.AssistantMessage{}, AssistantEvent: &llm.StreamEvent{Type: llm.EventTextDelta}},
		leanDelta(llm.EventTextEnd, 0, "", u),
		{Type: EventMessageUpdate, AssistantEvent: &llm.StreamEvent{Type: llm.EventTextDelta}}, // no usage: the older wire
	} {
		_, ok := ev.AppendJSON(nil)
		assert.False(t, ok, "%v", ev.Type)
	}
}

func FuzzAppendJSON(f *testing.F) {
	for _, s := range []string{"", "hi", "\xff", "\u2028", "<&>", "\"\\"} {
		f.Add(s, 2, 100, 0.5)
	}
	f.Fuzz(func(t *testing.T, delta string, idx, tokens int, cost float64) {
		if cost != cost || cost > 1e300 || cost < -1e300 { // NaN/Inf do not encode at all
			t.Skip()
		}
		u := llm.Usage{Input: tokens, Output: -tokens, Cost: llm.Cost{Total: cost}}
		if tokens%3 != 0 {
			u.Cost.TotalFromProvider = new(tokens%3 == 1)
		}
		ev := leanDelta(llm.EventTextDelta, idx, delta, u)
		want, err := json.Marshal(ev)
		require.NoError(t, err)
		got, ok := ev.AppendJSON(nil)
		require.True(t, ok)
		require.Equal(t, string(want), string(got))
	})
}

// BenchmarkLeanDelta is the cost of encoding one delta-only
// message_update: AppendJSON against encoding/json (what Writer.Encode
// did before). Output bytes per second and allocations per delta.
func BenchmarkLeanDelta(b *testing.B) {
	ev := leanDelta(llm.EventTextDelta, 0, "Hello, world", llm.Usage{Input: 1200, Output: 340, TotalTokens: 1540, Cost: llm.Cost{Input: 0.0036, Output: 0.0051, Total: 0.0087}})
	b.Run("append", func(b *testing.B) {
		buf := make([]byte, 0, 1024)
		out, _ := ev.AppendJSON(buf[:0])
		b.SetBytes(int64(len(out)))
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = ev.AppendJSON(buf[:0])
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		out, _ := json.Marshal(ev)
		b.SetBytes(int64(len(out)))
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(ev)
		}
	})
}

// The full form (--full-updates) is byte for byte what MarshalJSON writes,
// update after update of a growing reply.
func TestFullUpdatesMatchMarshal(t *testing.T) {
	var f FullUpdates
	text := "Hello <there>, \"friend\" 🚀 \xff end"
	f.Wrap(Event{Type: EventMessageStart, Message: &llm.AssistantMessage{}})
	for i := 1; i <= len(text); i++ {
		m := &llm.AssistantMessage{Content: llm.Contents{llm.TextContent{Text: text[:i]}}, API: "a", Provider: "p", Model: "m",
			StopReason: llm.StopPending, Timestamp: 42, Usage: llm.Usage{Input: i}}
		ev := Event{Type: EventMessageUpdate, Message: m, AssistantEvent: &llm.StreamEvent{Type: llm.EventTextDelta, ContentIndex: 0, Delta: text[i-1 : i], Partial: m}}
		want, err := json.Marshal(ev)
		require.NoError(t, err)
		w, ok := f.Wrap(ev).(interface{ AppendJSON([]byte) ([]byte, bool) })
		require.True(t, ok)
		got, ok := w.AppendJSON(nil)
		require.True(t, ok)
		require.Equal(t, string(want), string(got))
	}
}

// BenchmarkFullUpdates streams a 20 KB reply in 5-byte deltas, each sent
// as a full message_update (the older protocol): output throughput, and
// the allocation per update, which stays O(delta) while the output is
// O(message).
func BenchmarkFullUpdates(b *testing.B) {
	const n = 4000
	text := strings.Repeat("word ", n)
	events := make([]Event, n)
	for i := range events {
		m := &llm.AssistantMessage{Content: llm.Contents{llm.TextContent{Text: text[:5*(i+1)]}}, API: "anthropic-messages",
			Provider: "anthropic", Model: "claude", StopReason: llm.StopPending, Timestamp: 1795585156726, Usage: llm.Usage{Input: 100, Output: i}}
		events[i] = Event{Type: EventMessageUpdate, Message: m, AssistantEvent: &llm.StreamEvent{Type: llm.EventTextDelta, Delta: "word ", Partial: m}}
	}
	run := func(b *testing.B, encode func(buf []byte, ev Event) []byte) {
		var total int64
		buf := make([]byte, 0, 64<<10)
		for _, ev := range events {
			total += int64(len(encode(buf[:0], ev)))
		}
		b.SetBytes(total / n)
		b.ReportAllocs()
		b.ResetTimer()
		i := 0
		for b.Loop() {
			buf = encode(buf[:0], events[i%n])
			i++
		}
	}
	b.Run("appender", func(b *testing.B) {
		var f FullUpdates
		run(b, func(buf []byte, ev Event) []byte {
			out, _ := f.Wrap(ev).(interface{ AppendJSON([]byte) ([]byte, bool) }).AppendJSON(buf)
			return out
		})
	})
	b.Run("encoding-json", func(b *testing.B) {
		run(b, func(buf []byte, ev Event) []byte {
			out, _ := json.Marshal(ev)
			return append(buf, out...)
		})
	})
}

// message_start/message_end and agent_end are appended too (a pasted
// 20 MB prompt is copied once, not re-scanned at every nesting level);
// the bytes are MarshalJSON's.
func TestAppendJSONMessagesMatchMarshal(t *testing.T) {
	user := &llm.UserMessage{Content: llm.Contents{llm.TextContent{Text: "look <here> & \u2028 \xff"}, llm.ImageContent{Data: "iVBOR", MimeType: "image/png"}}, Timestamp: 7}
	asst := &llm.AssistantMessage{Content: llm.Contents{llm.ThinkingContent{Thinking: "hm", ThinkingSignature: "s"}, llm.TextContent{Text: "ok"},
		llm.ToolCall{ID: "t", Name: "read", Arguments: json.RawMessage(`{"path": "a<b"}`)}}, API: "a", Provider: "p", Model: "m",
		StopReason: llm.StopToolUse, RawStopReason: "tool_use", Timestamp: 9, Usage: llm.Usage{Input: 3, Cost: llm.Cost{Total: 1e-7, TotalFromProvider: new(true)}},
		DurationMs: new(int64(1234)), ThinkingLevel: llm.ThinkingHigh}
	tool := &llm.ToolResultMessage{ToolCallID: "t", ToolName: "read", Content: llm.Contents{llm.TextContent{Text: "x"}}, DurationMs: new(int64(5)), Timestamp: 10}
	sys := &llm.SystemMessage{Sections: llm.Sections{{Name: "preamble"}}, Timestamp: 1}
	for _, ev := range []Event{
		{Type: EventMessageStart, Message: user},
		{Type: EventMessageEnd, Message: user},
		{Type: EventMessageEnd, Message: asst},
		{Type: EventMessageStart, Message: &llm.UserMessage{}},
		{Type: EventAgentEnd, Messages: []llm.Message{sys, user, asst, tool}, WillRetry: true},
		{Type: EventAgentEnd},
	} {
		want, err := json.Marshal(ev)
		require.NoError(t, err)
		got, ok := ev.AppendJSON(nil)
		require.True(t, ok, "%s", want)
		assert.Equal(t, string(want), string(got))
	}
	// A tool result's message_end is left to MarshalJSON.
	_, ok := Event{Type: EventMessageEnd, Message: tool}.AppendJSON(nil)
	assert.False(t, ok)
}
