package openai

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A field of an unexpected type reads as absent; the rest of the chunk is
// kept (servers that copy Chat Completions disagree on types).
func TestChatChunkIsReadLeniently(t *testing.T) {
	var ch chatChunk
	require.NoError(t, json.Unmarshal([]byte(`{
		"id": "c1",
		"usage": null,
		"choices": [{
			"finish_reason": null,
			"usage": {"prompt_tokens": 3},
			"delta": {
				"content": null,
				"reasoning_content": "thinking",
				"tool_calls": [
					{"index": "0", "id": "t1", "function": {"name": "read", "arguments": {"path": "a"}}},
					{"index": 1, "function": {"arguments": "{\"x\":1}"}}
				]
			}
		}]
	}`), &ch))
	assert.Equal(t, "c1", ch.ID)
	assert.Empty(t, ch.Usage)
	require.Len(t, ch.Choices, 1)
	c := ch.Choices[0]
	assert.Empty(t, c.FinishReason)
	assert.JSONEq(t, `{"prompt_tokens": 3}`, c.Usage)
	assert.Empty(t, c.Delta.Content)
	raw, ok := c.Delta.field("reasoning_content")
	assert.True(t, ok)
	assert.Equal(t, `"thinking"`, raw)
	_, ok = c.Delta.field("reasoning")
	assert.False(t, ok)
	assert.Equal(t, []chatToolCallDelta{
		{ID: "t1", Name: "read"},
		{Index: 1, HasIndex: true, Arguments: `{"x":1}`},
	}, c.Delta.ToolCalls)
}

// A chunk that is not an object fails the stream, as the SDK's decoder did.
func TestChatChunkThatIsNotAnObjectFails(t *testing.T) {
	var ch chatChunk
	assert.Error(t, json.Unmarshal([]byte(`[1,2]`), &ch))
}
