package acp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/rpc"
)

// errorf quotes its string arguments (named string types too) at most
// api.ClipName bytes; notFound's data too.
func TestErrorfQuotesShortly(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	e := errorf(codeMethodNotFound, "method not found: %s", long)
	assert.Equal(t, "method not found: "+strings.Repeat("x", api.ClipName)+"…", e.Message)
	e = notFound(long, "resource not found: no session %q", sdk.SessionId(long))
	assert.Equal(t, `resource not found: no session "`+strings.Repeat("x", api.ClipName)+`…"`, e.Message)
	assert.Equal(t, map[string]string{"sessionId": strings.Repeat("x", api.ClipName) + "…"}, e.Data)
	args := []any{long}
	errorf(codeInvalidParams, "%s", args...)
	assert.Equal(t, long, args[0], "the caller's arguments are left as they were")
}

// fail keeps an answer small whatever the error holds: a message cut at
// api.ClipMessage bytes, data past that left out, an id past api.MaxID
// not echoed.
func TestFailIsBounded(t *testing.T) {
	var out bytes.Buffer
	w := writer{out: rpc.NewWriter(&out, rpc.FramingNewline)}
	long := strings.Repeat("y", 100_000)
	require.NoError(t, w.fail(json.RawMessage(`"`+long+`"`), &rpcError{Code: codeInternalError, Message: long, Data: map[string]string{"x": long}}))
	var got struct {
		ID    json.RawMessage `json:"id"`
		Error rpcError        `json:"error"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &got), out.String())
	assert.Equal(t, "null", string(got.ID))
	assert.Equal(t, api.Clip(long, api.ClipMessage), got.Error.Message)
	assert.Nil(t, got.Error.Data)
	assert.Less(t, out.Len(), api.ClipMessage+200)
}
