// Package llmtest is a scripted model server for tests, in the spirit of
// net/http/httptest. It speaks the streaming wire formats of Anthropic
// Messages, OpenAI Chat Completions, OpenAI Responses and Google Generative
// AI, so provider code is exercised through the real SDKs.
//
// Create one with [New], queue [Turn]s with [Server.Push], point a model's
// baseUrl at [Server.URL] (or the dialect-specific helpers), and read what
// the client sent with [Server.Requests]. Each HTTP request consumes the
// next turn, whatever its dialect. Turns split their deltas and the raw SSE
// bytes at awkward boundaries, and [Fault]s inject HTTP errors, cut
// streams and stalls.
package llmtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// Turn is one scripted model reply, in provider-neutral terms.
type Turn struct {
	// Blocks are the reply's content, in order.
	Blocks []Block
	// StopReason is the neutral reason ("stop", "length", "toolUse");
	// empty means toolUse when a block is a tool call, else stop.
	StopReason string
	// Usage is reported at the end of the stream (and, for Anthropic,
	// input/cache counts at its start).
	Usage Usage
	// ChunkSize splits every delta (text, thinking, tool-argument JSON) into
	// pieces of at most this many bytes, never inside a UTF-8 rune.
	// Zero means 3.
	ChunkSize int
	// WriteSize flushes the raw response body in writes of this many bytes,
	// so SSE events arrive split across reads. Zero means one write per
	// event.
	WriteSize int
	// Burst sends the events back to back, flushing only when 64 KiB have
	// gathered (and at the end), the way a fast server behind a buffering
	// proxy does: the client's cost per event is then measured, not the
	// server's. Ignored with WriteSize or a Fault.
	Burst bool
	// Fault makes the turn fail.
	Fault *Fault
	// ResponseID is the provider's id for the response; defaults to
	// "resp_<n>".
	ResponseID string
}

// Block is one content block of a [Turn].
type Block struct {
	Kind      BlockKind
	Text      string // text, thinking
	Signature string // thinking signature / reasoning item encrypted content
	Redacted  bool   // thinking withheld by the provider
	ID        string // tool call id
	Name      string // tool name
	Args      string // tool arguments JSON, sent as deltas
}

// BlockKind says what a [Block] is.
type BlockKind string

const (
	KindText     BlockKind = "text"
	KindThinking BlockKind = "thinking"
	KindToolCall BlockKind = "toolCall"
)

// Usage is the token accounting a turn reports.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int
}

// Fault describes how a turn fails.
type Fault struct {
	// Status, if non-zero, answers with this HTTP status and Body instead
	// of a stream (429, 500, 529 ...).
	Status int
	Body   string
	// RetryAfter sets the Retry-After header of a Status answer.
	RetryAfter string
	// CutAfter closes the connection abruptly after this many SSE events
	// (0 means not cut; use Cut for "cut before any event").
	CutAfter int
	// Cut closes the connection after CutAfter events even when CutAfter
	// is 0.
	Cut bool
	// StallAfter holds the stream open after this many events until the
	// request context ends or [Server.Release] is called. Negative means
	// no stall.
	StallAfter int
	Stall      bool
	// StallHeaders accepts the request and then sends nothing at all, not
	// even the response headers, until the request context ends or
	// [Server.Release] is called: a provider that hung.
	StallHeaders bool
	// Raw, when set, is written as is after RawAfter events and the
	// stream then ends: an error event as a provider or gateway sends it
	// inside a 200 stream ("event: error\ndata: {...}\n\n").
	Raw      string
	RawAfter int
}

// Text is a turn that answers with text.
func Text(s string) Turn { return Turn{Blocks: []Block{{Kind: KindText, Text: s}}} }

// ToolCalls is a turn that calls tools.
func ToolCalls(calls ...Block) Turn { return Turn{Blocks: calls} }

// Call is a tool call block.
func Call(id, name, args string) Block {
	return Block{Kind: KindToolCall, ID: id, Name: name, Args: args}
}

// Thinking is a thinking block.
func Thinking(text, signature string) Block {
	return Block{Kind: KindThinking, Text: text, Signature: signature}
}

// Say is a text block.
func Say(s string) Block { return Block{Kind: KindText, Text: s} }

// HTTPError is a turn that fails with an HTTP status.
func HTTPError(status int, body string) Turn {
	return Turn{Fault: &Fault{Status: status, Body: body}}
}

// Request is what a client sent.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// JSON decodes the request body into a generic map.
func (r Request) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Server is a scripted model server.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex // guards turns, requests, n, release
	turns    []Turn
	requests []Request
	n        int
	release  chan struct{}
}

// New starts a server that plays turns in order. It is closed when the test
// ends.
func New(t testing.TB, turns ...Turn) *Server {
	s := &Server{turns: turns, release: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	if t != nil {
		t.Cleanup(s.Close)
	}
	return s
}

// Close shuts the server down, releasing any stalled stream.
func (s *Server) Close() {
	s.Release()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// URL is the server's root, e.g. http://127.0.0.1:port.
func (s *Server) URL() string { return s.srv.URL }

// Client is an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Push queues more turns.
func (s *Server) Push(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

// Pending is the number of turns not yet played.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns)
}

// Release lets every stalled stream continue.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.release:
	default:
		close(s.release)
	}
}

// Requests returns a copy of every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// LastRequest returns the most recent request; it fails the test if none.
func (s *Server) LastRequest(t testing.TB) Request {
	t.Helper()
	rs := s.Requests()
	if len(rs) == 0 {
		t.Fatal("llmtest: no request received")
	}
	return rs[len(rs)-1]
}

