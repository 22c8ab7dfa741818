package lspbridge

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

func delta(kind llm.StreamEventType, idx int, text string, out int) agent.Event {
	return agent.Event{Type: agent.EventMessageUpdate, Usage: &llm.Usage{Output: out},
		AssistantEvent: &llm.StreamEvent{Type: kind, ContentIndex: idx, Delta: text}}
}

type sink struct {
	mu  sync.Mutex
	evs []api.Event
}

func (s *sink) send(ev api.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evs = append(s.evs, ev)
}

func (s *sink) got() []api.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]api.Event(nil), s.evs...)
}

// Deltas of one block merge; another block, another kind or any other
// event sends what is held first, so the order of the stream is kept.
func TestCoalescerMergesRunsOfDeltasInOrder(t *testing.T) {
	var s sink
	c := newCoalescer(time.Hour, s.send)
	c.emit(delta(llm.EventThinkingDelta, 0, "let ", 1))
	c.emit(delta(llm.EventThinkingDelta, 0, "me think", 2))
	c.emit(delta(llm.EventTextDelta, 1, "Hello", 3))
	c.emit(delta(llm.EventTextDelta, 1, ", ", 4))
	c.emit(delta(llm.EventTextDelta, 1, "world", 5))
	end := agent.Event{Type: agent.EventMessageUpdate, AssistantEvent: &llm.StreamEvent{Type: llm.EventTextEnd, ContentIndex: 1, Content: "Hello, world"}}
	c.emit(end)
	c.emit(delta(llm.EventTextDelta, 2, "more", 6))
	c.stop()

	evs := s.got()
	require.Len(t, evs, 4)
	first := evs[0].(agent.Event)
	assert.Equal(t, llm.EventThinkingDelta, first.AssistantEvent.Type)
	assert.Equal(t, "let me think", first.AssistantEvent.Delta)
	assert.Equal(t, 2, first.Usage.Output, "the latest usage")
	second := evs[1].(agent.Event)
	assert.Equal(t, "Hello, world", second.AssistantEvent.Delta)
	assert.Equal(t, 1, second.AssistantEvent.ContentIndex)
	assert.Equal(t, llm.EventTextEnd, evs[2].(agent.Event).AssistantEvent.Type)
	assert.Equal(t, "more", evs[3].(agent.Event).AssistantEvent.Delta, "stop sends what is held")
}

// A held delta goes out when its window ends, without another event.
func TestCoalescerSendsWhenTheWindowEnds(t *testing.T) {
	var s sink
	c := newCoalescer(20*time.Millisecond, s.send)
	defer c.stop()
	c.emit(delta(llm.EventTextDelta, 0, "a", 1))
	c.emit(delta(llm.EventTextDelta, 0, "b", 2))
	require.Eventually(t, func() bool { return len(s.got()) == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, "ab", s.got()[0].(agent.Event).AssistantEvent.Delta)
	// Full updates (a message attached) and tool-call deltas pass through.
	full := delta(llm.EventTextDelta, 0, "c", 3)
	full.Message = &llm.AssistantMessage{}
	c.emit(full)
	c.emit(delta(llm.EventToolCallDelta, 1, `{"pa`, 4))
	require.Len(t, s.got(), 3)
}
