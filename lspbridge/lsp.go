package lspbridge

import (
	"encoding/json"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// The LSP wire types the bridge reads and writes (initialize, dialogs,
// progress, cancellation) are go.lsp.dev/protocol's. That package is built
// on the json/v2 codec (its optional fields, unions and LSPAny values
// marshal themselves through it), so those values are encoded here with
// json/v2 into raw JSON, which the bridge's own codec (stdCodec) passes
// through untouched. pi payloads inside them (a dialog's details) stay
// encoded by encoding/json, like everything else the two dialects share.

// lspRaw encodes an LSP value for the wire.
func lspRaw(v any) (jsonrpc2.RawMessage, error) {
	b, err := jsonv2.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", v, err)
	}
	return jsonrpc2.RawMessage(b), nil
}

// decodeLSP reads an LSP value from the wire.
func decodeLSP(raw []byte, v any) error {
	return jsonv2.Unmarshal(raw, v)
}

// progressToken is a token gopi hands out (always a string).
func progressToken(t string) protocol.ProgressToken { return protocol.String(t) }

// requestID is a JSON-RPC id as LSP's CancelParams carry it.
func requestID(id jsonrpc2.ID) protocol.ProgressToken {
	if n, ok := id.Number(); ok {
		return protocol.Integer(int32(n))
	}
	s, _ := id.StringValue()
	return protocol.String(s)
}

// rawOf turns encoding/json bytes into the type LSP structs hold.
func rawOf(b json.RawMessage) jsontext.Value { return jsontext.Value(b) }
