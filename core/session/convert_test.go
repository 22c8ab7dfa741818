package session

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

func TestConvertToLLM(t *testing.T) {
	code := func(n int) *int { return &n }
	in := []llm.Message{
		user("hi"),
		&llm.BashExecutionMessage{Command: "make", Output: "boom", ExitCode: code(2), Truncated: true, FullOutputPath: "/tmp/out.log", Timestamp: 10},
		&llm.BashExecutionMessage{Command: "sleep 9", Cancelled: true, ExitCode: code(130), Timestamp: 11},
		&llm.BashExecutionMessage{Command: "true", ExitCode: code(0), Truncated: true, Timestamp: 12},
		&llm.BashExecutionMessage{Command: "secret", Output: "x", ExcludeFromContext: true},
		&llm.CustomMessage{CustomType: "n", Content: llm.Contents{llm.TextContent{Text: "note"}, llm.ImageContent{Data: "AA", MimeType: "image/png"}}, Timestamp: 13},
		&llm.BranchSummaryMessage{Summary: "went left", FromID: "abc", Timestamp: 14},
		&llm.CompactionSummaryMessage{Summary: "before", TokensBefore: 5, Timestamp: 15},
		assistant("ok"),
		&llm.ToolResultMessage{ToolCallID: "t", ToolName: "read", Content: llm.Contents{llm.TextContent{Text: "r"}}},
		&llm.UnknownMessage{Role: "futureRole", Raw: json.RawMessage(`{"role":"futureRole"}`)},
	}
	out := ConvertToLLM(in)
	require.Len(t, out, 9)
	assert.Same(t, in[0], out[0])
	text := func(i int) string { return out[i].(*llm.UserMessage).Content.Text() }
	assert.Equal(t, "Ran `make`\n```\nboom\n```\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/out.log]", text(1))
	assert.Equal(t, int64(10), out[1].Time())
	assert.Equal(t, "Ran `sleep 9`\n(no output)\n\n(command cancelled)", text(2))
	assert.Equal(t, "Ran `true`\n(no output)", text(3))
	assert.Equal(t, "note", text(4))
	assert.True(t, out[4].(*llm.UserMessage).Content.HasImages())
	assert.Equal(t, "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nwent left</summary>", text(5))
	assert.Equal(t, "The conversation history before this point was compacted into the following summary:\n\n<summary>\nbefore\n</summary>", text(6))
	assert.Equal(t, int64(15), out[6].Time())
	assert.Same(t, in[8], out[7])
	assert.Same(t, in[9], out[8])
}
