package main

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/core/session"
	"github.com/gopi-dev/gopi/internal/testenv"
)

// shape collapses a record stream into event names, with message_update
// and response qualified and runs of equal deltas and tool updates folded
// into one, so streams from different chunkings compare equal.
func shape(rs []record) []string {
	var out []string
	for _, r := range rs {
		name := r.str("type")
		switch name {
		case "message_update":
			name += "/" + r.obj("assistantMessageEvent").str("type")
		case "response":
			name += "/" + r.str("command")
		}
		if len(out) > 0 && out[len(out)-1] == name && (strings.HasSuffix(name, "_delta") || name == "tool_execution_update") {
			continue
		}
		out = append(out, name)
	}
	return out
}

// referenceShape is the shape of a transcript recorded from pi.
func referenceShape(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "shared", "reference", "pi-0.73.1", name))
	if os.IsNotExist(err) {
		f, err = os.Open(filepath.Join("..", "..", "testdata", "transcripts", name))
	}
	require.NoError(t, err)
	defer f.Close()
	return shape(readRecords(t, f))
}

func TestRPCToolCallMatchesPiTranscript(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("toolu_1", "bash", `{"command":"printf 'one\\n'; sleep 0.3; printf 'two\\n'"}`)),
		llmtest.Text("Both lines printed."),
	)
	// pi 0.73.1's wire is the older document's: --full-updates.
	p := w.start("--full-updates")
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "run it"})
	got := p.idle()
	p.send(map[string]any{"id": "2", "type": "get_session_stats"})
	got = append(got, p.response("2"))

	assert.Equal(t, referenceShape(t, "rpc-tool-call.jsonl"), shape(got))

	var end, result record
	for _, r := range got {
		assert.False(t, r["id"] != nil && !r.is("response"), "events carry no id")
		if r.is("tool_execution_end") {
			end = r
		}
		if r.is("message_end") && r.obj("message").str("role") == "toolResult" {
			result = r.obj("message")
		}
	}
	require.NotNil(t, end)
	assert.Equal(t, "toolu_1", end.str("toolCallId"))
	assert.Equal(t, false, end["isError"])
	assert.Contains(t, result["content"].([]any)[0].(map[string]any)["text"], "one\ntwo")

	// The tool's output reached the model in the second request.
	reqs := w.srv.Requests()
	require.Len(t, reqs, 2)
	assert.Contains(t, string(reqs[1].Body), "one\\ntwo")

	stats := got[len(got)-1].obj("data")
	assert.EqualValues(t, 1, stats["toolCalls"])
	assert.EqualValues(t, 1, stats["toolResults"])
	assert.EqualValues(t, 2, stats["assistantMessages"])
	assert.NotNil(t, stats["contextUsage"])
	assert.Equal(t, 0, p.exit())
}

// With --full-updates (the older protocol), every message_update carries
// the message so far twice.
func TestRPCMessageUpdateCarriesMessageAndPartial(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("Hello there, friend."))
	p := w.start("--full-updates")
	p.send(map[string]any{"type": "prompt", "message": "hi"})
	rs := p.idle()
	n := 0
	for _, r := range rs {
		if !r.is("message_update") {
			continue
		}
		n++
		require.NotNil(t, r.obj("message"), "message_update without message")
		ev := r.obj("assistantMessageEvent")
		require.NotNil(t, ev.obj("partial"), "assistantMessageEvent without partial: %v", ev)
		assert.Equal(t, "assistant", ev.obj("partial").str("role"))
	}
	assert.Greater(t, n, 3)
}

