package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// Issue 10: retries follow the HTTP status and the provider's error type.
// A permanent 400 whose body mentions "timeout", "205000" and "529" used
// to be retried three times because the old check matched words.
func TestRPCPermanentErrorWithMisleadingWordsIsNotRetried(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.HTTPError(400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 205000 > 64000; request timeout 529 terminated"}}`),
	)
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"retry": map[string]any{"baseDelayMs": 5}})
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "try"})
	rs := p.idle()
	for _, r := range rs {
		assert.False(t, r.is("auto_retry_start"), "a 400 is permanent whatever its body says\n%s", p.transcript())
	}
	text := p.ok("2", map[string]any{"type": "get_messages"}).(map[string]any)["messages"].([]any)
	last := record(text[len(text)-1].(map[string]any))
	assert.Equal(t, "error", last.str("stopReason"))
	assert.Contains(t, last.str("errorMessage"), "400")
	assert.Len(t, w.srv.Requests(), 1)
	assert.Equal(t, 0, p.exit())
}

// The server's Retry-After travels as a typed field: it sets the delay and
// no longer shows up as a "(retry-after: ...)" note in the error text.
func TestRPCRetryAfterIsTypedNotText(t *testing.T) {
	t.Parallel()
	limited := llmtest.HTTPError(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
	limited.Fault.RetryAfter = "1"
	w := newWorld(t, limited, llmtest.Text("after the wait"))
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"retry": map[string]any{"baseDelayMs": 5}})
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "try"})
	rs := p.until(func(r record) bool { return r.is("auto_retry_start") })
	start := rs[len(rs)-1]
	assert.EqualValues(t, 1000, start["delayMs"])
	assert.NotContains(t, start.str("errorMessage"), "retry-after")
	rs = p.until(func(r record) bool { return r.is("auto_retry_end") })
	assert.Equal(t, true, rs[len(rs)-1]["success"])
	assert.Equal(t, 0, p.exit())
}
