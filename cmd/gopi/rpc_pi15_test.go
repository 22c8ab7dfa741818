package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/rpc"
)

// pi 1.5's run lifecycle (issue 16): prompt answers with data.disposition,
// agent_end carries willRetry, tool_execution_end durationMs, and every
// prompt ends with agent_settled, which pi's current RpcClient waits for.
func TestRPCRunLifecycleOfPi15(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("t1", "bash", `{"command":"echo hi"}`)),
		llmtest.Text("done"),
	)
	p := w.start()
	resp := p.call("1", map[string]any{"type": "prompt", "message": "run it"})
	assert.Equal(t, map[string]any{"disposition": "started"}, resp["data"])
	rs := p.until(func(r record) bool { return r.is("agent_settled") })
	var end, toolEnd record
	for _, r := range rs {
		switch {
		case r.is("agent_end"):
			end = r
		case r.is("tool_execution_end"):
			toolEnd = r
		}
	}
	require.NotNil(t, end, p.transcript())
	assert.Equal(t, false, end["willRetry"])
	require.NotNil(t, toolEnd)
	d, ok := toolEnd["durationMs"].(float64)
	assert.True(t, ok, "durationMs on tool_execution_end: %v", toolEnd)
	assert.GreaterOrEqual(t, d, 0.0)
	settled := rs[len(rs)-1]
	assert.Equal(t, false, settled["aborted"])
	assert.Equal(t, "agent_end", rs[len(rs)-2].str("type"), "agent_settled follows the last agent_end")
	assert.Equal(t, 0, p.exit())
}

// A failed reply that will be retried says so on its agent_end, and the
// prompt settles once, after the retry.
func TestRPCWillRetryAndOneSettle(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.HTTPError(529, ""), llmtest.Text("recovered"))
	w.writeJSON(w.agentDir+"/settings.json", map[string]any{"retry": map[string]any{"baseDelayMs": 5}})
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "try"})
	rs := p.until(func(r record) bool { return r.is("agent_settled") })
	var ends []any
	settles := 0
	for _, r := range rs {
		if r.is("agent_end") {
			ends = append(ends, r["willRetry"])
		}
		if r.is("agent_settled") {
			settles++
		}
	}
	assert.Equal(t, []any{true, false}, ends, p.transcript())
	assert.Equal(t, 1, settles)
	assert.Equal(t, 0, p.exit())
}

// steer and follow_up answer "queued"; queue_update carries both queues
// whole; clear_queue empties them and returns their text.
func TestRPCQueuesOfPi15(t *testing.T) {
	t.Parallel()
	stall := llmtest.Text("long answer")
	stall.Fault = &llmtest.Fault{StallAfter: 1, Stall: true}
	w := newWorld(t, stall, llmtest.Text("next"))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "go"})
	p.until(func(r record) bool { return r.is("message_start") && r.obj("message").str("role") == "assistant" })

	// Like pi, the queue_update comes before the command's response.
	p.send(map[string]any{"id": "2", "type": "steer", "message": "change course"})
	rs := p.until(func(r record) bool { return r.is("response") && r["id"] == "2" })
	assert.Equal(t, map[string]any{"disposition": "queued"}, rs[len(rs)-1]["data"])
	u := rs[len(rs)-2]
	require.True(t, u.is("queue_update"), p.transcript())
	assert.Equal(t, []any{"change course"}, u["steering"])
	assert.Equal(t, []any{}, u["followUp"])

	r := p.call("3", map[string]any{"type": "follow_up", "message": "then summarise"})
	assert.Equal(t, map[string]any{"disposition": "queued"}, r["data"])
	r = p.call("3b", map[string]any{"type": "prompt", "message": "and also", "streamingBehavior": "followUp"})
	assert.Equal(t, map[string]any{"disposition": "queued"}, r["data"])

	cleared := p.ok("4", map[string]any{"type": "clear_queue"}).(map[string]any)
	assert.Equal(t, []any{"change course"}, cleared["steering"])
	assert.Equal(t, []any{"then summarise", "and also"}, cleared["followUp"])
	// abort answers once the run has stopped: agent_settled is out first.
	p.send(map[string]any{"id": "5", "type": "abort"})
	rs = p.until(func(r record) bool { return r.is("response") && r["id"] == "5" })
	settled := rs[len(rs)-2]
	require.True(t, settled.is("agent_settled"), p.transcript())
	assert.Equal(t, true, settled["aborted"], "an aborted prompt settles with aborted:true")
	w.srv.Release()
	assert.Equal(t, 0, p.exit())
}

