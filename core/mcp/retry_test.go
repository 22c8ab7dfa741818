package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flakyServer is an MCP server over streamable HTTP whose first failures
// requests are answered with status instead; posts counts the requests
// posted.
func flakyServer(t *testing.T, status, failures int) (url string, posts *atomic.Int32) {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "flaky", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ping"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	posts = &atomic.Int32{}
	var failed atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
			if failed.Load() < int32(failures) {
				failed.Add(1)
				http.Error(w, "not now", status)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL, posts
}

// An HTTP server that keeps failing for a transient reason is tried
// twice more (pi's rule); one that fails for another reason is not; one
// that recovers in time connects.
func TestHTTPConnectRetries(t *testing.T) {
	saved := connectRetryDelays
	t.Cleanup(func() { connectRetryDelays = saved })
	// posts is how many requests the server saw, given delays.
	posts := func(t *testing.T, status, failures int, delays []time.Duration) (State, int32) {
		connectRetryDelays = delays
		url, n := flakyServer(t, status, failures)
		m, _ := start(t, map[string]Server{"h": {URL: url, Exposure: ExposureDirect}})
		return m.Statuses()[0].State, n.Load()
	}
	for _, tc := range []struct {
		status    int
		transient bool
	}{
		{http.StatusServiceUnavailable, true},
		{http.StatusTooManyRequests, true},
		{http.StatusRequestTimeout, true},
		{http.StatusBadGateway, true},
		{http.StatusNotImplemented, false},
		{http.StatusForbidden, false},
		{http.StatusNotFound, false},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			state, once := posts(t, tc.status, 1000, nil)
			require.Equal(t, StateFailed, state)
			state, n := posts(t, tc.status, 1000, []time.Duration{time.Millisecond, time.Millisecond})
			require.Equal(t, StateFailed, state)
			if tc.transient {
				assert.Equal(t, 3*once, n, "three attempts")
				state, _ = posts(t, tc.status, int(2*once), []time.Duration{time.Millisecond, time.Millisecond})
				assert.Equal(t, StateConnected, state, "the third attempt gets through")
			} else {
				assert.Equal(t, once, n, "one attempt")
			}
		})
	}
}

// Nothing listening is a network failure: three attempts, then failed.
func TestHTTPConnectRetriesNetworkErrors(t *testing.T) {
	saved := connectRetryDelays
	connectRetryDelays = []time.Duration{time.Millisecond, time.Millisecond}
	t.Cleanup(func() { connectRetryDelays = saved })
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close()
	o := &httpOutcome{}
	client := &http.Client{Transport: outcomeTransport{o: o, base: http.DefaultTransport}}
	_, err := client.Post(url, "application/json", nil)
	require.Error(t, err)
	assert.True(t, o.transient())

	m, _ := start(t, map[string]Server{"gone": {URL: url, Exposure: ExposureDirect}})
	assert.Equal(t, StateFailed, m.Statuses()[0].State)
}
