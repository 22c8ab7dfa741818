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

func TestRPCStateModelAndThinkingCommands(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("hello"))
	p := w.start("--models", "scripted/scripted-1,scripted/scripted-2", "--thinking", "high")

	st := p.ok("1", map[string]any{"type": "get_state"}).(map[string]any)
	for _, k := range []string{"model", "thinkingLevel", "isStreaming", "isCompacting", "steeringMode", "followUpMode", "sessionFile", "sessionId", "autoCompactionEnabled", "messageCount", "pendingMessageCount"} {
		assert.Contains(t, st, k)
	}
	assert.Equal(t, "scripted-1", st["model"].(map[string]any)["id"])
	assert.Equal(t, "high", st["thinkingLevel"])
	assert.Equal(t, "one-at-a-time", st["steeringMode"])
	assert.NotContains(t, st, "sessionName")

	models := p.ok("2", map[string]any{"type": "get_available_models"}).(map[string]any)["models"].([]any)
	var ids []string
	for _, m := range models {
		ids = append(ids, m.(map[string]any)["provider"].(string)+"/"+m.(map[string]any)["id"].(string))
	}
	assert.Contains(t, ids, "scripted/scripted-1")
	assert.Contains(t, ids, "scripted/scripted-2")

	cyc := p.ok("3", map[string]any{"type": "cycle_model"}).(map[string]any)
	assert.Equal(t, "scripted-2", cyc["model"].(map[string]any)["id"])
	assert.Equal(t, true, cyc["isScoped"])
	assert.Equal(t, "off", cyc["thinkingLevel"], "a model without reasoning thinks off")
	lvl := p.call("4", map[string]any{"type": "cycle_thinking_level"})
	assert.Contains(t, lvl, "data")
	assert.Nil(t, lvl["data"], "no levels to cycle without reasoning")

	set := p.ok("5", map[string]any{"type": "set_model", "provider": "scripted", "modelId": "scripted-1"}).(map[string]any)
	assert.Equal(t, "scripted-1", set["id"])
	assert.Equal(t, "anthropic-messages", set["api"])
	bad := p.call("6", map[string]any{"type": "set_model", "provider": "nope", "modelId": "none"})
	assert.Equal(t, "Model not found: nope/none", bad.str("error"))

	p.ok("7", map[string]any{"type": "set_thinking_level", "level": "low"})
	next := p.ok("8", map[string]any{"type": "cycle_thinking_level"}).(map[string]any)
	assert.Equal(t, "medium", next["level"])
	p.ok("9", map[string]any{"type": "set_steering_mode", "mode": "all"})
	p.ok("10", map[string]any{"type": "set_follow_up_mode", "mode": "all"})
	st = p.ok("11", map[string]any{"type": "get_state"}).(map[string]any)
	assert.Equal(t, "medium", st["thinkingLevel"])
	assert.Equal(t, "all", st["steeringMode"])
	assert.Equal(t, "all", st["followUpMode"])

	// The run uses the chosen model and level.
	p.ok("12", map[string]any{"type": "prompt", "message": "hi"})
	p.idle()
	body := w.srv.Requests()[0].JSON()
	assert.Equal(t, "scripted-1", body["model"])
	assert.NotNil(t, body["thinking"], "a reasoning level reaches the request")

	// One model in scope: nothing to cycle.
	assert.Equal(t, 0, p.exit())
	p = w.start("--models", "scripted/scripted-1")
	one := p.call("1", map[string]any{"type": "cycle_model"})
	assert.Equal(t, true, one["success"])
	assert.Nil(t, one["data"])
	assert.Equal(t, 0, p.exit())
}

