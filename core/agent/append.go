package agent

import (
	"encoding/json"
	"strconv"
	"sync"

	"github.com/gopi-dev/gopi/core/llm"
)

// AppendJSON appends the event's JSON to dst when it is a lean
// message_update carrying a delta, the event a streaming reply sends
// thousands of times, and reports whether it did; any other event goes
// through MarshalJSON. The bytes decode to exactly what MarshalJSON's
// do: the same keys in the same order, strings escaped by encoding/json.
// What it saves is the reflection and the re-scan of nested MarshalJSON
// output that encoding/json does for every level.
func (e Event) AppendJSON(dst []byte) ([]byte, bool) {
	switch e.Type {
	case EventMessageStart, EventMessageEnd:
		// {"type":…,"message":M}: M may be a huge pasted prompt.
		start := len(dst)
		dst = append(dst, `{"type":"`...)
		dst = append(dst, e.Type...)
		dst = append(dst, `","message":`...)
		var ok bool
		if dst, ok = llm.AppendMessageJSON(dst, e.Message); !ok {
			return dst[:start], false
		}
		return append(dst, '}'), true
	case EventAgentEnd:
		start := len(dst)
		dst = append(dst, `{"type":"agent_end","messages":[`...)
		for i, m := range e.Messages {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = llm.AppendMessageJSON(dst, m); !ok {
				b, err := json.Marshal(m)
				if err != nil {
					return dst[:start], false
				}
				dst = append(dst, b...)
			}
		}
		dst = append(dst, `],"willRetry":`...)
		dst = strconv.AppendBool(dst, e.WillRetry)
		return append(dst, '}'), true
	}
	if e.Type != EventMessageUpdate || e.Message != nil || e.Usage == nil || e.AssistantEvent == nil {
		return dst, false
	}
	ae := e.AssistantEvent
	if ae.Partial != nil || !isDelta(ae) {
		return dst, false
	}
	dst = append(dst, `{"type":"message_update","usage":`...)
	dst = llm.AppendUsage(dst, e.Usage)
	dst = appendDeltaFields(append(dst, `,"assistantMessageEvent":`...), ae)
	return append(dst, "}}"...), true
}

// isDelta reports a text, thinking or tool-argument delta, the events the
// appenders write.
func isDelta(ae *llm.StreamEvent) bool {
	switch ae.Type {
	case llm.EventTextDelta, llm.EventThinkingDelta, llm.EventToolCallDelta:
		return true
	}
	return false
}

// appendDeltaFields opens a delta's assistantMessageEvent object and
// writes its fields, leaving the object open for "partial".
func appendDeltaFields(dst []byte, ae *llm.StreamEvent) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, ae.Type...)
	dst = append(dst, `","contentIndex":`...)
	dst = strconv.AppendInt(dst, int64(ae.ContentIndex), 10)
	dst = append(dst, `,"delta":`...)
	return llm.AppendJSONString(dst, ae.Delta)
}

// FullUpdates writes message_update events in the older protocol's full
// form, the message so far in "message" and again in
// "assistantMessageEvent.partial", at the cost of copying it: one
// llm.AssistantEncoder keeps each block's escaped text, so an update
// escapes only its delta. Wrap the events a connection sends; it is safe
// for use by several goroutines.
type FullUpdates struct {
	mu  sync.Mutex
	enc llm.AssistantEncoder
}

// Wrap returns ev ready for the connection: a message_update delta comes
// back as a value whose AppendJSON uses f; any other event as it is. An
// assistant message_start tells f a new message begins.
func (f *FullUpdates) Wrap(ev Event) interface{ EventType() string } {
	switch ev.Type {
	case EventMessageStart:
		if _, ok := ev.Message.(*llm.AssistantMessage); ok {
			f.mu.Lock()
			f.enc.Reset()
			f.mu.Unlock()
		}
	case EventMessageUpdate:
		return fullUpdate{ev, f}
	}
	return ev
}

// fullUpdate is a message_update written by FullUpdates.
type fullUpdate struct {
	Event
	f *FullUpdates
}

func (u fullUpdate) AppendJSON(dst []byte) ([]byte, bool) {
	e := u.Event
	m, ok := e.Message.(*llm.AssistantMessage)
	ae := e.AssistantEvent
	if !ok || m == nil || e.Usage != nil || ae == nil || ae.Partial != m || !isDelta(ae) {
		return dst, false
	}
	u.f.mu.Lock()
	defer u.f.mu.Unlock()
	start := len(dst)
	dst = append(dst, `{"type":"message_update","message":`...)
	mark := len(dst)
	dst, ok = u.f.enc.Append(dst, m)
	if !ok {
		return dst[:start], false
	}
	msg := dst[mark:]
	dst = appendDeltaFields(append(dst, `,"assistantMessageEvent":`...), ae)
	dst = append(dst, `,"partial":`...)
	// The same snapshot: its bytes again. (msg may move as dst grows, so
	// take its place, not the slice.)
	dst = append(dst, dst[mark:mark+len(msg)]...)
	return append(dst, "}}"...), true
}
