package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// untilRunning reads the prompt's updates up to its tool call's
// in_progress: the command runs.
func (p *aproc) untilRunning() []record {
	p.t.Helper()
	var ups []record
	for {
		r := p.frame()
		require.Equal(p.t, "session/update", r.str("method"), "the prompt answered before its tool ran\n%s", p.transcript())
		ups = append(ups, r)
		if u := upd(r); u.str("sessionUpdate") == "tool_call_update" && u.str("status") == "in_progress" {
			return ups
		}
	}
}

// gateCommand is a bash command that waits for the file gate, then
// prints what.
func gateCommand(gate, what string) string {
	return `while [ ! -e ` + gate + ` ]; do sleep 0.05; done; echo ` + what
}

// Prompts sent while one is answered are not refused: they wait in the
// runtime's follow-up queue and each is answered when its own turn ends,
// in order, the updates of each after the answer of the one before.
func TestACPQueuedPromptsAnswerInTurn(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	s := p.started(cwd)
	gate := filepath.Join(cwd, "gate")
	first := p.prompt(s, "bash: "+gateCommand(gate, "first"))
	p.untilRunning()
	second := p.prompt(s, "reply: second")
	third := p.prompt(s, "reply: third")
	require.NoError(t, os.WriteFile(gate, nil, 0o644))

	ups, res := p.result(first)
	assert.Equal(t, "end_turn", res.str("stopReason"))
	status, text := acpToolEnd(t, ups)
	assert.Equal(t, "completed", status)
	assert.Contains(t, text, "first")
	assert.Contains(t, chunks(ups, "agent_message_chunk"), "Tool said: first")
	assert.NotContains(t, chunks(ups, "agent_message_chunk"), "second", "the next prompt's reply is not the first's")
	_, usage := usageLast(t, ups)
	assert.Positive(t, usage["used"])

	ups, res = p.result(second)
	assert.Equal(t, "end_turn", res.str("stopReason"))
	ups, _ = usageLast(t, ups)
	assert.Equal(t, "second", chunks(ups, "agent_message_chunk"))

	ups, res = p.result(third)
	assert.Equal(t, "end_turn", res.str("stopReason"))
	ups, _ = usageLast(t, ups)
	assert.Equal(t, "third", chunks(ups, "agent_message_chunk"))

	// Nothing follows the last answer: the next frame answers the next
	// request.
	e := p.failure(p.request("no/such", map[string]any{}))
	assert.EqualValues(t, -32601, e["code"])
	assert.Equal(t, 0, p.exit())
}

// session/cancel ends the running prompt and the prompts waiting behind
// it: all answer cancelled, the waiting ones never join the conversation,
// and the session's next prompt runs.
func TestACPCancelEndsTheQueuedPromptsToo(t *testing.T) {
	t.Parallel()
	cwd, agentDir := t.TempDir(), t.TempDir()
	p := startACP(t, cwd, agentDir, "--model", "faux/faux-fast")
	s := p.started(cwd)
	first := p.prompt(s, "bash: "+gateCommand(filepath.Join(cwd, "never"), "first"))
	p.untilRunning()
	second := p.prompt(s, "reply: queued two")
	third := p.prompt(s, "reply: queued three")
	p.notify("session/cancel", map[string]any{"sessionId": s})
	answered := map[float64]string{}
	for len(answered) < 3 {
		r := p.frame()
		if r.str("method") == "session/update" {
			assert.NotContains(t, []string{"agent_message_chunk"}, kind(r), "a queued prompt ran: %v", r)
			continue
		}
		id, _ := r["id"].(float64)
		require.Contains(t, []float64{first, second, third}, id, "%s", p.transcript())
		answered[id] = r.obj("result").str("stopReason")
	}
	assert.Equal(t, map[float64]string{first: "cancelled", second: "cancelled", third: "cancelled"}, answered)

	ups, res := p.result(p.prompt(s, "reply: after"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	ups, _ = usageLast(t, ups)
	assert.Equal(t, "after", chunks(ups, "agent_message_chunk"))
	require.Equal(t, 0, p.exit())
	files := sessionFiles(t, agentDir)
	require.Len(t, files, 1)
	raw, err := os.ReadFile(files[0])
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "queued two")
	assert.NotContains(t, string(raw), "queued three")
	assert.Contains(t, string(raw), "reply: after")
}
