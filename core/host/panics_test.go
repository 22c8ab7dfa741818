package host

import (
	"context"
	"iter"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/anthropic"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// panicOnCall is a provider that panics on its nth call and otherwise
// passes calls to the real Anthropic provider.
type panicOnCall struct {
	n        int32 // calls from the nth on panic, while armed
	calls    atomic.Int32
	disarmed atomic.Bool
	real     llm.Provider
}

func (p *panicOnCall) Stream(ctx context.Context, m *llm.Model, r *llm.Request) iter.Seq[llm.StreamEvent] {
	if p.calls.Add(1) >= p.n && !p.disarmed.Load() {
		panic("provider exploded")
	}
	return p.real.Stream(ctx, m, r)
}

func (r *recorder) has(typ string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e.EventType() == typ {
			return true
		}
	}
	return false
}

// Issue 10: a panic during automatic compaction used to kill the process.
// It now ends the compaction with an error, reports the stack, and the
// host keeps serving.
func TestPanicInAutoCompactionIsSurvived(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Text("first answer"),
		llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("second answer")}, Usage: llmtest.Usage{Input: 95000, Output: 10}},
		// calls 3 and on are the compaction's summaries: they panic
	)
	reg, agentDir := newRegistry(t, llm.APIAnthropicMessages, srv.AnthropicURL())
	model, ok := reg.Find("scripted", "scripted-1")
	require.True(t, ok)
	prov := &panicOnCall{n: 3, real: anthropic.New()}
	var reports []error
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	h, err := New(Options{Cwd: t.TempDir(), AgentDir: agentDir, Registry: reg, Model: &model, Thinking: llm.ThinkingOff,
		Providers: Providers{llm.APIAnthropicMessages: prov},
		Settings:  Settings{Compaction: &compaction.Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 1}},
		Report:    func(err error) { <-mu; reports = append(reports, err); mu <- struct{}{} },
	})
	require.NoError(t, err)
	defer func() { _ = h.Close(context.Background()) }()
	rec := &recorder{}
	h.Subscribe(rec.add)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, h.PromptAndWait(ctx, "one", nil))
	require.NoError(t, h.PromptAndWait(ctx, "two", nil))

	assert.True(t, rec.has(api.EventAutoCompactionStart), rec.types())
	var end *api.AutoCompactionEnd
	var internal *api.ExtensionError
	rec.mu.Lock()
	for _, e := range rec.events {
		switch e := e.(type) {
		case api.AutoCompactionEnd:
			end = &e
		case api.ExtensionError:
			internal = &e
		}
	}
	rec.mu.Unlock()
	require.NotNil(t, end, "every auto_compaction_start gets its end")
	assert.Contains(t, end.ErrorMessage, "provider exploded")
	assert.NotContains(t, end.ErrorMessage, "\n", "the stack goes to the report, not to the client")
	require.NotNil(t, internal)
	assert.Equal(t, "gopi", internal.ExtensionPath)
	<-mu
	require.NotEmpty(t, reports)
	assert.Contains(t, reports[len(reports)-1].Error(), "goroutine", "the report carries the stack")
	mu <- struct{}{}

	// The host still serves prompts.
	prov.disarmed.Store(true)
	srv.Push(llmtest.Text("after the panic"))
	require.NoError(t, h.PromptAndWait(ctx, "three", nil))
	text, _ := h.LastAssistantText()
	assert.Equal(t, "after the panic", text)
}

// A panic while restarting after a retry's wait ends the retry properly.
func TestPanicInRetryRestartIsSurvived(t *testing.T) {
	h, rec := newRetryHost(t, llmtest.HTTPError(503, ""), llmtest.Text("later"))
	h.startContinue = func(context.Context) (func(), error) { panic("restart exploded") }
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, h.PromptAndWait(ctx, "try", nil))
	evs := rec.retryEvents()
	require.Len(t, evs, 2)
	end := evs[1].(api.AutoRetryEnd)
	assert.False(t, end.Success)
	assert.Contains(t, end.FinalError, "restart exploded")

	h.startContinue = func(ctx context.Context) (func(), error) { return h.agent.StartContinue(ctx) }
	require.NoError(t, h.PromptAndWait(ctx, "again", nil))
	text, _ := h.LastAssistantText()
	assert.Equal(t, "later", text)
}
