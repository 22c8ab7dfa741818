package agent

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidatorCoercion(t *testing.T) {
	schema := json.RawMessage(`{
		"type": "object",
		"properties": {
			"n": {"type": "number"},
			"flag": {"type": "boolean"},
			"name": {"type": "string"},
			"items": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "integer"}}, "required": ["k"]}},
			"either": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}
		}
	}`)
	var v validator
	got, err := v.validate("t", schema, json.RawMessage(`{"n":"1.5","flag":"true","name":42,"items":[{"k":"3"}],"either":"false"}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"n":1.5,"flag":true,"name":"42","items":[{"k":3}],"either":false}`, string(got))

	// Arguments that already fit keep the model's bytes.
	in := json.RawMessage(`{"name":"x","n":2}`)
	got, err = v.validate("t", schema, in)
	require.NoError(t, err)
	assert.Equal(t, string(in), string(got))

	// What cannot be converted is reported with its path.
	_, err = v.validate("t", schema, json.RawMessage(`{"items":[{"k":"x"},{}]}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `  - items.0.k: got string, want integer`)
	assert.Contains(t, err.Error(), `  - items.1.k: missing property 'k'`)

	assert.Len(t, v.cache, 1, "one schema compiled once")
}

func TestValidatorBrokenSchema(t *testing.T) {
	var v validator
	_, err := v.validate("bad", json.RawMessage(`{"type": 12}`), json.RawMessage(`{}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `Tool "bad" has an invalid parameter schema`)

	// No schema accepts any object.
	got, err := v.validate("free", nil, json.RawMessage(`{"a":1}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"a":1}`, string(got))
}
