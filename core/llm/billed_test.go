package llm

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// OpenRouter's own accounting, as pi reads it: the cost without a key of
// one's own, the cost plus the upstream provider's with one; anything
// incomplete leaves the catalog's estimate.
func TestOpenRouterBilled(t *testing.T) {
	for _, tc := range []struct {
		usage string
		want  float64
		ok    bool
	}{
		{`{"prompt_tokens":10,"cost":0.25,"is_byok":false}`, 0.25, true},
		{`{"cost":0,"is_byok":false}`, 0, true},
		{`{"cost":0.01,"is_byok":true,"cost_details":{"upstream_inference_cost":0.5}}`, 0.51, true},
		{`{"cost":0.01,"is_byok":true,"cost_details":{"upstream_inference_cost":null,"upstream_inference_prompt_cost":0.2,"upstream_inference_completions_cost":0.3}}`, 0.51, true},
		{`{"cost":0.01,"is_byok":true,"cost_details":{"upstream_inference_cost":null,"upstream_inference_prompt_cost":0.2}}`, 0, false},
		{`{"cost":0.01,"is_byok":true,"cost_details":{}}`, 0, false},
		{`{"cost":0.01,"is_byok":true}`, 0, false},
		{`{"cost":0.25}`, 0, false},
		{`{"cost":-1,"is_byok":false}`, 0, false},
		{`{"cost":"0.25","is_byok":false}`, 0, false},
		{`{"prompt_tokens":10}`, 0, false},
		{`not json`, 0, false},
	} {
		got, ok := OpenRouterBilled([]byte(tc.usage))
		assert.Equal(t, tc.ok, ok, tc.usage)
		assert.InDelta(t, tc.want, got, 1e-12, tc.usage)
	}
}

func TestIsOpenRouter(t *testing.T) {
	assert.True(t, IsOpenRouter(&Model{Provider: "openrouter"}))
	assert.True(t, IsOpenRouter(&Model{Provider: "mine", BaseURL: "https://openrouter.ai/api/v1"}))
	assert.False(t, IsOpenRouter(&Model{Provider: "openai", BaseURL: "https://api.openai.com/v1"}))
	assert.False(t, IsOpenRouter(nil))
}
