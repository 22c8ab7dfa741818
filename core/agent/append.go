package agent

import (
	"encoding/json"
	"strconv"

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
	if e.Type != EventMessageUpdate || e.Message != nil || e.Usage == nil || e.AssistantEvent == nil {
		return dst, false
	}
	ae := e.AssistantEvent
	if ae.Partial != nil {
		return dst, false
	}
	switch ae.Type {
	case llm.EventTextDelta, llm.EventThinkingDelta, llm.EventToolCallDelta:
	default:
		return dst, false
	}
	delta, err := json.Marshal(ae.Delta)
	if err != nil {
		return dst, false
	}
	dst = append(dst, `{"type":"message_update","usage":`...)
	dst = appendUsage(dst, e.Usage)
	dst = append(dst, `,"assistantMessageEvent":{"type":"`...)
	dst = append(dst, ae.Type...)
	dst = append(dst, `","contentIndex":`...)
	dst = strconv.AppendInt(dst, int64(ae.ContentIndex), 10)
	dst = append(dst, `,"delta":`...)
	dst = append(dst, delta...)
	dst = append(dst, "}}"...)
	return dst, true
}

// appendUsage writes u as encoding/json writes llm.Usage.
func appendUsage(dst []byte, u *llm.Usage) []byte {
	num := func(key string, n int) {
		dst = append(dst, key...)
		dst = strconv.AppendInt(dst, int64(n), 10)
	}
	num(`{"input":`, u.Input)
	num(`,"output":`, u.Output)
	num(`,"cacheRead":`, u.CacheRead)
	num(`,"cacheWrite":`, u.CacheWrite)
	num(`,"totalTokens":`, u.TotalTokens)
	dst = append(dst, `,"cost":`...)
	cost, _ := json.Marshal(u.Cost) // floats: encoding/json's own format
	dst = append(dst, cost...)
	return append(dst, '}')
}
