package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/core/session"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// userText is the text of the last user message of a model request.
func lastUserText(t *testing.T, req llmtest.Request) string {
	t.Helper()
	msgs := req.JSON()["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i].(map[string]any)
		if m["role"] != "user" {
			continue
		}
		switch c := m["content"].(type) {
		case string:
			return c
		case []any:
			var parts []string
			for _, b := range c {
				if s, ok := b.(map[string]any)["text"].(string); ok {
					parts = append(parts, s)
				}
			}
			return strings.Join(parts, "\n")
		}
	}
	return ""
}

func systemPrompt(req llmtest.Request) string {
	sys, _ := req.JSON()["system"].([]any)
	var out []string
	for _, b := range sys {
		out = append(out, b.(map[string]any)["text"].(string))
	}
	return strings.Join(out, "\n")
}

func TestRPCTemplatesAndSkills(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("hi Bob"), llmtest.Text("deploying"))
	writeFile(t, filepath.Join(w.agentDir, "prompts", "greet.md"), "---\ndescription: Greet people\n---\nSay hello to $1, then to everyone: $@.\n")
	w.trustProject()
	writeFile(t, filepath.Join(w.cwd, ".pi", "prompts", "review.md"), "Review the code in $ARGUMENTS carefully.\n")
	writeFile(t, filepath.Join(w.cwd, ".pi", "skills", "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Ship the app to staging\n---\nRun ./ship.sh and watch the logs.\n")
	writeFile(t, filepath.Join(w.agentDir, "prompts", "broken.md"), "---\ndescription: [unclosed\n---\nbody\n")
	p := w.start()

	cmds := p.ok("1", map[string]any{"type": "get_commands"}).(map[string]any)["commands"].([]any)
	byName := map[string]map[string]any{}
	for _, c := range cmds {
		byName[c.(map[string]any)["name"].(string)] = c.(map[string]any)
	}
	require.Contains(t, byName, "greet")
	assert.Equal(t, "prompt", byName["greet"]["source"])
	assert.Equal(t, "user", byName["greet"]["location"])
	assert.Equal(t, "Greet people", byName["greet"]["description"])
	assert.Equal(t, filepath.Join(w.agentDir, "prompts", "greet.md"), byName["greet"]["path"])
	assert.NotNil(t, byName["greet"]["sourceInfo"])
	require.Contains(t, byName, "review")
	assert.Equal(t, "project", byName["review"]["location"])
	require.Contains(t, byName, "skill:deploy")
	assert.Equal(t, "skill", byName["skill:deploy"]["source"])
	assert.Equal(t, "Ship the app to staging", byName["skill:deploy"]["description"])
	assert.NotContains(t, byName, "broken", "a template with bad frontmatter is skipped")
	assert.Eventually(t, func() bool { return strings.Contains(p.stderr.String(), "broken.md") }, waitLimit, pollEvery, "and reported on stderr")

	p.ok("2", map[string]any{"type": "prompt", "message": "/greet Bob Alice"})
	p.idle()
	req := w.srv.Requests()[0]
	assert.Equal(t, "Say hello to Bob, then to everyone: Bob Alice.", strings.TrimSpace(lastUserText(t, req)))
	sys := systemPrompt(req)
	assert.Contains(t, sys, "deploy")
	assert.Contains(t, sys, "Ship the app to staging")

	p.ok("3", map[string]any{"type": "prompt", "message": "/skill:deploy to staging now"})
	p.idle()
	text := lastUserText(t, w.srv.Requests()[1])
	assert.Contains(t, text, `<skill name="deploy"`)
	assert.Contains(t, text, "Run ./ship.sh and watch the logs.")
	assert.True(t, strings.HasSuffix(strings.TrimSpace(text), "to staging now"), text)
	assert.Equal(t, 0, p.exit())
}