// Issue 16: by default message_update is pi 1.5's delta-only form: usage
// and the assistant event without partial; toolcall_start names the call,
// *_end events carry the block, message_end the whole message.
func TestRPCMessageUpdateIsDeltaOnlyByDefault(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("Hello there, friend."), llmtest.Call("t1", "read", `{"path":"x.txt"}`)}},
		llmtest.Text("done"),
	)
	p := w.start()
	p.send(map[string]any{"type": "prompt", "message": "hi"})
	rs := p.until(func(r record) bool { return r.is("agent_settled") })
	var text, toolID, toolName string
	var textEnds []string
	for _, r := range rs {
		if !r.is("message_update") {
			continue
		}
		assert.NotContains(t, r, "message", "delta-only: no message so far")
		require.NotNil(t, r.obj("usage"), "usage on every message_update: %v", r)
		ev := r.obj("assistantMessageEvent")
		assert.NotContains(t, ev, "partial")
		switch ev.str("type") {
		case "text_delta":
			text += ev.str("delta")
		case "text_end":
			textEnds = append(textEnds, ev.str("content"))
		case "toolcall_start":
			toolID, toolName = ev.str("id"), ev.str("toolName")
		}
	}
	assert.Equal(t, "Hello there, friend.done", text, "the deltas of both replies")
	assert.Equal(t, []string{"Hello there, friend.", "done"}, textEnds)
	assert.Contains(t, toolID, "t1")
	assert.Equal(t, "read", toolName)
	assert.Equal(t, 0, p.exit())
}

func TestRPCPromptErrorsAndParsing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("ok"))
	p := w.start()

	// Malformed JSON between valid commands: each gets its answer, in order.
	p.send(map[string]any{"id": "a", "type": "get_state"})
	p.sendRaw(`{"type": "get_state", oops}`)
	p.sendRaw(`[1,2,3]`)
	p.send(map[string]any{"id": "b", "type": "get_last_assistant_text"})
	p.send(map[string]any{"id": "c", "type": "frobnicate"})
	p.send(map[string]any{"id": "d", "type": "prompt", "message": 5})
	p.send(map[string]any{"id": "e", "type": "set_session_name", "name": "  "})
	p.send(map[string]any{"id": "f", "type": "set_thinking_level", "level": "extreme"})
	p.send(map[string]any{"id": 7, "type": "set_steering_mode", "mode": "all"})
	p.sendRaw(`{"id":"g","type":"get_state"}` + "\r")

	a := p.next()
	assert.Equal(t, "a", a["id"])
	assert.Equal(t, true, a["success"])
	bad := p.next()
	assert.Equal(t, record{"type": "response", "command": "parse", "success": false, "error": bad["error"]}, bad)
	assert.True(t, strings.HasPrefix(bad.str("error"), "Failed to parse command: "), bad.str("error"))
	arr := p.next()
	assert.Equal(t, "parse", arr.str("command"))
	assert.Contains(t, arr.str("error"), "JSON object")
	b := p.next()
	assert.Equal(t, "b", b["id"])
	assert.Equal(t, map[string]any{"text": nil}, b["data"])
	c := p.next()
	assert.Equal(t, "Unknown command: frobnicate", c.str("error"))
	assert.Equal(t, "c", c["id"])
	d := p.next()
	assert.Equal(t, false, d["success"])
	assert.Contains(t, d.str("error"), `"message"`)
	e := p.next()
	assert.Equal(t, "Session name cannot be empty", e.str("error"))
	f := p.next()
	assert.Contains(t, f.str("error"), `"level"`)
	seven := p.next()
	assert.EqualValues(t, 7, seven["id"], "numeric ids are echoed as sent")
	assert.Equal(t, true, seven["success"])
	g := p.next()
	assert.Equal(t, "g", g["id"], "a trailing CR is stripped")

	assert.Equal(t, 0, p.exit())
}

