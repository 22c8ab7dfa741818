// Package rpccodec is the JSON-RPC payload codec gopi's two JSON-RPC
// connections share: the editor dialect (lspbridge) and the pipe to the
// extension host (core/ext).
package rpccodec

import (
	"bytes"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
)

// Std encodes payloads with encoding/json, as the native dialect does,
// instead of jsonrpc2's default json/v2 codec: v2 writes nil slices as []
// and a json.RawMessage as base64, and matches field names
// case-sensitively, so the same value would read differently on each
// connection. Raw messages pass through untouched, and nothing is
// HTML-escaped (like JavaScript's JSON.stringify).
type Std struct{}

var _ jsonrpc2.Codec = Std{}

func (Std) Marshal(v any) ([]byte, error) {
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
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func (Std) Unmarshal(data []byte, v any) error {
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
