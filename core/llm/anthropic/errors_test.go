package anthropic

import (
	"encoding/json"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// The texts a message fails with stay as clients read them.
func TestStopReasonErrorTexts(t *testing.T) {
	for _, c := range []struct {
		reason      sdk.StopReason
		explanation string
		want        string
		is          error
	}{
		{"refusal", "", "the model declined to answer (stop_reason refusal)", llm.ErrRefused},
		{"sensitive", "policy", "the model declined to answer (stop_reason sensitive): policy", llm.ErrRefused},
		{"mystery", "", "unhandled stop reason: mystery", errUnknownStop},
	} {
		s := newStreamState(llm.NewBuilder(nil), nil)
		s.stopReason(c.reason, sdk.RefusalStopDetails{Explanation: c.explanation})
		assert.EqualError(t, s.failure, c.want)
		assert.ErrorIs(t, s.failure, c.is)
	}
}

// Through OpenRouter, message_delta's usage may say what was billed.
func TestOpenRouterBilledCost(t *testing.T) {
	m := &llm.Model{ID: "x", Provider: "openrouter", Cost: llm.ModelCost{Input: 3, Output: 15}}
	var ev sdk.MessageStreamEventUnion
	require.NoError(t, json.Unmarshal([]byte(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":100,"output_tokens":10,"cost":0.02,"is_byok":false}}`), &ev))
	for _, openRouter := range []bool{true, false} {
		s := newStreamState(llm.NewBuilder(m), nil)
		s.openRouter = openRouter
		s.handle(ev)
		msg := s.b.Done("").Partial
		require.NotNil(t, msg.Usage.Cost.TotalFromProvider)
		assert.Equal(t, openRouter, *msg.Usage.Cost.TotalFromProvider)
		if openRouter {
			assert.Equal(t, 0.02, msg.Usage.Cost.Total)
		} else {
			assert.InDelta(t, (300+150)/1e6, msg.Usage.Cost.Total, 1e-12)
		}
	}
}