func TestRPCThinkingLevelsEntriesAndTree(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("one"), llmtest.Text("two"))
	p := w.start()
	levels := p.ok("1", map[string]any{"type": "get_available_thinking_levels"}).(map[string]any)["levels"]
	assert.Equal(t, []any{"off", "minimal", "low", "medium", "high"}, levels)
	p.ok("2", map[string]any{"type": "set_model", "provider": "scripted", "modelId": "scripted-2"})
	levels = p.ok("3", map[string]any{"type": "get_available_thinking_levels"}).(map[string]any)["levels"]
	assert.Equal(t, []any{"off"}, levels, "a model without reasoning")

	p.ok("4", map[string]any{"type": "prompt", "message": "first"})
	p.until(func(r record) bool { return r.is("agent_settled") })
	all := p.ok("5", map[string]any{"type": "get_entries"}).(map[string]any)
	entries := all["entries"].([]any)
	require.NotEmpty(t, entries)
	leaf := all["leafId"].(string)
	assert.Equal(t, leaf, record(entries[len(entries)-1].(map[string]any)).str("id"))
	var kinds []string
	for _, e := range entries {
		kinds = append(kinds, record(e.(map[string]any)).str("type"))
	}
	assert.Contains(t, kinds, "message")
	assert.Contains(t, kinds, "model_change")

	p.ok("6", map[string]any{"type": "prompt", "message": "second"})
	p.until(func(r record) bool { return r.is("agent_settled") })
	since := p.ok("7", map[string]any{"type": "get_entries", "since": leaf}).(map[string]any)
	newer := since["entries"].([]any)
	require.Len(t, newer, 2, "the second exchange: a user and an assistant message")
	assert.Equal(t, leaf, record(newer[0].(map[string]any)).str("parentId"))

	bad := p.call("8", map[string]any{"type": "get_entries", "since": "no-such-entry"})
	assert.Equal(t, false, bad["success"])
	assert.Contains(t, bad.str("error"), "no-such-entry")

	tree := p.ok("9", map[string]any{"type": "get_tree"}).(map[string]any)
	roots := tree["tree"].([]any)
	require.Len(t, roots, 1)
	root := record(roots[0].(map[string]any))
	assert.NotNil(t, root.obj("entry")["id"])
	assert.NotNil(t, root["children"])
	assert.Equal(t, since["leafId"], tree["leafId"])
	assert.Equal(t, 0, p.exit())
}

// Issue 16: a new session starts at settings.json's defaultThinkingLevel
// (pi's default, medium, without one), as pi 0.73.1 and 0.87.1 do; a
// session that recorded a level keeps it. gopi used to start every new
// session at off.
func TestRPCDefaultThinkingLevelFromSettings(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := w.start()
	st := p.ok("1", map[string]any{"type": "get_state"}).(map[string]any)
	assert.Equal(t, "medium", st["thinkingLevel"], "pi's default for a new session")
	assert.Equal(t, 0, p.exit())

	w.writeJSON(w.agentDir+"/settings.json", map[string]any{"defaultThinkingLevel": "high"})
	p = w.start()
	st = p.ok("2", map[string]any{"type": "get_state"}).(map[string]any)
	assert.Equal(t, "high", st["thinkingLevel"])
	p.ok("3", map[string]any{"type": "set_thinking_level", "level": "low"})
	assert.Equal(t, 0, p.exit())
}

