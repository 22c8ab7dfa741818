package lspbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.lsp.dev/jsonrpc2"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/rpc"
)

func stateRT() *fakeRT {
	rt := newFakeRT()
	rt.getState = func(context.Context) (api.State, error) {
		return api.State{SessionID: "s1", SteeringMode: api.QueueAll, FollowUpMode: api.QueueOneAtATime}, nil
	}
	return rt
}

func TestServesBothFramingsInTheClientsFraming(t *testing.T) {
	for _, tc := range []struct {
		name    string
		framing rpc.Framing
	}{{"content-length", rpc.FramingHeader}, {"newline", rpc.FramingNewline}} {
		t.Run(tc.name, func(t *testing.T) {
			h := startBridge(t, stateRT(), config{framing: tc.framing})
			resp := h.request("pi/get_state", nil)
			require.Nil(t, resp.errObj(), resp)
			var st api.State
			require.NoError(t, json.Unmarshal(resp.result(), &st))
			assert.Equal(t, "s1", st.SessionID)
			assert.Equal(t, `"2.0"`, string(resp.f["jsonrpc"]))

			// The bytes on the wire are framed as the client framed its own.
			wire := h.raw.String()
			body := string(resp.raw)
			if tc.framing == rpc.FramingHeader {
				assert.Equal(t, fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body), wire)
			} else {
				assert.Equal(t, body+"\n", wire)
			}
		})
	}
}

// errorResponse checks m is an error response with the given id (as
// written) and code.
func errorResponse(t *testing.T, m *msg, id string, code int) *rpcError {
	t.Helper()
	require.True(t, m.isResponse(), "want a response, got %s", m)
	assert.Equal(t, id, m.id(), m.String())
	e := m.errObj()
	require.NotNil(t, e, "want an error, got %s", m)
	assert.Equal(t, code, e.Code, m.String())
	assert.False(t, m.has("result"), m.String())
	return e
}

// stillServes checks a valid request after a bad frame is answered, and
// that nothing else was written before its answer.
func stillServes(t *testing.T, h *harness) {
	t.Helper()
	id := h.call("pi/get_state", nil)
	m := h.next()
	require.Equal(t, fmt.Sprint(id), m.id(), "the next message must answer the valid request: %s", m)
	require.Nil(t, m.errObj(), m.String())
}

func TestMalformedContentLengthFramesAreAnsweredAndSkipped(t *testing.T) {
	const max = 256
	h := startBridge(t, stateRT(), config{framing: rpc.FramingHeader, max: max})
	frame := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

	// A header line without a colon spoils its frame; the body (a valid
	// request) is skipped, not run.
	body := `{"jsonrpc":"2.0","id":100,"method":"pi/get_state"}`
	h.sendBytes(fmt.Sprintf("Content-Length: %d\r\nno colon here\r\n\r\n%s", len(body), body))
	e := errorResponse(t, h.next(), "null", -32700)
	assert.Contains(t, e.Message, "no colon")
	stillServes(t, h)

	h.sendBytes("Content-Length: twelve\r\n\r\n")
	e = errorResponse(t, h.next(), "null", -32700)
	assert.Contains(t, e.Message, "Content-Length")
	stillServes(t, h)

	h.sendBytes(frame(`{"jsonrpc":"2.0","id":101,"method":"pi/get_state","params":{"pad":"` + strings.Repeat("x", 2*max) + `"}}`))
	e = errorResponse(t, h.next(), "null", -32700)
	assert.Contains(t, e.Message, "limit")
	stillServes(t, h)

	h.sendBytes(frame(`{"jsonrpc":"2.0","id":102,"method":`))
	errorResponse(t, h.next(), "null", -32700)
	stillServes(t, h)
}