func TestRPCBashCommand(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("seen"))
	p := w.start()

	res := p.ok("1", map[string]any{"type": "bash", "command": "echo out; echo err >&2; exit 3"}).(map[string]any)
	assert.Equal(t, "out\nerr\n", res["output"])
	assert.EqualValues(t, 3, res["exitCode"])
	assert.Equal(t, false, res["cancelled"])
	assert.Equal(t, false, res["truncated"])

	// Truncated output names a complete file by the time of the answer.
	big := p.ok("2", map[string]any{"type": "bash", "command": "seq 1 100000"}).(map[string]any)
	assert.Equal(t, true, big["truncated"])
	full, err := os.ReadFile(big["fullOutputPath"].(string))
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(full), "99999\n100000\n"))
	assert.True(t, strings.HasPrefix(string(full), "1\n2\n3\n"))

	// abort_bash right behind bash cancels it (the client does not wait).
	p.send(map[string]any{"id": "3", "type": "bash", "command": "sleep 43.5"})
	p.send(map[string]any{"id": "4", "type": "abort_bash"})
	rs := p.until(func(r record) bool { return r.is("response") && r["id"] == "3" })
	cancelled := rs[len(rs)-1].obj("data")
	assert.Equal(t, true, cancelled["cancelled"])
	assert.Nil(t, cancelled["exitCode"])
	assert.False(t, processRunning("sleep 43.5"))

	// No event was emitted for any of it; the next prompt carries it.
	for _, r := range rs {
		assert.True(t, r.is("response"), "bash emits no events: %v", r)
	}
	p.ok("5", map[string]any{"type": "prompt", "message": "what ran?"})
	p.idle()
	sent := w.srv.Requests()[0].JSON()["messages"].([]any)
	first := sent[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	assert.True(t, strings.HasPrefix(first, "Ran `echo out; echo err >&2; exit 3`\n```\nout\nerr\n"), "bash reached the model as %q", first)
	msgs := p.ok("6", map[string]any{"type": "get_messages"}).(map[string]any)["messages"].([]any)
	assert.Equal(t, "bashExecution", msgs[0].(map[string]any)["role"])
	assert.Equal(t, 0, p.exit())
}

func TestRPCSessionCommands(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("first reply"), llmtest.Text("second reply"))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "one"})
	p.idle()
	p.ok("2", map[string]any{"type": "prompt", "message": "two"})
	p.idle()

	text := p.ok("3", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)
	assert.Equal(t, "second reply", text["text"])
	forks := p.ok("4", map[string]any{"type": "get_fork_messages"}).(map[string]any)["messages"].([]any)
	require.Len(t, forks, 2)
	assert.Equal(t, "one", forks[0].(map[string]any)["text"])
	assert.NotEmpty(t, forks[0].(map[string]any)["entryId"])

	stats := p.ok("5", map[string]any{"type": "get_session_stats"}).(map[string]any)
	assert.EqualValues(t, 2, stats["userMessages"])
	assert.EqualValues(t, 5, stats["totalMessages"], "the system message counts, as in pi")
	usage := stats["contextUsage"].(map[string]any)
	assert.EqualValues(t, 100000, usage["contextWindow"])

	p.ok("6", map[string]any{"type": "set_session_name", "name": "  my work  "})
	st := p.ok("7", map[string]any{"type": "get_state"}).(map[string]any)
	assert.Equal(t, "my work", st["sessionName"])
	assert.EqualValues(t, 5, st["messageCount"])
	first := st["sessionFile"].(string)

	cmds := p.ok("8", map[string]any{"type": "get_commands"}).(map[string]any)
	assert.NotNil(t, cmds["commands"])

	res := p.ok("9", map[string]any{"type": "new_session", "parentSession": first}).(map[string]any)
	assert.Equal(t, false, res["cancelled"])
	st = p.ok("10", map[string]any{"type": "get_state"}).(map[string]any)
	assert.EqualValues(t, 0, st["messageCount"])
	assert.NotEqual(t, first, st["sessionFile"])
	p.ok("11", map[string]any{"type": "prompt", "message": "fresh"})
	p.idle()
	second := st["sessionFile"].(string)

	list := p.ok("12", map[string]any{"type": "list_sessions"}).(map[string]any)["sessions"].([]any)
	require.Len(t, list, 2)
	newest := list[0].(map[string]any)
	assert.Equal(t, second, newest["path"])
	assert.Equal(t, "fresh", newest["firstMessage"])
	assert.Equal(t, "my work", list[1].(map[string]any)["name"])
	assert.Equal(t, 0, p.exit())

	st2, _, err := session.Open(second)
	require.NoError(t, err)
	assert.Equal(t, first, st2.Header().ParentSession)
	assert.Equal(t, filepath.Dir(first), filepath.Dir(second))
}