// bash streams its output as bash_execution_update events carrying the
// command's id (pi 1.5), and excludeFromContext keeps a result in the
// session but out of what the model reads.
func TestRPCBashStreamsAndExcludeFromContext(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("seen"))
	p := w.start()
	p.send(map[string]any{"id": "b1", "type": "bash", "command": "printf 'first\\n'; sleep 0.2; printf 'second\\n'"})
	rs := p.until(func(r record) bool { return r.is("response") && r["id"] == "b1" })
	var streamed string
	for _, r := range rs {
		if r.is("bash_execution_update") {
			assert.Equal(t, "b1", r["id"])
			streamed += r.str("delta")
		}
	}
	assert.Equal(t, "first\nsecond\n", streamed, p.transcript())
	assert.Equal(t, "first\nsecond\n", rs[len(rs)-1].obj("data").str("output"))

	p.ok("b2", map[string]any{"type": "bash", "command": "echo kept-for-the-model"})
	p.ok("b3", map[string]any{"type": "bash", "command": "echo private-output", "excludeFromContext": true})
	p.ok("1", map[string]any{"type": "prompt", "message": "what ran?"})
	p.until(func(r record) bool { return r.is("agent_settled") })
	body := string(w.srv.Requests()[0].Body)
	assert.Contains(t, body, "kept-for-the-model")
	assert.NotContains(t, body, "private-output", "an excluded result must not reach the model")

	var excluded []bool
	for _, m := range p.messages("2") {
		msg := record(m.(map[string]any))
		if msg.str("role") == "bashExecution" {
			v, _ := msg["excludeFromContext"].(bool)
			excluded = append(excluded, v)
		}
	}
	assert.Equal(t, []bool{false, false, true}, excluded, "every result stays in the session")
	assert.Equal(t, 0, p.exit())
}

// twoTurnsToCompact starts gopi on a project that keeps little at a
// compaction, runs two settled turns, and scripts the summary (with usage
// 700 in, 40 out) for the compaction that comes next.
func twoTurnsToCompact(t *testing.T) *proc {
	t.Helper()
	w := newWorld(t,
		llmtest.Text("answer one"),
		llmtest.Text("answer two"),
		llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("The summary.")}, Usage: llmtest.Usage{Input: 700, Output: 40}},
	)
	w.trustProject()
	w.writeJSON(w.cwd+"/.pi/settings.json", map[string]any{"compaction": map[string]any{"keepRecentTokens": 10}})
	p := w.start()
	for i, msg := range []string{"first " + strings.Repeat("a ", 100), "second " + strings.Repeat("b ", 100)} {
		p.ok(string(rune('a'+i)), map[string]any{"type": "prompt", "message": msg})
		p.until(func(r record) bool { return r.is("agent_settled") })
	}
	return p
}

// compaction_start/compaction_end (pi 1.5) announce manual compactions too,
// and the result carries estimatedTokensAfter and the summary's usage.
func TestRPCCompactionEventsOfPi15(t *testing.T) {
	t.Parallel()
	p := twoTurnsToCompact(t)
	p.send(map[string]any{"id": "c", "type": "compact"})
	rs := p.until(func(r record) bool { return r.is("response") && r["id"] == "c" })
	var kinds []string
	var end record
	for _, r := range rs {
		if strings.Contains(r.str("type"), "compaction") {
			kinds = append(kinds, r.str("type"))
		}
		if r.is("compaction_end") {
			end = r
		}
	}
	assert.Equal(t, []string{"compaction_start", "compaction_end"}, kinds, "a manual compaction has no auto_compaction_* events")
	require.NotNil(t, end, p.transcript())
	assert.Equal(t, "manual", end.str("reason"))
	assert.Equal(t, false, end["aborted"])
	res := end.obj("result")
	assert.Equal(t, "The summary.", strings.TrimSpace(strings.SplitN(res.str("summary"), "\n", 2)[0]))
	assert.Greater(t, res["estimatedTokensAfter"].(float64), 0.0)
	assert.EqualValues(t, 40, res.obj("usage")["output"])
	data := rs[len(rs)-1].obj("data")
	assert.Equal(t, res["estimatedTokensAfter"], data["estimatedTokensAfter"], "the response carries the same result")
	assert.Equal(t, 0, p.exit())
}

