package openai

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// apiCase runs a test against one API family.
type apiCase struct {
	api      string
	provider llm.Provider
}

var apis = []apiCase{
	{llm.APIOpenAICompletions, NewCompletions()},
	{llm.APIOpenAIResponses, NewResponses()},
}

func testModel(api, baseURL string) *llm.Model {
	return &llm.Model{
		ID:            "gpt-test",
		Name:          "GPT Test",
		API:           api,
		Provider:      "openai",
		BaseURL:       baseURL,
		Input:         []string{"text", "image"},
		Cost:          llm.ModelCost{Input: 2, Output: 8, CacheRead: 0.5},
		ContextWindow: 200000,
		MaxTokens:     16000,
	}
}

// run streams one request, checks the event sequence is well formed and
// returns the events and the final message.
func run(t *testing.T, ctx context.Context, p llm.Provider, m *llm.Model, req *llm.Request) ([]llm.StreamEvent, *llm.AssistantMessage) {
	t.Helper()
	evs := collect(p.Stream(ctx, m, req))
	requireWellFormed(t, evs)
	return evs, evs[len(evs)-1].Partial
}

func collect(seq iter.Seq[llm.StreamEvent]) []llm.StreamEvent {
	var evs []llm.StreamEvent
	for ev := range seq {
		evs = append(evs, ev)
	}
	return evs
}

func requireWellFormed(t *testing.T, evs []llm.StreamEvent) {
	t.Helper()
	require.NotEmpty(t, evs)
	require.Equal(t, llm.EventStart, evs[0].Type)
	for i, ev := range evs {
		require.NotNil(t, ev.Partial, "event %d (%s) has no partial", i, ev.Type)
		require.Equal(t, i == len(evs)-1, ev.Terminal(), "event %d (%s)", i, ev.Type)
	}
}

func userReq(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{llm.UserText(text)}, Options: llm.Options{APIKey: "sk-test"}}
}

// types lists the event types of evs.
func types(evs []llm.StreamEvent) []llm.StreamEventType {
	out := make([]llm.StreamEventType, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// deltas joins the deltas of one type.
func deltas(evs []llm.StreamEvent, typ llm.StreamEventType) string {
	s := ""
	for _, ev := range evs {
		if ev.Type == typ {
			s += ev.Delta
		}
	}
	return s
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestEnvironmentIsIgnored(t *testing.T) {
	decoy := llmtest.New(t) // would answer 500 "no scripted turn left"
	t.Setenv("OPENAI_BASE_URL", decoy.OpenAIURL())
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_ADMIN_KEY", "sk-admin-from-env")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	t.Setenv("OPENAI_PROJECT_ID", "proj-from-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-From-Env: leaked")
	for _, tc := range apis {
		t.Run(tc.api, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Text("hi"))
			req := userReq("hello")
			req.Options.APIKey = ""
			req.Options.HTTPClient = srv.Client()
			_, msg := run(t, context.Background(), tc.provider, testModel(tc.api, srv.OpenAIURL()), req)
			require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
			assert.Equal(t, "hi", msg.Content.Text())
			h := srv.LastRequest(t).Header
			assert.Empty(t, h.Get("Authorization"))
			assert.Empty(t, h.Get("OpenAI-Organization"))
			assert.Empty(t, h.Get("OpenAI-Project"))
			assert.Empty(t, h.Get("X-From-Env"))
		})
	}
	assert.Empty(t, decoy.Requests())
}

func TestHeadersAndKeyReachServer(t *testing.T) {
	for _, tc := range apis {
		t.Run(tc.api, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Text("ok"))
			m := testModel(tc.api, srv.OpenAIURL())
			m.Headers = map[string]string{"X-Model": "model", "X-Both": "model"}
			req := userReq("hello")
			req.Options.Headers = map[string]string{"X-Both": "call", "X-Call": "call"}
			req.Options.HTTPClient = srv.Client()
			_, msg := run(t, context.Background(), tc.provider, m, req)
			require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
			r := srv.LastRequest(t)
			assert.Equal(t, "Bearer sk-test", r.Header.Get("Authorization"))
			assert.Equal(t, "model", r.Header.Get("X-Model"))
			assert.Equal(t, "call", r.Header.Get("X-Both"))
			assert.Equal(t, "call", r.Header.Get("X-Call"))
			assert.Equal(t, http.MethodPost, r.Method)
			assert.Equal(t, true, r.JSON()["stream"])
			assert.Equal(t, "gpt-test", r.JSON()["model"])
		})
	}
}

