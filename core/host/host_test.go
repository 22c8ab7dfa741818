package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/core/models"
	"github.com/gopi-dev/gopi/core/session"
	"github.com/gopi-dev/gopi/core/tools"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Started at package load by a dependency of the genai SDK.
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

// dialects are the API families exercised end to end, with the base URL
// each SDK expects from the scripted server.
var dialects = []struct {
	api  string
	base func(*llmtest.Server) string
}{
	{llm.APIAnthropicMessages, (*llmtest.Server).AnthropicURL},
	{llm.APIOpenAICompletions, (*llmtest.Server).OpenAIURL},
	{llm.APIOpenAIResponses, (*llmtest.Server).OpenAIURL},
	{llm.APIGoogleGenerativeAI, (*llmtest.Server).GoogleURL},
}

// newRegistry writes a models.json declaring one model of api served by
// srv, the way a user adds a custom provider.
func newRegistry(t testing.TB, api, baseURL string) (*models.Registry, string) {
	t.Helper()
	agentDir := t.TempDir()
	cfg := map[string]any{"providers": map[string]any{
		"scripted": map[string]any{
			"baseUrl": baseURL, "api": api, "apiKey": "test-key",
			"models": []any{map[string]any{
				"id": "scripted-1", "name": "Scripted", "reasoning": true, "input": []string{"text", "image"},
				"contextWindow": 100000, "maxTokens": 8000,
				"cost": map[string]any{"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
			}},
		},
	}}
	b, _ := json.Marshal(cfg)
	require.NoError(t, os.WriteFile(filepath.Join(agentDir, "models.json"), b, 0o644))
	reg, err := models.Load(models.Options{AgentDir: agentDir, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	return reg, agentDir
}

type recorder struct {
	mu     sync.Mutex
	events []api.Event
}

func (r *recorder) add(ev api.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.EventType() != string(agent.EventMessageUpdate) && e.EventType() != string(agent.EventToolExecutionUpdate) {
			out = append(out, e.EventType())
		}
	}
	return out
}

// TestConversationThroughEachDialect runs a multi-turn, tool-using
// conversation with parallel tool calls through every API family's real
// SDK against the scripted server, and checks events, tool effects, what
// reached the model, and the session file.
func TestConversationThroughEachDialect(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.api, func(t *testing.T) {
			cwd := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("alpha\nbeta\n"), 0o644))

			srv := llmtest.New(t,
				// Turn 1: two tool calls in one message, arguments split at
				// awkward places, the SSE bytes flushed 5 at a time.
				llmtest.Turn{Blocks: []llmtest.Block{
					llmtest.Say("Let me look."),
					llmtest.Call("call_1", "read", `{"path":"notes.txt"}`),
					llmtest.Call("call_2", "bash", `{"command":"echo parallel-ok"}`),
				}, ChunkSize: 2, WriteSize: 5, Usage: llmtest.Usage{Input: 100, Output: 20}},
				llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("notes has alpha and beta; bash said parallel-ok")}, Usage: llmtest.Usage{Input: 150, Output: 12}},
				// Second prompt.
				llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("done ✓")}, ChunkSize: 1},
			)
			reg, agentDir := newRegistry(t, d.api, d.base(srv))
			model, ok := reg.Find("scripted", "scripted-1")
			require.True(t, ok)
			ts, err := tools.ByName(cwd, []string{"read", "bash"})
			require.NoError(t, err)
			store, err := session.Create(session.DefaultDir(agentDir, cwd), cwd, session.Options{})
			require.NoError(t, err)

			h, err := New(Options{Cwd: cwd, AgentDir: agentDir, Registry: reg, Tools: ts, Model: &model, Thinking: llm.ThinkingOff, Store: store})
			require.NoError(t, err)
			rec := &recorder{}
			h.Subscribe(rec.add)

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			require.NoError(t, h.Run(ctx, "what is in notes.txt?", nil))
			require.NoError(t, h.Run(ctx, "thanks", nil))

			text, ok := h.LastAssistantText()
			require.True(t, ok)
			assert.Equal(t, "done ✓", text)

			assert.Equal(t, []string{
				"agent_start", "turn_start", "message_start", "message_end", // user
				"message_start", "message_end", // assistant with two calls
				"tool_execution_start", "tool_execution_start", "tool_execution_end", "tool_execution_end",
				"message_start", "message_end", "message_start", "message_end", // two tool results
				"turn_end", "turn_start", "message_start", "message_end", "turn_end", "agent_end",
				"agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "turn_end", "agent_end",
			}, normaliseToolOrder(rec.types()))

			// Tool results reached the model in call order, with real output.
			msgs := h.Agent().Messages()
			var results []*llm.ToolResultMessage
			for _, m := range msgs {
				if tr, ok := m.(*llm.ToolResultMessage); ok {
					results = append(results, tr)
				}
			}
			require.Len(t, results, 2)
			assert.True(t, strings.HasPrefix(results[0].ToolCallID, "call_1"), results[0].ToolCallID)
			assert.Contains(t, results[0].Content.Text(), "alpha")
			assert.True(t, strings.HasPrefix(results[1].ToolCallID, "call_2"), results[1].ToolCallID)
			assert.Contains(t, results[1].Content.Text(), "parallel-ok")
			assert.False(t, results[1].IsError)

			reqs := srv.Requests()
			require.Len(t, reqs, 3)
			assert.Contains(t, string(reqs[1].Body), "parallel-ok", "second call carries the tool output")
			assert.Contains(t, string(reqs[2].Body), "thanks")

			// Usage and cost of turn 1 came through the SDK.
			var first *llm.AssistantMessage
			for _, m := range msgs {
				if a, ok := m.(*llm.AssistantMessage); ok {
					first = a
					break
				}
			}
			require.NotNil(t, first)
			assert.Equal(t, 20, first.Usage.Output)
			assert.InDelta(t, 20*15/1e6, first.Usage.Cost.Output, 1e-12)

			// The session file holds the whole conversation and reloads.
			require.NotEmpty(t, store.File())
			reopened, rep, err := session.Open(store.File())
			require.NoError(t, err)
			assert.True(t, rep.OK())
			assert.Len(t, reopened.Context().Messages, len(msgs))
			require.NoError(t, h.Close(ctx))
		})
	}
}

// normaliseToolOrder sorts runs of tool_execution_start/end so parallel
// completion order does not matter.
func normaliseToolOrder(types []string) []string {
	out := append([]string(nil), types...)
	for i := 0; i+3 < len(out); i++ {
		if out[i] == "tool_execution_start" {
			group := out[i : i+4]
			if strings.HasPrefix(strings.Join(group, ","), "tool_execution_") {
				for j := range group {
					if j < 2 {
						group[j] = "tool_execution_start"
					} else {
						group[j] = "tool_execution_end"
					}
				}
			}
			break
		}
	}
	return out
}