func TestRPCSteerAndFollowUpWhileStreaming(t *testing.T) {
	t.Parallel()
	stall := llmtest.Text("working on it")
	stall.Fault = &llmtest.Fault{StallAfter: 3, Stall: true}
	w := newWorld(t, stall, llmtest.Text("steered"), llmtest.Text("followed up"))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "start"})
	p.until(func(r record) bool { return r.is("message_update") })

	busy := p.call("2", map[string]any{"type": "prompt", "message": "again"})
	assert.Equal(t, false, busy["success"])
	assert.Contains(t, busy.str("error"), "streamingBehavior")

	st := p.ok("3", map[string]any{"type": "get_state"}).(map[string]any)
	assert.Equal(t, true, st["isStreaming"])

	p.ok("4", map[string]any{"type": "prompt", "message": "then this", "streamingBehavior": "followUp"})
	p.ok("5", map[string]any{"type": "steer", "message": "change course"})
	st = p.ok("6", map[string]any{"type": "get_state"}).(map[string]any)
	assert.EqualValues(t, 2, st["pendingMessageCount"])

	w.srv.Release()
	rs := p.idle()
	var users []string
	for _, r := range rs {
		if r.is("message_start") && r.obj("message").str("role") == "user" {
			users = append(users, r.obj("message")["content"].([]any)[0].(map[string]any)["text"].(string))
		}
	}
	assert.Equal(t, []string{"change course", "then this"}, users, "steering first, the follow-up when the run would stop")
	reqs := w.srv.Requests()
	require.Len(t, reqs, 3)
	assert.Contains(t, string(reqs[1].Body), "change course")
	assert.Contains(t, string(reqs[2].Body), "then this")
	assert.Equal(t, 0, p.exit())
}

func TestRPCAbortMidStream(t *testing.T) {
	t.Parallel()
	stall := llmtest.Text("a long answer that never ends")
	stall.Fault = &llmtest.Fault{StallAfter: 3, Stall: true}
	w := newWorld(t, stall, llmtest.Text("after abort"))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "go"})
	p.until(func(r record) bool { return r.is("message_update") })
	p.send(map[string]any{"id": "2", "type": "abort"})
	rs := p.until(func(r record) bool { return r.is("response") && r["id"] == "2" })
	require.Contains(t, types(rs), "agent_end", "abort answers after the run ended")
	assert.Equal(t, true, rs[len(rs)-1]["success"])
	var last record
	for _, r := range rs {
		if r.is("message_end") {
			last = r.obj("message")
		}
	}
	assert.Equal(t, "aborted", last.str("stopReason"))
	// The session goes on.
	p.ok("3", map[string]any{"type": "prompt", "message": "next"})
	p.idle()
	text := p.ok("4", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)
	assert.Equal(t, "after abort", text["text"])
	assert.Equal(t, 0, p.exit())
}

func TestRPCAbortMidToolKillsTheProcess(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "started")
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("t1", "bash", `{"command":"touch `+marker+`; sleep 37.25"}`)),
		llmtest.Text("unused"),
	)
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "sleep"})
	p.until(func(r record) bool { return r.is("tool_execution_start") })
	require.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, waitLimit, pollEvery)
	p.send(map[string]any{"id": "2", "type": "abort"})
	rs := p.until(func(r record) bool { return r.is("response") && r["id"] == "2" })
	var end record
	for _, r := range rs {
		if r.is("tool_execution_end") {
			end = r
		}
	}
	require.NotNil(t, end)
	assert.Equal(t, true, end["isError"])
	assert.False(t, processRunning("sleep 37.25"), "the tool's process group was killed")
	assert.Equal(t, 0, p.exit())
}

func TestRPCPromptWithImageAndHugeLine(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("a red dot"), llmtest.Text("that was long"))
	p := w.start()
	img := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nnot really a png"))
	p.ok("1", map[string]any{"type": "prompt", "message": "what is this?", "images": []any{
		map[string]any{"type": "image", "data": img, "mimeType": "image/png"},
	}})
	p.idle()
	body := w.srv.Requests()[0].JSON()
	raw, _ := json.Marshal(body["messages"])
	assert.Contains(t, string(raw), img)
	assert.Contains(t, string(raw), "image/png")

	// An 8 MB line is one command. (Far past every buffer on the way; the
	// race-built binary takes seconds over a larger one, most of them in
	// the Anthropic SDK's request encoding.)
	huge := strings.Repeat("0123456789", 800<<10)
	p.ok("2", map[string]any{"type": "prompt", "message": huge})
	p.idle()
	reqs := w.srv.Requests()
	assert.Contains(t, string(reqs[1].Body), huge[:1000])
	assert.Greater(t, len(reqs[1].Body), len(huge))
	assert.Equal(t, 0, p.exit())
}

