package lspbridge

import (
	"bytes"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
)

// stdCodec encodes payloads with encoding/json, as the native dialect does,
// instead of jsonrpc2's default json/v2 codec: v2 writes nil slices as []
// and matches field names case-sensitively, so the same value would read
// differently in the two dialects. Raw messages pass through untouched.
type stdCodec struct{}

var _ jsonrpc2.Codec = stdCodec{}

func (stdCodec) Marshal(v any) ([]byte, error) {
	switch r := v.(type) {
	case nil:
		return []byte("null"), nil
	case jsonrpc2.RawMessage:
		if r == nil {
			return []byte("null"), nil
		}
		return r, nil
	case json.RawMessage:
		if r == nil {
			return []byte("null"), nil
		}
		return r, nil
	}
	return marshal(v)
}

func (stdCodec) Unmarshal(data []byte, v any) error {
	switch p := v.(type) {
	case *jsonrpc2.RawMessage:
		*p = append((*p)[:0:0], data...)
		return nil
	case *json.RawMessage:
		*p = append((*p)[:0:0], data...)
		return nil
	}
	return json.Unmarshal(data, v)
}

// marshal is json.Marshal without HTML escaping, like JavaScript's
// JSON.stringify and the native dialect's writer.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
