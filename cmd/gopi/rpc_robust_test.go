package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// compactableWorld is a session of two exchanges that compact can cut,
// with turns queued after them.
func compactableWorld(t *testing.T, turns ...llmtest.Turn) *proc {
	w := newWorld(t, append([]llmtest.Turn{llmtest.Text("first"), llmtest.Text("second")}, turns...)...)
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"compaction": map[string]any{"keepRecentTokens": 10}})
	p := w.start()
	for i, msg := range []string{"one " + strings.Repeat("z ", 100), "two " + strings.Repeat("y ", 100)} {
		p.ok(string(rune('a'+i)), map[string]any{"type": "prompt", "message": msg})
		p.idle()
	}
	return p
}

// Issue 10: an abort written right behind compact reaches the compaction
// even before its summariser has started.
func TestRPCAbortRightBehindCompact(t *testing.T) {
	t.Parallel()
	stalled := llmtest.Text("a summary that never finishes")
	stalled.Fault = &llmtest.Fault{StallAfter: 2, Stall: true}
	p := compactableWorld(t, stalled)
	p.sendRaw(`{"id":"c","type":"compact"}` + "\n" + `{"id":"x","type":"abort"}`)
	// The cancelled compaction may answer before or after the abort.
	got := map[string]record{}
	p.until(func(r record) bool {
		if r.is("response") {
			got[r.str("id")] = r
		}
		return got["x"] != nil && got["c"] != nil
	})
	assert.Equal(t, true, got["x"]["success"], p.transcript())
	assert.Equal(t, false, got["c"]["success"], p.transcript())
	assert.Equal(t, 0, p.exit())
}

// Issue 10: an abort also stops a prompt that waits for a compaction: its
// run starts and ends as aborted, and abort answers at once.
func TestRPCAbortReachesPromptWaitingForCompact(t *testing.T) {
	t.Parallel()
	stalledRun := llmtest.Text("a reply that never finishes")
	stalledRun.Fault = &llmtest.Fault{StallAfter: 2, Stall: true}
	p := compactableWorld(t, llmtest.Text("The summary."), stalledRun)
	p.sendRaw(`{"id":"c","type":"compact"}` + "\n" + `{"id":"p","type":"prompt","message":"third"}` + "\n" + `{"id":"x","type":"abort"}`)
	rs := p.until(func(r record) bool { return r.is("response") && r["id"] == "x" })
	r := rs[len(rs)-1]
	assert.Equal(t, true, r["success"], "%v\n%s", r["error"], p.transcript())
	var end record
	for _, r := range rs {
		if r.is("agent_end") {
			end = r
		}
	}
	if assert.NotNil(t, end, "the waiting prompt's run ends before abort answers\n%s", p.transcript()) {
		msgs := end["messages"].([]any)
		assert.Equal(t, "aborted", record(msgs[len(msgs)-1].(map[string]any)).str("stopReason"))
	}
	st := p.ok("s", map[string]any{"type": "get_state"}).(map[string]any)
	assert.Equal(t, false, st["isStreaming"], p.transcript())
	assert.Equal(t, 0, p.exit())
}
