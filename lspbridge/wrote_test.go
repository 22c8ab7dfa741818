package lspbridge

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.lsp.dev/jsonrpc2"

	"github.com/gopi-dev/gopi/rpc"
)

// Issue 10: the bridge used to spot a written response by jsonrpc2's field
// order; a library that wrote "result" before "id" would have left every
// pi/prompt run waiting for a hook that never fired. The stream now tells
// the bridge about every message it wrote, by either path, and the bridge
// recognises responses by decoding them.
func TestResponseHooksDoNotDependOnTheLibrarysBytes(t *testing.T) {
	b := New(Options{})
	var out bytes.Buffer
	s := newStream(rpc.NewLineReader(io.MultiReader(), 0), rpc.NewWriter(&out, rpc.FramingNewline), func(error) {}, b.wrote)
	defer s.Close()
	ctx := context.Background()

	fired := map[string]bool{}
	hook := func(name string, id jsonrpc2.ID) {
		require.True(t, b.claim(id))
		b.afterResponse(id, func() { fired[name] = true })
	}

	// Field orders jsonrpc2 has never written, through WriteFrame.
	hook("number id last", jsonrpc2.NewNumberID(7))
	_, err := s.WriteFrame(ctx, []byte(`{"result":{"ok":true},"jsonrpc":"2.0","id":7}`))
	require.NoError(t, err)
	hook("string id, error first", jsonrpc2.NewStringID("p-1"))
	_, err = s.WriteFrame(ctx, []byte(`{"error":{"code":-32803,"message":"no"},"id":"p-1","jsonrpc":"2.0"}`))
	require.NoError(t, err)

	// A message built with the public constructors, through Write.
	hook("Write", jsonrpc2.NewNumberID(9))
	_, err = s.Write(ctx, jsonrpc2.NewResponse(jsonrpc2.NewNumberID(9), jsonrpc2.RawMessage(`null`), nil))
	require.NoError(t, err)

	// Requests and notifications with the same id fire nothing.
	hook("not a response", jsonrpc2.NewNumberID(11))
	_, err = s.WriteFrame(ctx, []byte(`{"jsonrpc":"2.0","id":11,"method":"window/showMessageRequest","params":{}}`))
	require.NoError(t, err)
	_, err = s.Write(ctx, jsonrpc2.NewNotification("pi/event", jsonrpc2.RawMessage(`{"id":11}`)))
	require.NoError(t, err)

	// Issue 25: the refusal of a duplicate answers another request with
	// the same id; it neither fires the hook nor lets the id go.
	assert.False(t, b.claim(jsonrpc2.NewNumberID(11)), "the id is in use")
	_, err = s.Write(ctx, jsonrpc2.NewResponse(jsonrpc2.NewNumberID(11), nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, duplicateIDMessage)))
	require.NoError(t, err)

	assert.Equal(t, map[string]bool{"number id last": true, "string id, error first": true, "Write": true}, fired)
	assert.Equal(t, int32(1), b.awaiting.Load(), "the request id 11 still waits for its answer")
	assert.False(t, b.claim(jsonrpc2.NewNumberID(11)), "and its id is still in use")

	// Its own answer lets the id go.
	_, err = s.WriteFrame(ctx, []byte(`{"jsonrpc":"2.0","id":11,"result":null}`))
	require.NoError(t, err)
	assert.True(t, fired["not a response"])
	assert.Equal(t, int32(0), b.awaiting.Load())
	assert.True(t, b.claim(jsonrpc2.NewNumberID(11)), "the id is free once answered")
}
