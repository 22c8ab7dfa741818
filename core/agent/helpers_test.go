package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/gopi-dev/gopi/core/llm"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var testModel = &llm.Model{
	ID:            "fake-sonnet",
	Name:          "Fake Sonnet",
	API:           llm.APIFaux,
	Provider:      "fake",
	Reasoning:     true,
	Input:         []string{"text"},
	ContextWindow: 200000,
	MaxTokens:     8192,
}

// turn scripts one assistant message; the provider has already yielded
// the start event.
type turn func(ctx context.Context, b *llm.Builder, yield func(llm.StreamEvent) bool)

func textTurn(parts ...string) turn {
	return func(ctx context.Context, b *llm.Builder, yield func(llm.StreamEvent) bool) {
		i, ev := b.BeginText()
		if !yield(ev) {
			return
		}
		for _, p := range parts {
			if !yield(b.TextDelta(i, p)) {
				return
			}
		}
		if !yield(b.EndText(i)) {
			return
		}
		yield(b.Done(""))
	}
}

type callSpec struct{ id, name, args string }

// toolTurn streams the calls, each argument JSON in two deltas.
func toolTurn(calls ...callSpec) turn {
	return func(ctx context.Context, b *llm.Builder, yield func(llm.StreamEvent) bool) {
		for _, c := range calls {
			i, ev := b.BeginToolCall(c.id, c.name)
			if !yield(ev) {
				return
			}
			half := len(c.args) / 2
			if !yield(b.ToolCallDelta(i, c.args[:half])) || !yield(b.ToolCallDelta(i, c.args[half:])) {
				return
			}
			if !yield(b.EndToolCall(i)) {
				return
			}
		}
		yield(b.Done(""))
	}
}

func failTurn(msg string) turn {
	return func(ctx context.Context, b *llm.Builder, yield func(llm.StreamEvent) bool) {
		yield(b.Fail(ctx, errors.New(msg)))
	}
}

// fakeModel plays scripted turns and records every request.
type fakeModel struct {
	mu    sync.Mutex // guards the fields below
	turns []turn
	reqs  []*llm.Request
}

func newFakeModel(turns ...turn) *fakeModel { return &fakeModel{turns: turns} }

func (f *fakeModel) provider() llm.Provider {
	return llm.ProviderFunc(func(ctx context.Context, model *llm.Model, req *llm.Request) iter.Seq[llm.StreamEvent] {
		return func(yield func(llm.StreamEvent) bool) {
			f.mu.Lock()
			n := len(f.reqs)
			f.reqs = append(f.reqs, req)
			var t turn
			if n < len(f.turns) {
				t = f.turns[n]
			}
			f.mu.Unlock()
			b := llm.NewBuilder(model)
			if !yield(b.Start()) {
				return
			}
			if t == nil {
				yield(b.Fail(ctx, fmt.Errorf("no scripted turn %d", n)))
				return
			}
			t(ctx, b, yield)
		}
	})
}

func (f *fakeModel) requests() []*llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*llm.Request(nil), f.reqs...)
}

// fakeTool runs a function.
type fakeTool struct {
	name   string
	schema string
	run    func(ctx context.Context, call Call, update func(Result)) (Result, error)
}

func (t *fakeTool) Spec() llm.ToolSpec {
	s := t.schema
	if s == "" {
		s = `{"type":"object"}`
	}
	return llm.ToolSpec{Name: t.name, Description: "a test tool", Parameters: json.RawMessage(s)}
}

func (t *fakeTool) Run(ctx context.Context, call Call, update func(Result)) (Result, error) {
	return t.run(ctx, call, update)
}

// echoTool answers with its name and arguments.
func echoTool(name string) *fakeTool {
	return &fakeTool{name: name, run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		return TextResult(name + " " + string(call.Args)), nil
	}}
}

// recorder keeps every event.
type recorder struct {
	mu     sync.Mutex // guards events
	events []Event
}

func (r *recorder) add(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) all() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// labels names each event: its type, the role for message events, the
// stream event type for updates, the tool call id for tool events.
func (r *recorder) labels() []string {
	var out []string
	for _, ev := range r.all() {
		out = append(out, label(ev))
	}
	return out
}

func label(ev Event) string {
	switch ev.Type {
	case EventMessageStart, EventMessageEnd:
		return string(ev.Type) + ":" + string(ev.Message.MessageRole())
	case EventMessageUpdate:
		return string(ev.Type) + ":" + string(ev.AssistantEvent.Type)
	case EventToolExecutionStart, EventToolExecutionUpdate, EventToolExecutionEnd:
		return string(ev.Type) + ":" + ev.ToolCallID
	}
	return string(ev.Type)
}

func (r *recorder) ofType(t EventType) []Event {
	var out []Event
	for _, ev := range r.all() {
		if ev.Type == t {
			out = append(out, ev)
		}
	}
	return out
}

func (r *recorder) last() Event {
	evs := r.all()
	return evs[len(evs)-1]
}

// newTestAgent wires an agent to fm with tools and records its events.
func newTestAgent(t *testing.T, fm *fakeModel, cfg Config, tools ...Tool) (*Agent, *recorder) {
	t.Helper()
	cfg.Providers = func(api string) (llm.Provider, error) {
		if api != llm.APIFaux {
			return nil, fmt.Errorf("no provider for %q", api)
		}
		return fm.provider(), nil
	}
	a := New(cfg)
	a.SetModel(testModel)
	a.SetTools(tools)
	rec := &recorder{}
	a.Subscribe(rec.add)
	return a, rec
}

func resultText(r *Result) string {
	if r == nil {
		return ""
	}
	return r.Content.Text()
}

func toolResults(msgs []llm.Message) []*llm.ToolResultMessage {
	var out []*llm.ToolResultMessage
	for _, m := range msgs {
		if tr, ok := m.(*llm.ToolResultMessage); ok {
			out = append(out, tr)
		}
	}
	return out
}

func roles(msgs []llm.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.MessageRole()))
	}
	return strings.Join(out, ",")
}

func userTexts(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		if u, ok := m.(*llm.UserMessage); ok {
			out = append(out, u.Content.Text())
		}
	}
	return out
}
