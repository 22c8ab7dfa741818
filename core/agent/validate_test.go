package agent

import (
	"encoding/json"
	"strings"
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
	assert.Contains(t, err.Error(), "  - items.0.k: must be integer\n  - items.1.k: must have required properties k\n\n")

	assert.Len(t, v.cache, 1, "one schema compiled once")
}

// Every problem is reported, once, in pi's words; a property that is
// missing is not also reported as having the wrong type.
func TestValidatorReportsEveryProblem(t *testing.T) {
	schema := json.RawMessage(`{
		"type": "object",
		"properties": {
			"a": {"type": "string"}, "b": {"type": "string"},
			"e": {"enum": ["x", "y"]},
			"s": {"type": "string", "minLength": 2, "pattern": "^z"},
			"arr": {"type": "array", "maxItems": 1},
			"n": {"type": "integer", "minimum": 1},
			"u": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
		},
		"required": ["a", "b"],
		"additionalProperties": false
	}`)
	var v validator
	_, err := v.validate("t", schema, json.RawMessage(`{"e":"q","s":"a","arr":[1,2],"n":0,"u":[true],"zz":1}`))
	require.Error(t, err)
	want := []string{
		`  - a: must have required properties a, b`,
		`  - root: must not have additional properties: zz`,
		`  - arr: must not have more than 1 items`,
		`  - e: must be equal to one of the allowed values: x, y`,
		`  - n: must be >= 1`,
		`  - s: must not have fewer than 2 characters`,
		`  - s: must match pattern "^z"`,
		`  - u: must match a schema in anyOf`,
	}
	for _, w := range want {
		assert.Contains(t, err.Error(), w+"\n")
	}
	assert.NotContains(t, err.Error(), "a: must be string", "a missing property is not also of the wrong type")
	assert.Equal(t, 1, strings.Count(err.Error(), "must have required"))
}

// pi drops an optional property sent as null and turns a required null
// into the type's zero value.
func TestValidatorNulls(t *testing.T) {
	schema := json.RawMessage(`{
		"type": "object",
		"properties": {
			"path": {"type": "string"},
			"limit": {"type": "integer"},
			"maybe": {"type": ["string", "null"]},
			"flag": {"type": "boolean"}
		},
		"required": ["path", "flag"]
	}`)
	var v validator
	got, err := v.validate("t", schema, json.RawMessage(`{"path":"a","limit":null,"maybe":null,"flag":null}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"path":"a","maybe":null,"flag":false}`, string(got))
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
