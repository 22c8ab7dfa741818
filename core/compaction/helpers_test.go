package compaction

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeModel is a provider that answers every request with respond's text
// (or fails with its error) and records what it was sent.
type fakeModel struct {
	respond func(ctx context.Context, req *llm.Request) (string, error)

	mu   sync.Mutex // guards reqs
	reqs []*llm.Request
}

func (f *fakeModel) Stream(ctx context.Context, model *llm.Model, req *llm.Request) iter.Seq[llm.StreamEvent] {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	return func(yield func(llm.StreamEvent) bool) {
		b := llm.NewBuilder(model)
		if !yield(b.Start()) {
			return
		}
		text, err := f.respond(ctx, req)
		if err != nil {
			yield(b.Fail(ctx, err))
			return
		}
		i, ev := b.BeginText()
		if !yield(ev) || !yield(b.TextDelta(i, text)) || !yield(b.EndText(i)) {
			return
		}
		yield(b.Done(""))
	}
}

func (f *fakeModel) requests() []*llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*llm.Request(nil), f.reqs...)
}

// replying returns a fake model that always answers text.
func replying(text string) *fakeModel {
	return &fakeModel{respond: func(context.Context, *llm.Request) (string, error) { return text, nil }}
}

// promptOf is the text of a summary request's only message.
func promptOf(t *testing.T, req *llm.Request) string {
	t.Helper()
	if len(req.Messages) != 1 {
		t.Fatalf("summary request has %d messages, want 1", len(req.Messages))
	}
	u, ok := req.Messages[0].(*llm.UserMessage)
	if !ok {
		t.Fatalf("summary request message is %T", req.Messages[0])
	}
	return u.Content.Text()
}

var testModel = &llm.Model{ID: "sum-1", Provider: "fake", API: "fake", ContextWindow: 200000, MaxTokens: 64000}

// text returns a string of n tokens' worth of characters (4 per token)
// that starts with label, so tests can find it in a transcript.
func text(label string, tokens int) string {
	n := tokens * 4
	if len(label) >= n {
		return label[:n]
	}
	return label + strings.Repeat(".", n-len(label))
}

func user(s string) *llm.UserMessage {
	return &llm.UserMessage{Content: llm.Contents{llm.TextContent{Text: s}}, Timestamp: 1}
}

func assistant(s string) *llm.AssistantMessage {
	return &llm.AssistantMessage{Content: llm.Contents{llm.TextContent{Text: s}}, StopReason: llm.StopStop,
		API: "fake", Provider: "fake", Model: "m", Timestamp: 2}
}

// call is an assistant message calling one tool.
func call(id, tool string, args any) *llm.AssistantMessage {
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return &llm.AssistantMessage{
		Content:    llm.Contents{llm.ToolCall{ID: id, Name: tool, Arguments: raw}},
		StopReason: llm.StopToolUse, API: "fake", Provider: "fake", Model: "m", Timestamp: 2,
	}
}

func result(id, tool, s string) *llm.ToolResultMessage {
	return &llm.ToolResultMessage{ToolCallID: id, ToolName: tool, Content: llm.Contents{llm.TextContent{Text: s}}, Timestamp: 3}
}

// appendAll appends msgs to s and returns their entry ids.
func appendAll(t testing.TB, s *session.Store, msgs ...llm.Message) []string {
	t.Helper()
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		id, err := s.AppendMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	return ids
}

// pairs appends n user/assistant exchanges of 100 tokens per message,
// labelled from first on, and returns the user messages' ids.
func pairs(t testing.TB, s *session.Store, first, n int) []string {
	t.Helper()
	var users []string
	for i := first; i < first+n; i++ {
		ids := appendAll(t, s, user(text(fmt.Sprintf("U%d ", i), 100)), assistant(text(fmt.Sprintf("A%d ", i), 100)))
		users = append(users, ids[0])
	}
	return users
}

// labels lists the message labels ("U3", "A3", "T1"...) of msgs.
func labels(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		var s string
		switch m := m.(type) {
		case *llm.UserMessage:
			s = m.Content.Text()
		case *llm.AssistantMessage:
			if tc := m.Content.ToolCalls(); len(tc) > 0 {
				s = "call:" + tc[0].ID
			} else {
				s = m.Content.Text()
			}
		case *llm.ToolResultMessage:
			s = "result:" + m.ToolCallID
		default:
			s = string(m.MessageRole())
		}
		s, _, _ = strings.Cut(s, " ")
		out = append(out, s)
	}
	return out
}
