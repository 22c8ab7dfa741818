package llm

import (
	"bytes"
	"context"
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
// request RequestHook saw, before its body is read.
type ResponseHook func(ctx context.Context, status int, header http.Header)

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
		t.onResponse(req.Context(), resp.StatusCode, resp.Header)
	}
	return resp, err
}

// CloseIdleConnections passes http.Client.CloseIdleConnections on.
func (t hookTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