// Issue 16: a compaction whose summary request fails transiently is
// retried with pi 1.5's summarization_retry_* events.
func TestRPCSummarizationRetry(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.Text("first"),
		llmtest.Text("second"),
		llmtest.HTTPError(529, ""),
		llmtest.Text("The summary."),
	)
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{
		"compaction": map[string]any{"keepRecentTokens": 10},
		"retry":      map[string]any{"baseDelayMs": 5, "maxRetries": 2},
	})
	p := w.start()
	for i, msg := range []string{"one " + strings.Repeat("z ", 100), "two " + strings.Repeat("y ", 100)} {
		p.ok(string(rune('a'+i)), map[string]any{"type": "prompt", "message": msg})
		p.idle()
	}
	p.send(map[string]any{"id": "c", "type": "compact"})
	rs := p.until(func(r record) bool { return r.is("response") && r["id"] == "c" })
	var names []string
	for _, r := range rs {
		if strings.HasPrefix(r.str("type"), "summarization_retry") || strings.HasPrefix(r.str("type"), "compaction_") {
			names = append(names, r.str("type"))
		}
		if r.is("summarization_retry_scheduled") {
			assert.EqualValues(t, 1, r["attempt"])
			assert.EqualValues(t, 2, r["maxAttempts"])
			assert.EqualValues(t, 5, r["delayMs"])
			assert.NotEmpty(t, r.str("errorMessage"))
		}
		if r.is("summarization_retry_attempt_start") {
			assert.Equal(t, "compaction", r.str("source"))
			assert.Equal(t, "manual", r.str("reason"))
		}
	}
	assert.Equal(t, []string{"compaction_start", "summarization_retry_scheduled", "summarization_retry_attempt_start",
		"summarization_retry_finished", "compaction_end"}, names, p.transcript())
	last := rs[len(rs)-1]
	require.Equal(t, true, last["success"], p.transcript())
	assert.Equal(t, "The summary.", last.obj("data").str("summary"))

	assert.Equal(t, 0, p.exit())
	// A request the provider refuses (400) is not tried again:
	// TestRPCCompactionFailureAndAbortLeaveTheSessionAlone's next scripted
	// turn would be eaten by a retry.
}

// Issue 16: settings.json keys of pi 1.5 that the RPC mode depends on:
// modelThinkingLevels, defaultTools, sessionDir (and
// PI_CODING_AGENT_SESSION_DIR), retry.maxAgentDelayMs.
func TestRPCPi15SettingsKeys(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.HTTPError(529, ""), llmtest.Text("after the wait"))
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{
		"defaultThinkingLevel": "low",
		"modelThinkingLevels":  map[string]any{"scripted/scripted-1": "high"},
		"defaultTools":         []string{"read", "ls"},
		"sessionDir":           "my-sessions",
		"retry":                map[string]any{"baseDelayMs": 60000, "maxAgentDelayMs": 5},
	})
	p := w.start()
	st := p.state("1")
	assert.Equal(t, "high", st["thinkingLevel"], "modelThinkingLevels wins over defaultThinkingLevel")
	p.ok("2", map[string]any{"type": "prompt", "message": "hi"})
	rs := p.until(func(r record) bool { return r.is("agent_settled") })
	for _, r := range rs {
		if r.is("auto_retry_start") {
			assert.EqualValues(t, 5, r["delayMs"], "maxAgentDelayMs caps the backoff")
		}
	}
	file := p.state("3")["sessionFile"].(string)
	assert.Equal(t, filepath.Join(w.cwd, "my-sessions"), filepath.Dir(file))
	var names []string
	for _, tl := range w.srv.LastRequest(t).JSON()["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	assert.Equal(t, []string{"read", "ls"}, names)
	assert.Equal(t, 0, p.exit())

	// The environment variable wins over the setting.
	envDir := t.TempDir()
	cmd := launchArgv(t, w.cwd, w.agentDir, rpc.FramingNewline, []string{"PI_CODING_AGENT_SESSION_DIR=" + envDir},
		gopiBinary(t), "--mode", "rpc", "--model", "scripted/scripted-2")
	got := cmd.state("4")["sessionFile"].(string)
	assert.Equal(t, envDir, filepath.Dir(got))
	assert.Equal(t, 0, cmd.exit())
}

// get_session_stats counts as pi 1.5 does: the whole file, so a compaction
// takes nothing away from the counts and adds its summary's usage.
func TestRPCSessionStatsCoverTheWholeFile(t *testing.T) {
	t.Parallel()
	p := twoTurnsToCompact(t)
	stats := func(id string) record {
		return record(p.ok(id, map[string]any{"type": "get_session_stats"}).(map[string]any))
	}
	before := stats("s1")
	p.ok("c", map[string]any{"type": "compact"})
	after := stats("s2")
	for _, k := range []string{"userMessages", "assistantMessages", "totalMessages"} {
		assert.Equal(t, before[k], after[k], k)
	}
	assert.EqualValues(t, before.obj("tokens")["output"].(float64)+40, after.obj("tokens")["output"], "the summary's usage counts")
	assert.EqualValues(t, before.obj("tokens")["input"].(float64)+700, after.obj("tokens")["input"])
	assert.Equal(t, 0, p.exit())
}
