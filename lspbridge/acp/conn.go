package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/rpc"
)

// JSON-RPC 2.0 and ACP error codes (the schema's ErrorCode).
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	codeNotFound       = -32002 // ACP: a resource, such as a session, was not found
)

// rpcError is an error with its JSON-RPC code; data, when set, is sent as
// the error's data.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

// errorf words an error. Its string arguments are most often what the
// client sent (a method, a session id, a field's value), so each is
// quoted at most api.ClipName bytes; an error argument is the writer's
// to bound (fail).
func errorf(code int, format string, args ...any) *rpcError {
	quoted := make([]any, len(args))
	for i, a := range args {
		quoted[i] = a
		if v := reflect.ValueOf(a); v.Kind() == reflect.String {
			quoted[i] = api.Clip(v.String(), api.ClipName)
		}
	}
	return &rpcError{Code: code, Message: fmt.Sprintf(format, quoted...)}
}

// notFound is ACP's "resource not found" for the session id the client
// named, which its data repeats (both quoting at most api.ClipName bytes).
func notFound(id, format string, args ...any) *rpcError {
	e := errorf(codeNotFound, format, args...)
	e.Data = map[string]string{"sessionId": api.Clip(id, api.ClipName)}
	return e
}

// asRPCError maps err onto the wire: an *rpcError as it is, anything else
// as an internal error carrying its text.
func asRPCError(err error) *rpcError {
	var re *rpcError
	if errors.As(err, &re) {
		return re
	}
	return &rpcError{Code: codeInternalError, Message: err.Error()}
}

// message is one frame the client sent, decoded only as far as routing
// needs.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// isCall reports whether m expects a response: it has an id.
func (m *message) isCall() bool { return len(m.ID) > 0 }

// validID reports whether id is one JSON-RPC allows a request to carry: a
// string or a number (null is discouraged, and answered as invalid here).
func validID(id json.RawMessage) bool {
	t := bytes.TrimSpace(id)
	return len(t) > 0 && (t[0] == '"' || t[0] == '-' || (t[0] >= '0' && t[0] <= '9'))
}

// writer frames what gopi sends: responses and notifications, one JSON
// object per line, in the order they are written.
type writer struct {
	out *rpc.Writer
}

func (w writer) send(v any) error {
	return w.out.Encode(v)
}

func (w writer) result(id json.RawMessage, result any) error {
	return w.send(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, result})
}

// fail writes an error response. Whatever the error quotes, the answer
// stays small: its message is cut at api.ClipMessage bytes, data longer
// than that is left out, and an id longer than api.MaxID (decode refuses
// such requests) is not echoed.
func (w writer) fail(id json.RawMessage, err *rpcError) error {
	if !validID(id) || len(id) > api.MaxID {
		id = json.RawMessage("null")
	}
	bounded := *err
	bounded.Message = api.Clip(err.Message, api.ClipMessage)
	if err.Data != nil {
		if data, merr := json.Marshal(err.Data); merr != nil || len(data) > api.ClipMessage {
			bounded.Data = nil
		}
	}
	return w.send(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *rpcError       `json:"error"`
	}{"2.0", id, &bounded})
}

func (w writer) notify(method string, params any) error {
	return w.send(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
}

// read is one record from the input, or the error that ended it.
type read struct {
	rec []byte
	err error
}

// pump reads records from in and hands each to out, asking for the next
// only once the previous one is consumed (a record's buffer is reused by
// the next read). A read of stdin cannot be interrupted: pump exits at the
// end of input or, when it is not reading, once stop closes.
func pump(in rpc.RecordReader, want <-chan struct{}, out chan<- read, stop <-chan struct{}) {
	for {
		select {
		case <-want:
		case <-stop:
			return
		}
		rec, err := in.Next()
		select {
		case out <- read{rec, err}:
		case <-stop:
			return
		}
		var tooLarge *rpc.ErrRecordTooLarge
		if err != nil && !errors.As(err, &tooLarge) {
			return
		}
	}
}

// decode parses one record; a frame that is not a JSON-RPC 2.0 message is
// answered here and decode returns nil.
func (w writer) decode(rec []byte) *message {
	if !json.Valid(rec) {
		_ = w.fail(nil, errorf(codeParseError, "parse error: the line is not valid JSON"))
		return nil
	}
	var m message
	if err := json.Unmarshal(rec, &m); err != nil {
		_ = w.fail(nil, errorf(codeInvalidRequest, "invalid request: a message must be a JSON object"))
		return nil
	}
	if len(m.ID) > api.MaxID {
		// The answer would echo the id whole (JSON-RPC requires it): the
		// request is refused, with id null. A response with such an id
		// answers nothing gopi asked, and is dropped.
		if m.Method != nil {
			_ = w.fail(nil, &rpcError{Code: codeInvalidRequest, Message: "invalid request: " + api.IDTooLong(len(m.ID)).Error()})
		}
		return nil
	}
	if m.Method == nil {
		if m.Result != nil || m.Error != nil {
			// A response, to a request of gopi's: never answered
			// (errors about errors could loop).
			m.ID = bytes.Clone(m.ID)
			m.Result = bytes.Clone(m.Result)
			m.Error = bytes.Clone(m.Error)
			return &m
		}
		_ = w.fail(m.ID, errorf(codeInvalidRequest, `invalid request: a request needs "jsonrpc":"2.0" and a string "method"`))
		return nil
	}
	if m.JSONRPC != "2.0" {
		_ = w.fail(m.ID, errorf(codeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`))
		return nil
	}
	if m.isCall() && !validID(m.ID) {
		_ = w.fail(nil, errorf(codeInvalidRequest, `invalid request: "id" must be a string or a number`))
		return nil
	}
	// The record's buffer is reused by the next read.
	m.ID = bytes.Clone(m.ID)
	m.Params = bytes.Clone(m.Params)
	return &m
}

// isEOF reports whether err is the clean end of the input.
func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// serveLoop reads messages until the input ends or ctx is done, handing
// each decoded one to handle on this goroutine.
func serveLoop(ctx context.Context, in rpc.RecordReader, w writer, handle func(*message)) error {
	want := make(chan struct{})
	got := make(chan read)
	stop := make(chan struct{})
	defer close(stop)
	go pump(in, want, got, stop)
	for {
		select {
		case want <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		var r read
		select {
		case r = <-got:
		case <-ctx.Done():
			return nil
		}
		if r.err != nil {
			var tooLarge *rpc.ErrRecordTooLarge
			if errors.As(r.err, &tooLarge) {
				_ = w.fail(nil, errorf(codeParseError, "parse error: %v", r.err))
				continue
			}
			if isEOF(r.err) {
				return nil
			}
			return fmt.Errorf("reading stdin: %w", r.err)
		}
		if len(bytes.TrimSpace(r.rec)) == 0 {
			continue
		}
		if m := w.decode(r.rec); m != nil {
			handle(m)
		}
	}
}
