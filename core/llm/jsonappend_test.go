package llm

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// streamed returns the snapshots a reply of text, thinking and tool
// arguments goes through when each grows step bytes at a time (cutting
// runes in two when step says so).
func streamed(text, thinking, args string, step int) []*AssistantMessage {
	if step <= 0 {
		step = 1
	}
	var out []*AssistantMessage
	n := max(len(text), len(thinking))
	for i := 0; i <= n+step; i += step {
		m := &AssistantMessage{API: "anthropic-messages", Provider: "p<&>", Model: "m", ResponseID: "r",
			Usage:      Usage{Input: i, Output: 2 * i, TotalTokens: 3 * i, Cost: Cost{Input: 0.001 * float64(i), Total: 1e-9}},
			StopReason: StopPending, Timestamp: 1795585156726}
		m.Content = Contents{
			ThinkingContent{Thinking: thinking[:min(i, len(thinking))], ThinkingSignature: "sig"},
			TextContent{Text: text[:min(i, len(text))]},
		}
		if i > 0 {
			// Priced once the provider reported usage.
			m.Usage.Cost.TotalFromProvider = new(i%2 == 0)
		}
		if i > n {
			m.Content = append(m.Content, ToolCall{ID: "t1", Name: "write", Arguments: json.RawMessage(args)})
			m.StopReason, m.RawStopReason, m.ErrorMessage = StopToolUse, "tool_use", "x\u2028y"
			m.DurationMs, m.ThinkingLevel = new(int64(i)), ThinkingMedium
		}
		out = append(out, m)
	}
	return out
}

func TestAssistantEncoderMatchesMarshal(t *testing.T) {
	for _, tc := range []struct{ text, thinking, args string }{
		{"Hello, <world> & \"friends\"\n\ttabbed", "thinking… 🚀 é", `{"path": "a.txt", "content": "<b>"}`},
		{"bad \xff\xfe bytes and \u2028 separators \x01", "", `{}`},
		{"", "", ``},
	} {
		for _, step := range []int{1, 2, 3, 7} {
			var enc AssistantEncoder
			for _, m := range streamed(tc.text, tc.thinking, tc.args, step) {
				want, err := json.Marshal(m)
				require.NoError(t, err)
				got, ok := enc.Append(nil, m)
				require.True(t, ok)
				require.Equal(t, string(want), string(got))
			}
		}
	}
	// Tool arguments that are not JSON are left to encoding/json.
	var enc AssistantEncoder
	_, ok := enc.Append(nil, &AssistantMessage{Content: Contents{ToolCall{ID: "x", Arguments: json.RawMessage(`{"a":`)}}})
	require.False(t, ok)
}

func FuzzAssistantEncoder(f *testing.F) {
	f.Add("Hello <b>", "think \xe2\x82", `{"a":1}`, 3)
	f.Add("\u2028\xff", "", `{}`, 1)
	f.Fuzz(func(t *testing.T, text, thinking, args string, step int) {
		if step <= 0 || step > 64 || len(text)+len(thinking) > 2000 {
			t.Skip()
		}
		var enc AssistantEncoder
		for _, m := range streamed(text, thinking, args, step) {
			want, err := json.Marshal(m)
			got, ok := enc.Append(nil, m)
			if err != nil {
				if ok {
					t.Fatalf("the encoder wrote what encoding/json refuses (%v)", err)
				}
				return
			}
			if !ok {
				t.Fatalf("the encoder refused what encoding/json writes: %s", want)
			}
			if string(got) != string(want) {
				t.Fatalf("encoder:\n%s\nencoding/json:\n%s", got, want)
			}
		}
	})
}
