package lspbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/rpc"
)

// stream is the jsonrpc2.Stream gopi serves on. jsonrpc2's own streams end
// the connection at the first bad header or unparsable body; this one
// answers such a frame with an error response (id null) and reads on. And
// a read of stdin cannot be interrupted, so reading happens on a pump
// goroutine and Close never waits for it: shutdown does not depend on the
// client writing or closing anything.
type stream struct {
	out *rpc.Writer
	// ended is called once, when the input ends or fails: the client will
	// send nothing more.
	ended func(error)
	// wrote is called after each message is written.
	wrote func(msg []byte)

	want   chan struct{} // asks the pump for the next record
	got    chan read     // the pump's answer
	closed chan struct{} // closed by Close

	closeOnce sync.Once
	endOnce   sync.Once

	// batch tells whether the frame ReadFrame returned last is a batch.
	// Only the read path sets it; a handler reads it before it calls
	// jsonrpc2.Async, while the read path waits for that release.
	batch bool
}

type read struct {
	rec []byte
	err error
}

// ReadFrame and WriteFrame let jsonrpc2 read whole frames (and so accept
// batches) and write batch answers as one frame. Nothing depends on the
// library calling them: Read and Write stand on their own, and both write
// paths report what they wrote to the bridge, which recognises responses
// by decoding them (bridge.wrote).
var _ interface {
	jsonrpc2.Stream
	ReadFrame(ctx context.Context) ([]byte, int64, error)
	WriteFrame(ctx context.Context, data []byte) (int64, error)
} = (*stream)(nil)

func newStream(in rpc.RecordReader, out *rpc.Writer, ended func(error), wrote func([]byte)) *stream {
	s := &stream{
		out:    out,
		ended:  ended,
		wrote:  wrote,
		want:   make(chan struct{}),
		got:    make(chan read),
		closed: make(chan struct{}),
	}
	go s.pump(in)
	return s
}

// pump reads one record each time it is asked, so the record's buffer
// stays valid until the next ReadFrame (jsonrpc2 borrows it until then).
// It exits at the end of input, or when the stream is closed while it is
// not reading; a read in progress holds it until the input yields.
func (s *stream) pump(in rpc.RecordReader) {
	for {
		select {
		case <-s.want:
		case <-s.closed:
			return
		}
		rec, err := in.Next()
		select {
		case s.got <- read{rec, err}:
		case <-s.closed:
			return
		}
		if err != nil && !recoverable(err) {
			return
		}
	}
}

// recoverable reports read errors after which the next frame can still be
// read: the reader has skipped past the bad one.
func recoverable(err error) bool {
	var tooLarge *rpc.ErrRecordTooLarge
	var badHeader *rpc.ErrBadHeader
	return errors.As(err, &tooLarge) || errors.As(err, &badHeader)
}

// ReadFrame returns the next frame that jsonrpc2 can use. Frames it would
// choke on (and end the connection over) are answered here: bad headers,
// oversized frames and unparsable JSON with -32700 and id null; objects
// that are not JSON-RPC 2.0 messages with -32600.
func (s *stream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	for {
		select {
		case s.want <- struct{}{}:
		case <-s.closed:
			return nil, 0, io.EOF
		}
		var r read
		select {
		case r = <-s.got:
		case <-s.closed:
			return nil, 0, io.EOF
		}
		if r.err != nil {
			if recoverable(r.err) {
				s.reject(nil, jsonrpc2.ParseError, r.err.Error())
				continue
			}
			s.endOnce.Do(func() { s.ended(r.err) })
			return nil, 0, r.err
		}
		if s.usable(r.rec) {
			t := bytes.TrimSpace(r.rec)
			s.batch = len(t) > 0 && t[0] == '['
			return r.rec, int64(len(r.rec)), nil
		}
	}
}

// usable checks a frame body and answers the ones jsonrpc2 cannot take.
func (s *stream) usable(body []byte) bool {
	if !json.Valid(body) {
		s.reject(nil, jsonrpc2.ParseError, "parse error: the frame is not valid JSON")
		return false
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		// A batch: jsonrpc2 answers bad members itself, but would echo
		// a member's id whole.
		var members []struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(body, &members) == nil {
			for _, m := range members {
				if len(m.ID) > api.MaxID {
					s.reject(nil, jsonrpc2.InvalidRequest, "invalid request: a request of the batch: "+api.IDTooLong(len(m.ID)).Error())
					return false
				}
			}
		}
		return true
	}
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	// Only a frame with a null somewhere can have a null id: others skip
	// the extra decode (a prompt may carry megabytes of images).
	probed := bytes.Contains(body, []byte("null")) && json.Unmarshal(body, &probe) == nil
	if probed && probe.Method != nil && string(bytes.TrimSpace(probe.ID)) == "null" {
		// JSON-RPC 2.0 discourages a null id, and jsonrpc2 would take the
		// request for a notification and never answer it. It is answered,
		// with id null, so the client is not left waiting.
		s.reject(nil, jsonrpc2.InvalidRequest, `invalid request: "id" must be a string or a number, not null (leave it out to send a notification)`)
		return false
	}
	msg, err := jsonrpc2.DecodeMessage(body)
	if err == nil {
		if call, ok := msg.(*jsonrpc2.Call); ok {
			// Its answer would echo the id whole (JSON-RPC requires it):
			// an id longer than api.MaxID is refused, with id null.
			if id, ok := call.ID().StringValue(); ok && len(id)+2 > api.MaxID {
				s.reject(nil, jsonrpc2.InvalidRequest, "invalid request: "+api.IDTooLong(len(id)+2).Error())
				return false
			}
		}
		return true
	}
	if !probed && json.Unmarshal(body, &probe) != nil {
		s.reject(nil, jsonrpc2.InvalidRequest, "invalid request: a message must be a JSON object")
		return false
	}
	if probe.Method == nil && (probe.Result != nil || probe.Error != nil) {
		// A malformed response: answering it could start a loop of errors
		// about errors, so it is dropped.
		return false
	}
	s.reject(probe.ID, jsonrpc2.InvalidRequest,
		`invalid request: a request needs "jsonrpc":"2.0", a string "method" and a string or number "id"`)
	return false
}

// reject writes an error response for a frame that never became a request.
func (s *stream) reject(id json.RawMessage, code jsonrpc2.Code, msg string) {
	idText := "null"
	if t := bytes.TrimSpace(id); len(t) > 0 && len(t) <= api.MaxID && (t[0] == '"' || t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) {
		idText = string(t)
	}
	m, _ := marshal(api.Clip(msg, api.ClipMessage))
	_ = s.out.WriteRecord(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, idText, code, m))
}

// Read is jsonrpc2.Stream's message-level read; jsonrpc2 prefers
// ReadFrame, and this serves anyone else.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	frame, n, err := s.ReadFrame(ctx)
	if err != nil {
		return nil, n, err
	}
	msg, err := jsonrpc2.DecodeMessage(frame)
	return msg, n, err
}

func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	b, err := jsonrpc2.EncodeMessage(msg)
	if err != nil {
		return 0, err
	}
	return s.WriteFrame(ctx, b)
}

func (s *stream) WriteFrame(_ context.Context, data []byte) (int64, error) {
	if err := s.out.WriteRecord(data); err != nil {
		return 0, err
	}
	if s.wrote != nil {
		s.wrote(data)
	}
	return int64(len(data)), nil
}

// Close stops reading without waiting for a read in progress; the input
// itself is left to its owner.
func (s *stream) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	s.endOnce.Do(func() { s.ended(io.EOF) })
	return nil
}
