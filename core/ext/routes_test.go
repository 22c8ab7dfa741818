package ext

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.lsp.dev/jsonrpc2"
)

// recorder is a receiver for routes under test.
type recorder struct{ names []string }

func (r *recorder) setModel(_ context.Context, p ModelParams) (SetModelResult, error) {
	r.names = append(r.names, p.Provider+"/"+p.ID)
	return SetModelResult{OK: true}, nil
}

func (r *recorder) setLabel(p SetLabelParams) { r.names = append(r.names, p.EntryID) }

var testRoutes = NewRoutes(
	Request(PeerSetModel, (*recorder).setModel),
	Notification(PeerSetLabel, (*recorder).setLabel),
)

func TestRoutesDecodeTyped(t *testing.T) {
	r := &recorder{}
	res, err := testRoutes.Request(context.Background(), r, PeerSetModel, json.RawMessage(`{"provider":"p","id":"m"}`))
	require.NoError(t, err)
	assert.Equal(t, SetModelResult{OK: true}, res)
	require.NoError(t, testRoutes.Notify(r, PeerSetLabel, json.RawMessage(`{"entryId":"e1","label":"x"}`)))
	require.NoError(t, testRoutes.Notify(r, PeerSetLabel, nil), "no params are {}")
	assert.Equal(t, []string{"p/m", "e1", ""}, r.names)
}

// Bad params answer InvalidParams naming the field; nothing is called.
func TestRoutesNameTheBadField(t *testing.T) {
	r := &recorder{}
	_, err := testRoutes.Request(context.Background(), r, PeerSetModel, json.RawMessage(`{"provider":"p","id":5}`))
	var pe *ParamError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "id", pe.Field)
	assert.ErrorIs(t, err, ErrInvalidParams)
	assert.Contains(t, err.Error(), `invalid setModel params: field "id" must be a string`)
	var wire *jsonrpc2.Error
	require.True(t, errors.As(wireError(err), &wire))
	assert.Equal(t, jsonrpc2.InvalidParams, wire.Code)

	err = testRoutes.Notify(r, PeerSetLabel, json.RawMessage(`["e1"]`))
	assert.ErrorIs(t, err, ErrInvalidParams)
	assert.Empty(t, r.names)
}

func TestRoutesUnknownMethod(t *testing.T) {
	r := &recorder{}
	_, err := testRoutes.Request(context.Background(), r, PeerFork, nil)
	assert.ErrorIs(t, err, ErrNoMethod)
	var wire *jsonrpc2.Error
	require.True(t, errors.As(wireError(err), &wire))
	assert.Equal(t, jsonrpc2.MethodNotFound, wire.Code)
	// A notification routed as one is not a request, and the other way.
	_, err = testRoutes.Request(context.Background(), r, PeerSetLabel, nil)
	assert.ErrorIs(t, err, ErrNoMethod)
	assert.ErrorIs(t, testRoutes.Notify(r, PeerSetModel, nil), ErrNoMethod)
}
