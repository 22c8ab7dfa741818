package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeDelta(t *testing.T) {
	for _, in := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
		`{"type":"content_block_delta","index":12,"delta":{"type":"thinking_delta","thinking":"a \"quoted\" \\ line\nnext \u00e9 \ud83d\ude80"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"p"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc=="}}`,
		"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"bad \xff byte\"}}",
		`{"index":3,"type":"content_block_delta","delta":{"text":"other order","type":"text_delta"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","extra":1}}`,
		`{"type":"content_block_delta", "index":0,"delta":{"type":"text_delta","text":"spaced"}}`,
	} {
		var want, got deltaEvent
		require.NoError(t, json.Unmarshal([]byte(in), &want), in)
		require.NoError(t, decodeDelta([]byte(in), &got), in)
		assert.Equal(t, want, got, in)
	}
	assert.True(t, fastDelta([]byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`), new(deltaEvent)), "the API's own shape takes the fast path")
}

// Whatever fastDelta accepts, encoding/json reads the same way.
func FuzzDecodeDelta(f *testing.F) {
	for _, s := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
		`{"type":"content_block_delta","index":7,"delta":{"type":"input_json_delta","partial_json":"{\"a\\\"b"}}`,
		`{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast deltaEvent
		if !fastDelta(data, &fast) {
			return
		}
		var want deltaEvent
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("fastDelta accepted what encoding/json refuses (%v): %q", err, data)
		}
		if fast != want {
			t.Fatalf("fastDelta read %+v, encoding/json %+v, from %q", fast, want, data)
		}
	})
}
