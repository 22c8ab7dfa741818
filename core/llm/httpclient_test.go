package llm

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

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
	}, func(_ context.Context, status int, _ http.Header) func([]byte) {
		statuses = append(statuses, status)
		return nil
	})

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

// The tap hands on each event's JSON data once its blank line is read,
// before the reader gets those bytes, and changes nothing it passes on.
func TestSSETapSeesEachEventBeforeTheReader(t *testing.T) {
	stream := ": keep-alive\n" +
		"event: message_start\r\n" +
		"data: {\"type\":\"message_start\"}\r\n\r\n" +
		"data: {\"a\":\n" +
		"data: 1}\n\n" +
		"id: 7\ndata:[2,3]\n\n" +
		"data: [DONE]\n\n" +
		"data: {\"cut\":true}" // no blank line: never complete
	var consumed int
	var got []string
	var seenAt []int
	tap := &sseTap{ReadCloser: io.NopCloser(iotest.OneByteReader(strings.NewReader(stream))), onEvent: func(b []byte) {
		got = append(got, string(b))
		seenAt = append(seenAt, consumed)
	}}
	var out bytes.Buffer
	buf := make([]byte, 1)
	for {
		n, err := tap.Read(buf)
		out.Write(buf[:n])
		consumed += n
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	assert.Equal(t, stream, out.String(), "the stream passes unchanged")
	assert.Equal(t, []string{`{"type":"message_start"}`, "{\"a\":\n1}", `[2,3]`}, got, "JSON data only, multi-line data joined")
	for i, end := range []string{"}\r\n\r\n", "1}\n\n", "3]\n\n"} {
		at := strings.Index(stream, end) + len(end)
		assert.Less(t, seenAt[i], at, "event %d is seen before the reader has its last byte", i)
	}
}

// Only a streamed answer is tapped, and only when the hook asks.
func TestResponseHookTapsEventStreams(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = io.WriteString(w, "data: {\"n\":1}\n\n")
	}))
	defer srv.Close()
	var got []string
	c := WithRequestHook(nil, func(context.Context, []byte, http.Header) ([]byte, error) { return nil, nil },
		func(context.Context, int, http.Header) func([]byte) {
			return func(b []byte) { got = append(got, string(b)) }
		})
	for _, path := range []string{"/stream", "/json"} {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	assert.Equal(t, []string{`{"n":1}`}, got)
}