func TestRPCStdinClosedMidStreamLeavesALoadableSession(t *testing.T) {
	t.Parallel()
	stall := llmtest.Text("halfway there")
	stall.Fault = &llmtest.Fault{StallAfter: 3, Stall: true}
	w := newWorld(t, llmtest.Text("first answer"), stall)
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "first"})
	p.idle()
	file := p.ok("2", map[string]any{"type": "get_state"}).(map[string]any)["sessionFile"].(string)
	require.NotEmpty(t, file)
	p.ok("3", map[string]any{"type": "prompt", "message": "second"})
	p.until(func(r record) bool { return r.is("message_update") })
	assert.Equal(t, 0, p.exit(), "stdin EOF ends gopi with status 0")

	st, rep, err := session.Open(file)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "damaged lines: %v", rep.Damaged)
	var roles []string
	for _, m := range st.Context().Messages {
		roles = append(roles, string(m.MessageRole()))
	}
	assert.Equal(t, []string{"system", "user", "assistant", "user", "assistant"}, roles)
	last := st.Context().Messages[4].(*llm.AssistantMessage)
	assert.Equal(t, llm.StopAborted, last.StopReason)
}

func TestRPCSignalsAbortAndExitZero(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "started")
			w := newWorld(t, llmtest.ToolCalls(llmtest.Call("t1", "bash", `{"command":"touch `+marker+`; sleep 41.5"}`)))
			p := w.start()
			p.ok("1", map[string]any{"type": "prompt", "message": "sleep"})
			require.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, waitLimit, pollEvery)
			file := p.ok("2", map[string]any{"type": "get_state"}).(map[string]any)["sessionFile"].(string)
			p.signal(sig)
			assert.Equal(t, 0, p.wait())
			assert.False(t, processRunning("sleep 41.5"))
			_, rep, err := session.Open(file)
			require.NoError(t, err)
			assert.True(t, rep.OK())
		})
	}
}

// TestRPCSessionFileHasPiShape compares the keys of every entry gopi
// wrote with those pi wrote for the same entry type: pi 1.5.2's session
// (the transcript's), and pi 0.73.1's for the entry types that one lacks.
func TestRPCSessionFileHasPiShape(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("toolu_9", "read", `{"path":"greeting.txt"}`)),
		llmtest.Text("It says hello."),
	)
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "greeting.txt"), []byte("hello file\n"), 0o644))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "read: greeting.txt"})
	p.idle()
	p.ok("2", map[string]any{"type": "bash", "command": "echo from bash"})
	p.ok("3", map[string]any{"type": "set_session_name", "name": "shape check"})
	p.ok("4", map[string]any{"type": "set_model", "provider": "scripted", "modelId": "scripted-2"})
	file := p.ok("5", map[string]any{"type": "get_state"}).(map[string]any)["sessionFile"].(string)
	assert.Equal(t, 0, p.exit())

	ref := entryShapes(t, filepath.Join("..", "..", "testdata", "sessions", "pi-0.73.1.jsonl"))
	maps.Copy(ref, entryShapes(t, filepath.Join(piTranscriptDir, "scenario-session.jsonl")))
	got := entryShapes(t, file)
	require.NotEmpty(t, got)
	for kind, keys := range got {
		want, ok := ref[kind]
		if !ok {
			continue // an entry pi's reference does not have
		}
		assert.Equal(t, want, keys, "keys of %s", kind)
	}
	for _, kind := range []string{"session", "model_change", "thinking_level_change", "message/user", "message/assistant", "message/toolResult", "message/bashExecution", "session_info"} {
		assert.Contains(t, got, kind)
	}
}

// entryShapes maps "type" (and "message/role") to the sorted keys seen.
func entryShapes(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		kind := e["type"].(string)
		keys := sortedKeys(e)
		if m, ok := e["message"].(map[string]any); ok {
			kind += "/" + m["role"].(string)
			mk := sortedKeys(m)
			// Optional fields pi omits when empty.
			keys += " | " + strings.Join(without(strings.Split(mk, ","), "fullOutputPath", "errorMessage", "details", "excludeFromContext", "responseId", "exitCode", "rawStopReason"), ",")
		}
		out[kind] = keys
	}
	return out
}