func TestHTTPErrorsKeepStatusAndBody(t *testing.T) {
	for _, tc := range apis {
		t.Run(tc.api, func(t *testing.T) {
			srv := llmtest.New(t,
				llmtest.HTTPError(429, ""),
				llmtest.HTTPError(500, "upstream exploded"),
			)
			m := testModel(tc.api, srv.OpenAIURL())
			req := userReq("hello")
			req.Options.HTTPClient = srv.Client()

			_, msg := run(t, context.Background(), tc.provider, m, req)
			assert.Equal(t, llm.StopError, msg.StopReason)
			assert.Regexp(t, `^429 \{"error":\{"message":"Rate limit reached.*"code":"rate_limit_exceeded"\}\}$`, msg.ErrorMessage)
			require.Len(t, srv.Requests(), 1, "the SDK must not retry")

			_, msg = run(t, context.Background(), tc.provider, m, req)
			assert.Equal(t, llm.StopError, msg.StopReason)
			assert.Equal(t, "500 upstream exploded", msg.ErrorMessage)
			assert.Len(t, srv.Requests(), 2, "the SDK must not retry")
		})
	}
}

func TestCutStreamIsAnError(t *testing.T) {
	for _, tc := range apis {
		t.Run(tc.api, func(t *testing.T) {
			turn := llmtest.Text("this reply will be cut short")
			turn.Fault = &llmtest.Fault{CutAfter: 4}
			srv := llmtest.New(t, turn)
			req := userReq("hello")
			req.Options.HTTPClient = srv.Client()
			_, msg := run(t, context.Background(), tc.provider, testModel(tc.api, srv.OpenAIURL()), req)
			assert.Equal(t, llm.StopError, msg.StopReason)
			assert.NotEmpty(t, msg.ErrorMessage)
		})
	}
}

func TestStallThenCancelAbortsPromptly(t *testing.T) {
	for _, tc := range apis {
		t.Run(tc.api, func(t *testing.T) {
			turn := llmtest.Text("a reply that never finishes")
			turn.Fault = &llmtest.Fault{StallAfter: 5}
			srv := llmtest.New(t, turn)
			req := userReq("hello")
			req.Options.HTTPClient = srv.Client()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			var evs []llm.StreamEvent
			var cancelledAt time.Time
			for ev := range tc.provider.Stream(ctx, testModel(tc.api, srv.OpenAIURL()), req) {
				evs = append(evs, ev)
				if ev.Type == llm.EventTextDelta && cancelledAt.IsZero() {
					cancelledAt = time.Now()
					cancel()
				}
			}
			requireWellFormed(t, evs)
			require.False(t, cancelledAt.IsZero(), "no text arrived before the stall")
			assert.Less(t, time.Since(cancelledAt), 2*time.Second)
			last := evs[len(evs)-1]
			assert.Equal(t, llm.EventError, last.Type)
			assert.Equal(t, llm.StopAborted, last.Reason)
			assert.Equal(t, llm.StopAborted, last.Partial.StopReason)
			assert.Equal(t, "Request was aborted", last.Partial.ErrorMessage)
		})
	}
}

func TestConsumerStoppingEarlyReleasesStream(t *testing.T) {
	for _, tc := range apis {
		t.Run(tc.api, func(t *testing.T) {
			turn := llmtest.Text("a long reply the consumer walks away from")
			srv := llmtest.New(t, turn)
			req := userReq("hello")
			req.Options.HTTPClient = srv.Client()
			ctx, cancel := context.WithCancel(context.Background())
			n := 0
			for ev := range tc.provider.Stream(ctx, testModel(tc.api, srv.OpenAIURL()), req) {
				n++
				if ev.Type == llm.EventTextDelta {
					break
				}
			}
			cancel()
			assert.Greater(t, n, 1)
		})
	}
}

func TestNoRequestIsAnErrorEvent(t *testing.T) {
	for _, tc := range apis {
		evs := collect(tc.provider.Stream(context.Background(), testModel(tc.api, "http://127.0.0.1:1"), nil))
		requireWellFormed(t, evs)
		assert.Equal(t, llm.EventError, evs[len(evs)-1].Type)
	}
}

func TestShortHashMatchesPi(t *testing.T) {
	// Values computed with pi's shortHash (pi-ai utils/hash.ts).
	assert.Equal(t, "1qaoofs1vxahbg", shortHash("fc_abc"))
	assert.Equal(t, "23b43511v75lg", shortHash("héllo👋"))
}
