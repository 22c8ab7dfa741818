package llm

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The texts a client reads when it sends something gopi cannot decode.
func TestDecodeErrorTexts(t *testing.T) {
	_, err := ParseThinkingLevel("max")
	assert.EqualError(t, err, `invalid thinking level "max" (want off, minimal, low, medium, high or xhigh)`)
	assert.ErrorIs(t, err, ErrInvalidThinkingLevel)

	_, err = UnmarshalContent([]byte(`{"type":"video"}`))
	assert.EqualError(t, err, `content block: unknown type "video"`)
	_, err = UnmarshalContent([]byte(`[]`))
	assert.EqualError(t, err, `content block: want a JSON object, not an array`)
	_, err = UnmarshalContent([]byte(`{"type":1}`))
	assert.EqualError(t, err, `content block: "type" is a number, not a string`)

	_, err = UnmarshalMessage([]byte(`{"content":"x"}`))
	assert.EqualError(t, err, `message: missing role`)
	_, err = UnmarshalMessage([]byte(`{"role":"future","x":[}`))
	assert.EqualError(t, err, `future message: not valid JSON`)
	assert.ErrorIs(t, err, errNotJSON)
}