func sortedKeys(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func without(list []string, drop ...string) []string {
	var out []string
	for _, s := range list {
		keep := true
		for _, d := range drop {
			if s == d {
				keep = false
			}
		}
		if keep {
			out = append(out, s)
		}
	}
	return out
}

// TestRPCDocsPythonClient runs the Python client printed in docs/rpc.md
// against the binary, so the documented example keeps working.
func TestRPCDocsPythonClient(t *testing.T) {
	t.Parallel()
	python := testenv.LookPath(t, "python3")
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "rpc.md"))
	require.NoError(t, err)
	parts := strings.SplitN(string(doc), "```python\n", 2)
	require.Len(t, parts, 2, "docs/rpc.md has a python block")
	code := strings.SplitN(parts[1], "```", 2)[0]
	script := filepath.Join(t.TempDir(), "client.py")
	require.NoError(t, os.WriteFile(script, []byte(code), 0o644))

	cmd := exec.Command(python, script, "reply: streamed through python")
	cmd.Dir = t.TempDir()
	cmd.Env = append(binaryEnv(), "GOPI="+gopiBinary(t), "PI_CODING_AGENT_DIR="+t.TempDir(),
		"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "GEMINI_API_KEY=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "streamed through python\n", string(out))
}

// A client that has seen agent_end may prompt at once, as pi's RpcClient
// does after waitForIdle; the agent winding down must not refuse it.
func TestRPCPromptRightAfterAgentEnd(t *testing.T) {
	t.Parallel()
	const rounds = 40
	var turns []llmtest.Turn
	for range rounds {
		turns = append(turns, llmtest.Text("ok"))
	}
	w := newWorld(t, turns...)
	p := w.start()
	for i := range rounds {
		p.ok("p"+strconv.Itoa(i), map[string]any{"type": "prompt", "message": "again"})
		p.idle()
		st := p.ok("s"+strconv.Itoa(i), map[string]any{"type": "get_state"}).(map[string]any)
		require.Equal(t, false, st["isStreaming"], "round %d", i)
	}
	assert.Equal(t, 0, p.exit())
}

// The order the scheduler keeps, through the binary (issue 28): a bash
// takes its first step in arrival order and finishes alongside later
// commands, so a get_state sent right behind it is answered first and an
// abort_bash behind that reaches it; a prompt's response precedes its
// run's agent_start.
func TestRPCCommandOrder(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("done"))
	p := w.start()
	p.send(map[string]any{"id": "1", "type": "bash", "command": "sleep 38.25"})
	p.send(map[string]any{"id": "2", "type": "get_state"})
	r := p.next()
	require.True(t, r.is("response") && r["id"] == "2", "get_state is answered while bash runs, got %v\n%s", r, p.transcript())
	assert.Equal(t, true, r["success"])

	p.send(map[string]any{"id": "3", "type": "abort_bash"})
	answered := map[any]record{}
	for len(answered) < 2 {
		r := p.next()
		require.True(t, r.is("response"), "bash emits no events: %v", r)
		answered[r["id"]] = r
	}
	assert.Equal(t, true, answered["3"]["success"])
	assert.Equal(t, true, answered["1"].obj("data")["cancelled"], "abort_bash reached the bash before it")
	assert.False(t, processRunning("sleep 38.25"))

	p.send(map[string]any{"id": "4", "type": "prompt", "message": "hi"})
	r = p.next()
	require.True(t, r.is("response") && r["id"] == "4", "the prompt's response comes first, got %v\n%s", r, p.transcript())
	assert.Equal(t, "started", r.obj("data")["disposition"])
	r = p.next()
	assert.True(t, r.is("agent_start"), "then its run's agent_start, got %v", r)
	p.idle()
	assert.Equal(t, 0, p.exit())
}
