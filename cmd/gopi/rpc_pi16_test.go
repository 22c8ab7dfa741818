package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// pi 1.6.0 (issue 29): get_last_assistant_text is the text of the latest
// assistant message that has some, skipping aborted and failed ones (pi
// 1.5.2 kept an aborted reply's partial text, and gopi gave an empty
// string for a failed one).
func TestRPCLastAssistantTextSkipsAbortedFailedAndEmpty(t *testing.T) {
	stall := llmtest.Text("half an answer that never ends")
	stall.Fault = &llmtest.Fault{StallAfter: 3, Stall: true}
	w := newWorld(t,
		llmtest.Text("  the first answer\n"),
		stall,
		llmtest.Turn{Fault: &llmtest.Fault{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"no"}}`}},
		llmtest.Text("   "),
	)
	p := w.start()
	last := func(id string) any {
		return p.ok(id, map[string]any{"type": "get_last_assistant_text"}).(map[string]any)["text"]
	}
	p.ok("1", map[string]any{"type": "prompt", "message": "one"})
	p.until(settled)
	assert.Equal(t, "the first answer", last("t1"), "trimmed, as pi does")

	p.ok("2", map[string]any{"type": "prompt", "message": "two"})
	p.until(func(r record) bool { return r.is("message_update") })
	p.send(map[string]any{"id": "a", "type": "abort"})
	p.all(responseTo("a"), settled)
	assert.Equal(t, "the first answer", last("t2"), "an aborted reply is skipped")

	p.ok("3", map[string]any{"type": "prompt", "message": "three"})
	p.until(settled)
	assert.Equal(t, "the first answer", last("t3"), "a failed reply is skipped")

	p.ok("4", map[string]any{"type": "prompt", "message": "four"})
	p.until(settled)
	assert.Equal(t, "the first answer", last("t4"), "a reply without text is skipped")
	assert.Equal(t, 0, p.exit())
}
