package models

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The texts users read when a registered provider is refused stay as
// they were.
func TestRegisterProviderErrorTexts(t *testing.T) {
	r := load(t, nil, nil)
	err := r.RegisterProvider(" ", nil)
	assert.EqualError(t, err, "a provider needs a name")

	err = r.RegisterProvider("proxy", json.RawMessage(`{"baseUrl": "http://127.0.0.1:9/v1", "models": [{"id": "p-1"}]}`))
	assert.EqualError(t, err, `provider proxy, model p-1: no "api"; set it on the provider or the model`)
	assert.ErrorIs(t, err, errDynamicNoAPI)

	err = r.RegisterProvider("proxy", json.RawMessage(`{"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "models": [{"id": "p-1", "maxTokens": 0}]}`))
	assert.EqualError(t, err, "provider proxy, model p-1: invalid maxTokens")
	assert.ErrorIs(t, err, ErrInvalidMaxTokens)
}
