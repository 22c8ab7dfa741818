package llm

import (
	"net/http"
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
