package agent

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The texts the model and clients read stay pi's, word for word.
func TestValidationErrorTexts(t *testing.T) {
	var v validator
	_, err := v.validate("read", json.RawMessage(`{"type":"object"}`), json.RawMessage(`{"a":1} 2`))
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.ErrorIs(t, err, errTrailingValue)
	assert.EqualError(t, err, "Validation failed for tool \"read\":\n  - root: arguments are not valid JSON: more than one JSON value\n\nReceived arguments:\n{\"a\":1} 2")

	_, err = v.validate("bad", json.RawMessage(`[1]`), json.RawMessage(`{}`))
	var se *SchemaError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, errSchemaKind)
	assert.EqualError(t, err, `Tool "bad" has an invalid parameter schema: a schema is an object or a boolean, not an array`)
}
