package mcp

import (
	"net/http"
	"sync"
	"time"
)

// connectRetryDelays are the waits before the second and third attempts
// to reach an HTTP server whose first failed for a transient reason
// (pi's 250 ms and 1 s). Stdio servers are started once per attempt.
var connectRetryDelays = []time.Duration{250 * time.Millisecond, time.Second}

// httpOutcome records what the HTTP exchanges of one connection attempt
// ended with, for the SDK reports an HTTP failure in words only.
type httpOutcome struct {
	mu      sync.Mutex
	status  int  // the last error status (400 and above) answered
	network bool // a request failed before any answer
}

// transient reports whether the attempt failed for a reason worth another
// try, as pi judges it: the network, or a server that timed out (408),
// is overloaded (429) or failed (5xx, but 501: it will not learn the
// method).
func (o *httpOutcome) transient() bool {
	if o == nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.status == http.StatusRequestTimeout, o.status == http.StatusTooManyRequests:
		return true
	case o.status >= 500:
		return o.status != http.StatusNotImplemented
	case o.status != 0:
		return false
	}
	return o.network
}

// outcomeTransport records each exchange's outcome in o.
type outcomeTransport struct {
	o    *httpOutcome
	base http.RoundTripper
}

func (t outcomeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	t.o.mu.Lock()
	defer t.o.mu.Unlock()
	switch {
	case err != nil && r.Context().Err() == nil:
		t.o.network = true
	case err == nil && resp.StatusCode >= 400:
		t.o.status = resp.StatusCode
	}
	return resp, err
}

// isStdio reports whether the server runs as a process: its type says so,
// or it has no type and a command.
func (s Server) isStdio() bool {
	return s.Type == TypeStdio || (s.Type == "" && s.Command != "")
}