func TestMalformedMessagesAreAnsweredAndTheConnectionServesOn(t *testing.T) {
	const max = 200
	h := startBridge(t, stateRT(), config{framing: rpc.FramingNewline, max: max})

	// A line over the reader's limit.
	h.sendRecord(`{"jsonrpc":"2.0","id":1,"method":"pi/get_state","params":{"pad":"` + strings.Repeat("y", 2*max) + `"}}`)
	e := errorResponse(t, h.next(), "null", -32700)
	assert.Contains(t, e.Message, "limit")
	stillServes(t, h)

	// Unparsable JSON: parse error, id null.
	h.sendRecord(`{"jsonrpc":"2.0","id":2,"method":"pi/get_state"`)
	errorResponse(t, h.next(), "null", -32700)
	stillServes(t, h)

	// JSON that is not an object: invalid request, id null.
	for _, v := range []string{`42`, `"pi/get_state"`, `true`, `null`} {
		h.sendRecord(v)
		errorResponse(t, h.next(), "null", -32600)
		stillServes(t, h)
	}

	// A request without "jsonrpc":"2.0": invalid request echoing its id.
	h.sendRecord(`{"id":7,"method":"pi/get_state"}`)
	e = errorResponse(t, h.next(), "7", -32600)
	assert.Contains(t, e.Message, "2.0")
	stillServes(t, h)
	h.sendRecord(`{"jsonrpc":"1.0","id":"abc","method":"pi/get_state"}`)
	errorResponse(t, h.next(), `"abc"`, -32600)
	stillServes(t, h)
	// An id that is neither a string nor a number is not echoed.
	h.sendRecord(`{"jsonrpc":"2.0","id":{"x":1},"method":"pi/get_state"}`)
	errorResponse(t, h.next(), "null", -32600)
	stillServes(t, h)

	// An object with neither method nor result nor error is no response
	// either.
	h.sendRecord(`{"jsonrpc":"2.0","id":3}`)
	errorResponse(t, h.next(), "3", -32600)
	stillServes(t, h)

	// A malformed response from the client is dropped without an answer
	// (answering could start an endless exchange of errors).
	for _, v := range []string{
		`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"both"}}`,
		`{"id":1,"result":null}`,
		`{"jsonrpc":"2.0","id":{"x":1},"error":{"code":1,"message":"bad id"}}`,
	} {
		h.sendRecord(v)
		stillServes(t, h)
	}
}

// The newline framing and Content-Length framing of JSON-RPC, and pi's
// own dialect, are told apart from the first bytes, as gopi --mode rpc
// does; each is then served in its own framing.
func TestDetectionOfTheThreeDialects(t *testing.T) {
	header := func(s string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(s), s) }
	for _, tc := range []struct {
		name    string
		first   string
		framing rpc.Framing
		dialect rpc.Dialect
	}{
		{"content-length", header(`{"jsonrpc":"2.0","id":1,"method":"pi/get_state"}`), rpc.FramingHeader, rpc.DialectJSONRPC},
		{"newline json-rpc", `{"jsonrpc":"2.0","id":1,"method":"pi/get_state"}` + "\n", rpc.FramingNewline, rpc.DialectJSONRPC},
		{"native pi", `{"id":"1","type":"get_state"}` + "\n", rpc.FramingNewline, rpc.DialectPi},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := stateRT()
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			p := newPeer(t, tc.framing, inW, outR, nil)
			defer p.stop()
			p.sendBytes(tc.first)

			det, err := rpc.Detect(inR)
			require.NoError(t, err)
			assert.Equal(t, tc.framing, det.Framing)
			assert.Equal(t, tc.dialect, det.Dialect)

			served := make(chan struct{})
			go func() {
				defer close(served)
				if det.Dialect == rpc.DialectPi {
					conn := rpc.NewConn(rpc.NewWriter(outW, det.Framing), nil)
					_ = conn.Serve(context.Background(), rpc.NewLineReader(det.Reader, 0), rt)
					return
				}
				var in rpc.RecordReader = rpc.NewLineReader(det.Reader, 0)
				if det.Framing == rpc.FramingHeader {
					in = rpc.NewHeaderReader(det.Reader, 0)
				}
				New(Options{Runtime: rt}).Serve(context.Background(), in, rpc.NewWriter(outW, det.Framing))
			}()

			m := p.next()
			if tc.dialect == rpc.DialectPi {
				assert.Equal(t, `"response"`, string(m.f["type"]), m.String())
				assert.Equal(t, `true`, string(m.f["success"]), m.String())
			} else {
				assert.Equal(t, "1", m.id(), m.String())
				assert.Nil(t, m.errObj(), m.String())
			}
			var st api.State
			data := m.result()
			if tc.dialect == rpc.DialectPi {
				data = m.f["data"]
			}
			require.NoError(t, json.Unmarshal(data, &st))
			assert.Equal(t, "s1", st.SessionID)

			p.closeInput()
			select {
			case <-served:
			case <-time.After(waitTimeout):
				t.Fatal("Serve did not return at the end of input")
			}
		})
	}
}