func TestRPCThresholdCompaction(t *testing.T) {
	t.Parallel()
	big := llmtest.Text("third answer")
	big.Usage = llmtest.Usage{Input: 95000, Output: 100}
	w := newWorld(t,
		llmtest.Text("first answer"),
		llmtest.Text("second answer"),
		big,
		llmtest.Text("## Goal\nThe summary of the early conversation."),
		llmtest.Text("after compaction"),
	)
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"compaction": map[string]any{"keepRecentTokens": 50}})
	p := w.start()
	for i, msg := range []string{"one " + strings.Repeat("x ", 200), "two " + strings.Repeat("y ", 200)} {
		p.ok(string(rune('a'+i)), map[string]any{"type": "prompt", "message": msg})
		p.idle()
	}
	p.ok("c", map[string]any{"type": "prompt", "message": "three"})
	rs := p.until(func(r record) bool { return r.is("auto_compaction_end") })
	var start record
	for _, r := range rs {
		if r.is("auto_compaction_start") {
			start = r
		}
	}
	require.NotNil(t, start, "threshold compaction started\n%s", p.transcript())
	assert.Equal(t, "threshold", start.str("reason"))
	end := rs[len(rs)-1]
	require.NotNil(t, end.obj("result"), "compaction failed: %v", end["errorMessage"])
	assert.Equal(t, false, end["willRetry"])
	assert.Equal(t, false, end["aborted"])
	assert.Contains(t, end.obj("result").str("summary"), "The summary of the early conversation.")
	assert.NotEmpty(t, end.obj("result").str("firstKeptEntryId"))

	// The summariser got the old turns; the next prompt sees the summary.
	sumReq := string(w.srv.Requests()[3].Body)
	assert.Contains(t, sumReq, "first answer")
	st := p.ok("d", map[string]any{"type": "get_state"}).(map[string]any)
	assert.Equal(t, false, st["isCompacting"])
	assert.Equal(t, true, st["autoCompactionEnabled"])
	stats := p.ok("e", map[string]any{"type": "get_session_stats"}).(map[string]any)
	assert.Nil(t, stats["contextUsage"].(map[string]any)["tokens"], "size unknown until the next reply")
	p.ok("f", map[string]any{"type": "prompt", "message": "four"})
	p.idle()
	next := string(w.srv.Requests()[4].Body)
	assert.Contains(t, next, "The summary of the early conversation.")
	assert.NotContains(t, next, "first answer", "compacted turns left the context")
	file := st["sessionFile"].(string)
	assert.Equal(t, 0, p.exit())

	s, rep, err := session.Open(file)
	require.NoError(t, err)
	assert.True(t, rep.OK())
	var kinds []string
	for _, e := range s.Path() {
		kinds = append(kinds, string(e.Type()))
	}
	assert.Contains(t, kinds, "compaction")
}

func TestRPCOverflowCompactsAndRetries(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.Text("early answer"),
		llmtest.Text("middle answer"),
		llmtest.HTTPError(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}`),
		llmtest.Text("Summary: the user asked twice."),
		llmtest.Text("recovered"),
	)
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"compaction": map[string]any{"keepRecentTokens": 10}})
	p := w.start()
	p.ok("a", map[string]any{"type": "prompt", "message": "early " + strings.Repeat("word ", 100)})
	p.idle()
	p.ok("b", map[string]any{"type": "prompt", "message": "middle " + strings.Repeat("word ", 100)})
	p.idle()
	p.ok("c", map[string]any{"type": "prompt", "message": "the big one"})
	rs := p.until(func(r record) bool { return r.is("auto_compaction_end") })
	reason := ""
	for _, r := range rs {
		if r.is("auto_compaction_start") {
			reason = r.str("reason")
		}
	}
	assert.Equal(t, "overflow", reason)
	end := rs[len(rs)-1]
	require.NotNil(t, end.obj("result"), "compaction failed: %v\n%s", end["errorMessage"], p.transcript())
	assert.Equal(t, true, end["willRetry"])
	p.idle()
	text := p.ok("d", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)
	assert.Equal(t, "recovered", text["text"])
	retried := string(w.srv.Requests()[4].Body)
	assert.Contains(t, retried, "the big one", "the prompt was sent again")
	assert.NotContains(t, retried, "prompt is too long")
	assert.Equal(t, 0, p.exit())
}

func TestRPCManualCompact(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.Text("answer one"),
		llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("answer two")}, Usage: llmtest.Usage{Input: 1234, Output: 10}},
		llmtest.Text("Focused summary."),
	)
	w.trustProject()
	w.writeJSON(filepath.Join(w.cwd, ".pi", "settings.json"), map[string]any{"compaction": map[string]any{"keepRecentTokens": 10}})
	p := w.start()
	tooSmall := p.call("0", map[string]any{"type": "compact"})
	assert.Equal(t, false, tooSmall["success"])
	assert.Contains(t, tooSmall.str("error"), "Nothing to compact")
	for i, msg := range []string{"first " + strings.Repeat("a ", 100), "second " + strings.Repeat("b ", 100)} {
		p.ok(string(rune('a'+i)), map[string]any{"type": "prompt", "message": msg})
		p.idle()
	}
	res := p.ok("c", map[string]any{"type": "compact", "customInstructions": "Focus on the letters"}).(map[string]any)
	assert.Equal(t, "Focused summary.", strings.TrimSpace(res["summary"].(string)))
	assert.NotEmpty(t, res["firstKeptEntryId"])
	assert.Greater(t, res["tokensBefore"].(float64), 0.0)
	assert.Contains(t, string(w.srv.Requests()[2].Body), "Focus on the letters")
	again := p.call("d", map[string]any{"type": "compact"})
	assert.Equal(t, false, again["success"])
	assert.Contains(t, again.str("error"), "Already compacted")
	assert.Equal(t, 0, p.exit())
}

func TestRPCAutoRetry(t *testing.T) {
	t.Parallel()
	overloaded := llmtest.HTTPError(529, "")
	w := newWorld(t, overloaded, overloaded, llmtest.Text("finally"))
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"retry": map[string]any{"baseDelayMs": 10, "maxRetries": 3}})
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "try"})
	rs := p.until(func(r record) bool { return r.is("auto_retry_end") })
	var starts []record
	for _, r := range rs {
		if r.is("auto_retry_start") {
			starts = append(starts, r)
		}
	}
	require.Len(t, starts, 2)
	assert.EqualValues(t, 1, starts[0]["attempt"])
	assert.EqualValues(t, 3, starts[0]["maxAttempts"])
	assert.EqualValues(t, 10, starts[0]["delayMs"])
	assert.EqualValues(t, 20, starts[1]["delayMs"], "exponential backoff")
	assert.Contains(t, starts[0].str("errorMessage"), "529")
	end := rs[len(rs)-1]
	assert.Equal(t, true, end["success"])
	assert.EqualValues(t, 2, end["attempt"])
	text := p.ok("2", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)
	assert.Equal(t, "finally", text["text"])
	msgs := p.ok("3", map[string]any{"type": "get_messages"}).(map[string]any)["messages"].([]any)
	assert.Len(t, msgs, 3, "failed attempts leave the context (system, user, reply)")
	assert.Equal(t, 0, p.exit())
}

func TestRPCAutoRetryGivesUpAndSkipsPermanentErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.HTTPError(503, ""), llmtest.HTTPError(503, ""), llmtest.HTTPError(503, ""),
		llmtest.HTTPError(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`),
	)
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"retry": map[string]any{"baseDelayMs": 5, "maxRetries": 2}})
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "try"})
	rs := p.until(func(r record) bool { return r.is("auto_retry_end") })
	end := rs[len(rs)-1]
	assert.Equal(t, false, end["success"])
	assert.EqualValues(t, 2, end["attempt"])
	assert.Contains(t, end.str("finalError"), "503")

	p.ok("2", map[string]any{"type": "prompt", "message": "again"})
	rs = p.idle()
	st := p.ok("3", map[string]any{"type": "get_state"}).(map[string]any)
	assert.Equal(t, false, st["isStreaming"])
	for _, r := range rs {
		assert.False(t, r.is("auto_retry_start"), "401 is not retried")
	}
	assert.Len(t, w.srv.Requests(), 4)
	assert.Equal(t, 0, p.exit())
}

