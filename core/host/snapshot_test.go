package host

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/core/session"
)

// BenchmarkExtSnapshot is the state gopi gathers for the extension host
// before every hook call, in a session of n turns.
func BenchmarkExtSnapshot(b *testing.B) {
	for _, n := range []int{10, 1000, 5000} {
		b.Run(fmt.Sprint(n, "-turns"), func(b *testing.B) {
			srv := llmtest.New(b)
			reg, agentDir := newRegistry(b, llm.APIAnthropicMessages, srv.AnthropicURL())
			model, _ := reg.Find("scripted", "scripted-1")
			store := session.InMemory(b.TempDir())
			for i := range n {
				u := &llm.UserMessage{Content: llm.Contents{llm.TextContent{Text: fmt.Sprint("question ", i)}}}
				a := &llm.AssistantMessage{Content: llm.Contents{llm.TextContent{Text: "answer"}}, Provider: "scripted", Model: "scripted-1",
					Usage: llm.Usage{Input: 100 + i, Output: 10}, StopReason: llm.StopStop}
				for _, m := range []llm.Message{u, a} {
					if _, err := store.AppendMessage(m); err != nil {
						b.Fatal(err)
					}
				}
			}
			h, err := New(Options{Cwd: b.TempDir(), AgentDir: agentDir, Registry: reg, Model: &model, Store: store})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close(context.Background())
			b.ResetTimer()
			for range b.N {
				_ = h.ext.snapshot()
			}
		})
	}
}

// The context usage extensions see follows the transcript, though it is
// only worked out again when the transcript, the leaf or the model
// changed.
func TestSnapshotUsageFollowsTheTranscript(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("an answer")}, Usage: llmtest.Usage{Input: 5000, Output: 20}})
	reg, agentDir := newRegistry(t, llm.APIAnthropicMessages, srv.AnthropicURL())
	model, _ := reg.Find("scripted", "scripted-1")
	h, err := New(Options{Cwd: t.TempDir(), AgentDir: agentDir, Registry: reg, Model: &model})
	require.NoError(t, err)
	defer h.Close(context.Background())
	usage := func() int {
		u := h.ext.snapshot().Snapshot.ContextUsage
		require.NotNil(t, u)
		require.NotNil(t, u.Tokens)
		return *u.Tokens
	}
	before := usage()
	assert.Equal(t, before, usage(), "the same state, the same answer")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, h.PromptAndWait(ctx, "a question", nil))
	assert.GreaterOrEqual(t, usage(), 5020, "the answer's usage counts once it is in the transcript")
}