// Issue 37: a request whose id is longer than api.MaxID (as a string, a
// number of 300 digits, or in a batch) is refused with id null, not
// echoed; a huge method name is quoted at most api.ClipName bytes; the
// connection serves on.
func TestHugeIDsAndNamesAreNotEchoed(t *testing.T) {
	h := startBridge(t, stateRT(), config{framing: rpc.FramingNewline})
	id := strings.Repeat("i", 1<<20)
	h.sendRecord(`{"jsonrpc":"2.0","id":"` + id + `","method":"pi/get_state"}`)
	e := errorResponse(t, h.next(), "null", -32600)
	assert.Contains(t, e.Message, `"id" is 1048578 bytes long`)
	stillServes(t, h)

	h.sendRecord(`{"jsonrpc":"2.0","id":` + strings.Repeat("9", 300) + `,"method":"pi/get_state"}`)
	errorResponse(t, h.next(), "null", -32600)
	stillServes(t, h)

	h.sendRecord(`[{"jsonrpc":"2.0","id":"` + id + `","method":"pi/get_state"},{"jsonrpc":"2.0","id":3,"method":"pi/get_state"}]`)
	e = errorResponse(t, h.next(), "null", -32600)
	assert.Contains(t, e.Message, "a request of the batch")
	stillServes(t, h)

	h.sendRecord(`{"jsonrpc":"2.0","id":4,"method":"` + strings.Repeat("x", 1<<20) + `"}`)
	e = errorResponse(t, h.next(), "4", -32601)
	assert.Equal(t, "Unknown method: "+strings.Repeat("x", api.ClipName)+"…", e.Message)
	stillServes(t, h)
}

// bounded cuts what a handler's error would send: the message at
// api.ClipMessage bytes, data past that left out, the code kept.
func TestBoundedErrors(t *testing.T) {
	small := jsonrpc2.NewError(jsonrpc2.InvalidParams, "short")
	assert.Same(t, small, bounded(small))
	plain := errors.New("plain")
	assert.Same(t, plain, bounded(plain))

	long := strings.Repeat("z", 100_000)
	got := bounded(&jsonrpc2.Error{Code: RequestFailed, Message: long, Data: []byte(`{"command":"x"}`)}).(*jsonrpc2.Error)
	assert.Equal(t, RequestFailed, got.Code)
	assert.Equal(t, api.Clip(long, api.ClipMessage), got.Message)
	assert.JSONEq(t, `{"command":"x"}`, string(got.Data))

	got = bounded(&jsonrpc2.Error{Code: RequestFailed, Message: "m", Data: []byte(`"` + long + `"`)}).(*jsonrpc2.Error)
	assert.Equal(t, "m", got.Message)
	assert.Nil(t, got.Data)

	got = bounded(fmt.Errorf("wrapped %s: %w", long, jsonrpc2.NewError(jsonrpc2.InvalidParams, "inner"))).(*jsonrpc2.Error)
	assert.Equal(t, jsonrpc2.InvalidParams, got.Code)
	assert.LessOrEqual(t, len(got.Message), api.ClipMessage+len("…"))
}
