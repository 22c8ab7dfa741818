package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ResponseHeaderTimeout bounds the wait for a provider's response headers
// when a call brings no HTTP client of its own. Streaming APIs send their
// headers as soon as they accept a request, so a server that accepts the
// connection and then says nothing for this long has stalled: the call
// fails with a transport error, which the runtime retries. The body is not
// bounded here: a long reply streams as long as it needs.
const ResponseHeaderTimeout = 5 * time.Minute

// DefaultHTTPClient is the client providers use when llm.Options has none:
// Go's default transport with ResponseHeaderTimeout.
var DefaultHTTPClient = NewHTTPClient(ResponseHeaderTimeout)

// NewHTTPClient is Go's default transport with the given bound on the
// wait for response headers (tests use a short one to provoke a stall).
func NewHTTPClient(headerTimeout time.Duration) *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{Transport: http.DefaultTransport}
	}
	t = t.Clone()
	t.ResponseHeaderTimeout = headerTimeout
	return &http.Client{Transport: t}
}

// RequestHook sees a provider request just before it is sent: its JSON
// body (the provider's own payload) and its headers, which it may change
// in place. A body it returns (non-nil) replaces the request's. An error
// fails the request.
type RequestHook func(ctx context.Context, body []byte, header http.Header) ([]byte, error)

// ResponseHook sees the status and headers of a provider's answer to a
// request RequestHook saw, before its body is read. When the answer is a
// stream of server-sent events it may return onEvent, which then sees the
// data of each event (the provider's JSON, as its SDK is about to parse
// it), in order, before the SDK reads the end of that event: the stream
// waits for it.
type ResponseHook func(ctx context.Context, status int, header http.Header) (onEvent func(data []byte))

// WithRequestHook is base (nil: [DefaultHTTPClient]) with hook applied to
// every request that carries a JSON body (the model calls of every
// provider, whose SDKs all send through the client they are given), and
// onResponse (when not nil) to the answers.
func WithRequestHook(base *http.Client, hook RequestHook, onResponse ResponseHook) *http.Client {
	if base == nil {
		base = DefaultHTTPClient
	}
	c := *base
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = hookTransport{next: next, hook: hook, onResponse: onResponse}
	return &c
}

type hookTransport struct {
	next       http.RoundTripper
	hook       RequestHook
	onResponse ResponseHook
}

func (t hookTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || !strings.Contains(req.Header.Get("Content-Type"), "json") {
		return t.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the request body: %w", err)
	}
	// A RoundTripper must not change the request it was given.
	out := req.Clone(req.Context())
	newBody, err := t.hook(req.Context(), body, out.Header)
	if err != nil {
		return nil, err
	}
	if newBody != nil {
		body = newBody
	}
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	out.Header.Del("Content-Length")
	resp, err := t.next.RoundTrip(out)
	if err == nil && t.onResponse != nil {
		onEvent := t.onResponse(req.Context(), resp.StatusCode, resp.Header)
		if onEvent != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			resp.Body = &sseTap{ReadCloser: resp.Body, onEvent: onEvent}
		}
	}
	return resp, err
}

// maxTapEvent bounds what sseTap keeps of one event; the data of a larger
// one is not shown (the SDK still reads all of it).
const maxTapEvent = 16 << 20

// sseTap passes a server-sent event stream through unchanged and hands
// the data of each event to onEvent as soon as the event's closing blank
// line has been read, before returning those bytes. Only data that is a
// JSON object or array is handed on (not OpenAI's closing "[DONE]").
// Lines end at LF, with a CR before it dropped.
type sseTap struct {
	io.ReadCloser
	onEvent func([]byte)
	line    []byte // the line read so far
	data    []byte // the event's data so far
	over    bool   // the event is larger than maxTapEvent
}

func (t *sseTap) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.scan(p[:n])
	return n, err
}

func (t *sseTap) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			t.keep(b)
			return
		}
		t.keep(b[:i])
		b = b[i+1:]
		t.endLine(bytes.TrimSuffix(t.line, []byte{'\r'}))
		t.line = t.line[:0]
	}
}

func (t *sseTap) keep(b []byte) {
	if len(t.line)+len(b) > maxTapEvent {
		t.over = true
		return
	}
	t.line = append(t.line, b...)
}

func (t *sseTap) endLine(line []byte) {
	if len(line) == 0 {
		if !t.over && len(t.data) > 0 && (t.data[0] == '{' || t.data[0] == '[') && json.Valid(t.data) {
			t.onEvent(bytes.Clone(t.data))
		}
		t.data, t.over = t.data[:0], false
		return
	}
	value, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || t.over {
		return
	}
	value = bytes.TrimPrefix(value, []byte{' '})
	if len(t.data)+len(value) > maxTapEvent {
		t.over = true
		return
	}
	if len(t.data) > 0 {
		t.data = append(t.data, '\n')
	}
	t.data = append(t.data, value...)
}

// CloseIdleConnections passes http.Client.CloseIdleConnections on.
func (t hookTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