func TestRPCAbortRetryAndRetryAfter(t *testing.T) {
	t.Parallel()
	limited := llmtest.HTTPError(429, "")
	limited.Fault.RetryAfter = "30"
	w := newWorld(t, limited, llmtest.Text("unused"))
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"retry": map[string]any{"baseDelayMs": 10}})
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "try"})
	rs := p.until(func(r record) bool { return r.is("auto_retry_start") })
	assert.EqualValues(t, 30000, rs[len(rs)-1]["delayMs"], "the server's retry-after wins over the backoff")
	st := p.ok("2", map[string]any{"type": "get_state"}).(map[string]any)
	assert.Equal(t, true, st["isStreaming"], "a prompt waiting to retry is still in progress")
	// The cancelled wait ends (auto_retry_end) while abort_retry is being
	// answered: either may come first.
	p.send(map[string]any{"id": "3", "type": "abort_retry"})
	var end record
	answered := false
	p.until(func(r record) bool {
		if r.is("auto_retry_end") {
			end = r
		}
		if r.is("response") && r["id"] == "3" {
			answered = true
			assert.Equal(t, true, r["success"])
		}
		return end != nil && answered
	})
	assert.Equal(t, false, end["success"])
	assert.Equal(t, "Retry cancelled", end["finalError"])
	require.Eventually(t, func() bool {
		st := p.ok("4", map[string]any{"type": "get_state"}).(map[string]any)
		return st["isStreaming"] == false
	}, waitLimit, pollEvery)
	assert.Len(t, w.srv.Requests(), 1)

	p.ok("5", map[string]any{"type": "set_auto_retry", "enabled": false})
	p.ok("6", map[string]any{"type": "set_auto_compaction", "enabled": false})
	st = p.ok("7", map[string]any{"type": "get_state"}).(map[string]any)
	assert.Equal(t, false, st["autoCompactionEnabled"])
	assert.Equal(t, 0, p.exit())
}

