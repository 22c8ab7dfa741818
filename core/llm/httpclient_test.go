package llm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRequestHookSeesAndReplacesJSONBodies(t *testing.T) {
	var gotBody, gotHeader string
	var gotLength int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody, gotHeader, gotLength = string(b), r.Header.Get("X-Added"), r.ContentLength
	}))
	defer srv.Close()

	var seen []string
	var statuses []int
	c := WithRequestHook(nil, func(ctx context.Context, body []byte, h http.Header) ([]byte, error) {
		seen = append(seen, string(body))
		h.Set("X-Added", "yes")
		if string(body) == `{"a":1}` {
			return []byte(`{"a":2,"b":true}`), nil
		}
		return nil, nil
	}, func(_ context.Context, status int, _ http.Header) { statuses = append(statuses, status) })

	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"a":1}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, `{"a":2,"b":true}`, gotBody, "the hook's body is sent")
	assert.EqualValues(t, len(gotBody), gotLength, "with its own length")
	assert.Equal(t, "yes", gotHeader)
	assert.Empty(t, req.Header.Get("X-Added"), "the caller's request is not changed")

	// Kept when the hook returns nil.
	req, _ = http.NewRequest("POST", srv.URL, strings.NewReader(`{"keep":1}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err = c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, `{"keep":1}`, gotBody)

	// Not JSON: passed through untouched.
	req, _ = http.NewRequest("POST", srv.URL, strings.NewReader("plain"))
	req.Header.Set("Content-Type", "text/plain")
	resp, err = c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "plain", gotBody)
	assert.Equal(t, []string{`{"a":1}`, `{"keep":1}`}, seen)
	assert.Equal(t, []int{200, 200}, statuses, "answers to the requests it saw")
}

func TestRequestHookErrorFailsTheRequest(t *testing.T) {
	c := WithRequestHook(nil, func(context.Context, []byte, http.Header) ([]byte, error) {
		return nil, io.ErrUnexpectedEOF
	}, nil)
	req, _ := http.NewRequest("POST", "http://127.0.0.1:1", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	_, err := c.Do(req)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}
