package openai

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// The texts a message fails with stay as clients read them.
func TestResponsesErrorTexts(t *testing.T) {
	for _, c := range []struct {
		event string
		want  string
		is    error
	}{
		{`{"type":"response.failed","response":{"incomplete_details":{"reason":"max_output_tokens"}}}`, "incomplete: max_output_tokens", errIncomplete},
		{`{"type":"response.failed","response":{}}`, "response failed without error details", errNoDetails},
		{`{"type":"response.completed","response":{"status":"failed"}}`, "response failed", errRespFailed},
		{`{"type":"response.completed","response":{"status":"cancelled"}}`, "response cancelled", errRespCancelled},
	} {
		var ev responses.ResponseStreamEventUnion
		require.NoError(t, json.Unmarshal([]byte(c.event), &ev))
		s := respState{b: llm.NewBuilder(nil), items: map[int64]*respBlock{}}
		_, err := s.event(ev)
		assert.EqualError(t, err, c.want)
		assert.ErrorIs(t, err, c.is)
	}

	s := chatState{b: llm.NewBuilder(nil)}
	s.finish("content_filter")
	assert.EqualError(t, s.failure, "Provider finish_reason: content_filter")
	assert.ErrorIs(t, s.failure, errFinishReason)
}