func TestRPCCompactionFailureAndAbortLeaveTheSessionAlone(t *testing.T) {
	t.Parallel()
	stalled := llmtest.Text("a summary that never finishes")
	stalled.Fault = &llmtest.Fault{StallAfter: 2, Stall: true}
	big := llmtest.Text("third")
	big.Usage = llmtest.Usage{Input: 95000}
	w := newWorld(t,
		llmtest.Text("first"),
		llmtest.Text("second"),
		llmtest.HTTPError(400, `{"type":"error","error":{"type":"invalid_request_error","message":"bad summary request"}}`),
		big,
		stalled,
	)
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"compaction": map[string]any{"keepRecentTokens": 10}})
	p := w.start()
	for i, msg := range []string{"one " + strings.Repeat("z ", 100), "two " + strings.Repeat("y ", 100)} {
		p.ok(string(rune('a'+i)), map[string]any{"type": "prompt", "message": msg})
		p.idle()
	}

	// The summariser fails: the error says so and nothing changes.
	failed := p.call("2", map[string]any{"type": "compact"})
	assert.Equal(t, false, failed["success"])
	assert.Contains(t, failed.str("error"), "bad summary request")
	msgs := p.ok("3", map[string]any{"type": "get_messages"}).(map[string]any)["messages"].([]any)
	assert.Len(t, msgs, 5) // the system message and two exchanges

	// An automatic compaction that hangs is aborted by abort.
	p.ok("4", map[string]any{"type": "prompt", "message": "three"})
	p.until(func(r record) bool { return r.is("auto_compaction_start") })
	require.Eventually(t, func() bool {
		return p.ok("5", map[string]any{"type": "get_state"}).(map[string]any)["isCompacting"] == true
	}, waitLimit, pollEvery)
	p.send(map[string]any{"id": "6", "type": "abort"})
	rs := p.until(func(r record) bool { return r.is("response") && r["id"] == "6" })
	var end record
	for _, r := range rs {
		if r.is("auto_compaction_end") {
			end = r
		}
	}
	require.NotNil(t, end, "the compaction ended before abort answered\n%s", p.transcript())
	assert.Equal(t, true, end["aborted"])
	assert.Nil(t, end["result"])
	msgs = p.ok("7", map[string]any{"type": "get_messages"}).(map[string]any)["messages"].([]any)
	assert.Len(t, msgs, 7, "an aborted compaction changes nothing")
	assert.Equal(t, 0, p.exit())
}

// Issue 10: compact is registered in arrival order, so a prompt written
// right behind it (in the same write) waits for the compaction instead of
// being aborted by it or running while the transcript is replaced.
func TestRPCCompactThenPromptInOneWrite(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.Text("answer one"),
		llmtest.Text("answer two"),
		llmtest.Text("The summary."),
		llmtest.Text("answer three"),
	)
	w.trustProject()
	w.writeJSON(filepath.Join(w.cwd, ".pi", "settings.json"), map[string]any{"compaction": map[string]any{"keepRecentTokens": 10}})
	p := w.start()
	for i, msg := range []string{"first " + strings.Repeat("a ", 100), "second " + strings.Repeat("b ", 100)} {
		p.ok(string(rune('a'+i)), map[string]any{"type": "prompt", "message": msg})
		p.idle()
	}
	p.sendRaw(`{"id":"c","type":"compact"}` + "\n" + `{"id":"p","type":"prompt","message":"third"}`)
	rs := p.until(func(r record) bool { return r.is("agent_end") })
	var compactAt, promptAt = -1, -1
	for i, r := range rs {
		if r.is("response") && r["id"] == "c" {
			compactAt = i
			assert.Equal(t, true, r["success"], "compaction failed: %v\n%s", r["error"], p.transcript())
		}
		if r.is("response") && r["id"] == "p" {
			promptAt = i
			assert.Equal(t, true, r["success"], p.transcript())
		}
	}
	require.GreaterOrEqual(t, compactAt, 0, p.transcript())
	require.GreaterOrEqual(t, promptAt, 0, p.transcript())
	end := rs[len(rs)-1]
	msgs := end["messages"].([]any)
	last := record(msgs[len(msgs)-1].(map[string]any))
	assert.Equal(t, "stop", last.str("stopReason"), "the prompt ran to its end, not aborted\n%s", p.transcript())
	text := p.ok("t", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)
	assert.Equal(t, "answer three", text["text"])

	file := p.ok("s", map[string]any{"type": "get_state"}).(map[string]any)["sessionFile"].(string)
	assert.Equal(t, 0, p.exit())
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	body := string(b)
	iCompaction := strings.Index(body, `"type":"compaction"`)
	iThird := strings.Index(body, `"third"`)
	require.Positive(t, iCompaction)
	assert.Greater(t, iThird, iCompaction, "the new user message comes after the compaction entry")
}