// dialect writes one turn in one API's wire format.
type dialect interface {
	// match reports whether the request path belongs to the dialect.
	match(path string) bool
	// events renders the turn as SSE events (already framed, each ending
	// in a blank line).
	events(t *Turn, n int, model string) [][]byte
	// errorBody wraps a fault body the way the API does when Body is empty.
	errorBody(status int) string
}

// dialects is filled by the dialect files of this package.
var dialects []dialect

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	var turn Turn
	ok := len(s.turns) > 0
	if ok {
		turn = s.turns[0]
		s.turns = s.turns[1:]
		s.n++
	}
	n := s.n
	release := s.release
	s.mu.Unlock()

	var d dialect
	for _, cand := range dialects {
		if cand.match(r.URL.Path) {
			d = cand
			break
		}
	}
	if d == nil {
		http.Error(w, fmt.Sprintf("llmtest: no dialect serves %s", r.URL.Path), http.StatusNotFound)
		return
	}
	if !ok {
		http.Error(w, `{"error":{"message":"llmtest: no scripted turn left"}}`, http.StatusInternalServerError)
		return
	}
	if f := turn.Fault; f != nil && f.StallHeaders {
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return
	}
	if f := turn.Fault; f != nil && f.Status != 0 {
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.Status)
		b := f.Body
		if b == "" {
			b = d.errorBody(f.Status)
		}
		_, _ = io.WriteString(w, b)
		return
	}
	var model string
	var m map[string]any
	if json.Unmarshal(body, &m) == nil {
		model, _ = m["model"].(string)
	}
	evs := d.events(&turn, n, model)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	write := func(b []byte) bool {
		size := turn.WriteSize
		if size <= 0 {
			size = len(b)
		}
		for len(b) > 0 {
			k := min(size, len(b))
			if _, err := w.Write(b[:k]); err != nil {
				return false
			}
			if flusher != nil {
				flusher.Flush()
			}
			b = b[k:]
		}
		return true
	}
	if turn.Burst && turn.WriteSize <= 0 && turn.Fault == nil {
		bw := bufio.NewWriterSize(w, 64<<10)
		for _, ev := range evs {
			if _, err := bw.Write(ev); err != nil {
				return
			}
		}
		_ = bw.Flush()
		return
	}
	for i, ev := range evs {
		if f := turn.Fault; f != nil {
			if f.Raw != "" && i == f.RawAfter {
				write([]byte(f.Raw))
				return
			}
			if (f.Cut || f.CutAfter > 0) && i == f.CutAfter {
				abort(w)
				return
			}
			if (f.Stall || f.StallAfter > 0) && i == f.StallAfter {
				select {
				case <-r.Context().Done():
					return
				case <-release:
				}
			}
		}
		if !write(ev) {
			return
		}
	}
	if f := turn.Fault; f != nil && (f.Cut || f.CutAfter > 0) && f.CutAfter >= len(evs) {
		abort(w)
	}
}

// abort drops the connection without finishing the chunked body, the way a
// proxy or a crashed server does.
func abort(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// chunks splits s into pieces of at most size bytes on rune boundaries.
func chunks(s string, size int) []string {
	if size <= 0 {
		size = 3
	}
	if s == "" {
		return nil
	}
	var out []string
	for len(s) > 0 {
		k := min(size, len(s))
		for k < len(s) && !utf8.RuneStart(s[k]) {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// sse frames one event. name may be empty (data-only events).
func sse(name string, data any) []byte {
	var b bytes.Buffer
	if name != "" {
		b.WriteString("event: ")
		b.WriteString(name)
		b.WriteByte('\n')
	}
	var raw []byte
	switch v := data.(type) {
	case string:
		raw = []byte(v)
	case []byte:
		raw = v
	default:
		raw, _ = json.Marshal(v)
	}
	b.WriteString("data: ")
	b.Write(raw)
	b.WriteString("\n\n")
	return b.Bytes()
}

// stopReason resolves a turn's neutral stop reason.
func (t *Turn) stopReason() string {
	if t.StopReason != "" {
		return t.StopReason
	}
	for _, b := range t.Blocks {
		if b.Kind == KindToolCall {
			return "toolUse"
		}
	}
	return "stop"
}

func (t *Turn) responseID(n int) string {
	if t.ResponseID != "" {
		return t.ResponseID
	}
	return fmt.Sprintf("resp_%d", n)
}

// ReadSSE parses an SSE body into (event, data) pairs; tests of this
// package and recorded-stream tests use it.
func ReadSSE(ctx context.Context, r io.Reader) ([][2]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var out [][2]string
	var name string
	var data strings.Builder
	for sc.Scan() {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() > 0 || name != "" {
				out = append(out, [2]string{name, data.String()})
			}
			name = ""
			data.Reset()
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	return out, sc.Err()
}

// Recorded serves a recorded SSE stream (a testdata file) for every
// request, for provider tests against captured traffic.
func Recorded(t testing.TB, body []byte) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// RecordedClient answers every request with a recorded SSE stream without
// a network, so a benchmark times the provider and not the loopback.
func RecordedClient(body []byte) *http.Client {
	return &http.Client{Transport: recordedTransport(body)}
}

type recordedTransport []byte

func (b recordedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		Status:     "200 OK",
		StatusCode: http.StatusOK,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(b)),
		Request:    r,
	}, nil
}
