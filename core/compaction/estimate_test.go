package compaction

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

func TestEstimateTokens(t *testing.T) {
	exit := 1
	img := llm.ImageContent{Data: "aGVsbG8=", MimeType: "image/png"}
	tests := []struct {
		name string
		msg  llm.Message
		want int
	}{
		{"user text rounds up", user("hello"), 2},
		{"user ignores images", &llm.UserMessage{Content: llm.Contents{llm.TextContent{Text: "abcd"}, img}}, 1},
		{"utf-16 units: accented letters count once", user("éééé"), 1},
		{"utf-16 units: emoji count twice", user("😀😀"), 1},
		{"utf-16 units: emoji pairs", user("😀😀😀"), 2},
		{"assistant text, thinking and tool call", &llm.AssistantMessage{Content: llm.Contents{
			llm.TextContent{Text: "abcd"},
			llm.ThinkingContent{Thinking: "efgh"},
			// "read" + `{"path":"a b"}` = 4 + 14 = 18 characters
			llm.ToolCall{Name: "read", Arguments: json.RawMessage("{ \"path\" :\n \"a b\" }")},
		}}, 7},
		{"tool call without arguments counts {}", &llm.AssistantMessage{Content: llm.Contents{llm.ToolCall{Name: "ls"}}}, 1},
		{"tool result with image", &llm.ToolResultMessage{Content: llm.Contents{llm.TextContent{Text: "abcd"}, img}}, 1201},
		{"custom message with image", &llm.CustomMessage{Content: llm.Contents{img}}, 1200},
		{"bash execution", &llm.BashExecutionMessage{Command: "ls", Output: "a.go\nb.go", ExitCode: &exit}, 3},
		{"branch summary", &llm.BranchSummaryMessage{Summary: strings.Repeat("x", 41)}, 11},
		{"compaction summary", &llm.CompactionSummaryMessage{Summary: strings.Repeat("x", 40)}, 10},
		{"unknown role", &llm.UnknownMessage{Role: "future", Raw: json.RawMessage(`{"role":"future","text":"long text"}`)}, 0},
		{"empty user", user(""), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, EstimateTokens(tt.msg))
		})
	}
}

func TestContextTokens(t *testing.T) {
	assert.Equal(t, 50, ContextTokens(llm.Usage{Input: 1, Output: 2, TotalTokens: 50}))
	assert.Equal(t, 10, ContextTokens(llm.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4}))
}

func TestEstimateContext(t *testing.T) {
	withUsage := func(stop llm.StopReason, total int) *llm.AssistantMessage {
		a := assistant("answer")
		a.StopReason = stop
		a.Usage = llm.Usage{Input: 1, TotalTokens: total}
		return a
	}

	t.Run("no usage: everything is estimated", func(t *testing.T) {
		got := EstimateContext([]llm.Message{user(text("q", 10)), user(text("r", 5))})
		assert.Equal(t, Estimate{Tokens: 15, TrailingTokens: 15, LastUsageIndex: -1}, got)
	})
	t.Run("empty", func(t *testing.T) {
		assert.Equal(t, Estimate{LastUsageIndex: -1}, EstimateContext(nil))
	})
	t.Run("last usable usage plus what follows", func(t *testing.T) {
		msgs := []llm.Message{
			user(text("q", 10)),
			withUsage(llm.StopStop, 1000),
			user(text("q", 10)),
			withUsage(llm.StopToolUse, 3000),
			result("c1", "read", text("r", 20)),
			withUsage(llm.StopError, 9000),   // failed: its usage is not trusted
			withUsage(llm.StopAborted, 9000), // neither is an aborted one's
			user(text("q", 7)),
		}
		got := EstimateContext(msgs)
		trailing := 20 + EstimateTokens(msgs[5]) + EstimateTokens(msgs[6]) + 7
		assert.Equal(t, Estimate{Tokens: 3000 + trailing, UsageTokens: 3000, TrailingTokens: trailing, LastUsageIndex: 3}, got)
	})
}

func TestShouldCompact(t *testing.T) {
	s := Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000}
	assert.False(t, ShouldCompact(200000-16384, 200000, s))
	assert.True(t, ShouldCompact(200000-16383, 200000, s))
	s.Enabled = false
	assert.False(t, ShouldCompact(250000, 200000, s))
}

func TestSettingsJSON(t *testing.T) {
	assert.Equal(t, Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000}, DefaultSettings())

	s := DefaultSettings()
	require.NoError(t, json.Unmarshal([]byte(`{"enabled":false,"keepRecentTokens":5000}`), &s))
	assert.Equal(t, Settings{Enabled: false, ReserveTokens: 16384, KeepRecentTokens: 5000}, s)

	b, err := json.Marshal(DefaultSettings())
	require.NoError(t, err)
	assert.JSONEq(t, `{"enabled":true,"reserveTokens":16384,"keepRecentTokens":20000}`, string(b))
}
