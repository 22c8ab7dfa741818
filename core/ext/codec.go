package ext

import (
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
)

// pipeCodec encodes the pipe's payloads with encoding/json, as gopi's
// dialects do; jsonrpc2's default json/v2 codec writes a json.RawMessage
// as base64 and nil slices as []. Raw messages pass through untouched.
type pipeCodec struct{}

var _ jsonrpc2.Codec = pipeCodec{}

func (pipeCodec) Marshal(v any) ([]byte, error) {
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
	return json.Marshal(v)
}

func (pipeCodec) Unmarshal(data []byte, v any) error {
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
