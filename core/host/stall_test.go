package host

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// Issue 10: a provider that accepts the connection and never answers ends
// in a retryable transport error after a bounded wait, on every API. The
// tests shorten the bound through the call's HTTP client; the default
// client every provider falls back on carries the same kind of bound.
func TestStalledProviderEndsInARetryableError(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.api, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Turn{Fault: &llmtest.Fault{StallHeaders: true}})
			t.Cleanup(srv.Release)
			reg, _ := newRegistry(t, d.api, d.base(srv))
			model, ok := reg.Find("scripted", "scripted-1")
			require.True(t, ok)
			prov, err := DefaultProviders().Lookup(d.api)
			require.NoError(t, err)

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var last llm.StreamEvent
			for ev := range prov.Stream(ctx, &model, &llm.Request{
				Messages: []llm.Message{llm.UserText("hello")},
				Options:  llm.Options{APIKey: "k", HTTPClient: llm.NewHTTPClient(150 * time.Millisecond)},
			}) {
				last = ev
			}
			require.NoError(t, ctx.Err(), "the stall was not bounded")
			require.Equal(t, llm.EventError, last.Type)
			msg := last.Partial
			assert.Equal(t, llm.StopError, msg.StopReason)
			require.NotNil(t, msg.Failure, "the stall must be classified: %s", msg.ErrorMessage)
			assert.True(t, msg.Failure.Transient(), msg.ErrorMessage)
		})
	}
}

func TestDefaultHTTPClientBoundsTheWaitForHeaders(t *testing.T) {
	tr, ok := llm.DefaultHTTPClient.Transport.(*http.Transport)
	require.True(t, ok)
	assert.Positive(t, tr.ResponseHeaderTimeout)
}
