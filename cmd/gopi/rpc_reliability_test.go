package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/rpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 17: a session file whose parentId chain loops used to load one
// message twice.
func TestRPCSessionWithAParentLoopLoadsEachMessageOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	file := filepath.Join(t.TempDir(), "loop.jsonl")
	lines := `{"type":"session","version":3,"id":"s1","timestamp":"2026-11-21T14:12:12.199Z","cwd":"/x"}
{"type":"message","id":"aaaa0001","parentId":"aaaa0003","timestamp":"2026-11-21T14:12:13.000Z","message":{"role":"user","content":"one","timestamp":1}}
{"type":"message","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-11-21T14:12:14.000Z","message":{"role":"user","content":"two","timestamp":2}}
{"type":"message","id":"aaaa0003","parentId":"aaaa0002","timestamp":"2026-11-21T14:12:15.000Z","message":{"role":"user","content":"three","timestamp":3}}
`
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	p := w.start("--session", file)
	var texts []any
	for _, m := range p.messages("1") {
		texts = append(texts, m.(map[string]any)["content"])
	}
	assert.Len(t, texts, 3, "%v", texts)
	tree := p.ok("2", map[string]any{"type": "get_tree"}).(map[string]any)["tree"].([]any)
	assert.NotEmpty(t, tree, "the loop still shows in the tree")
	assert.Equal(t, 0, p.exit())
}

// Issue 17: {"type":"prompt"} without a message used to be accepted and
// send an empty message; pi refuses it.
func TestRPCPromptWithoutMessageIsRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := w.start()
	r := p.call("1", map[string]any{"type": "prompt"})
	assert.Equal(t, false, r["success"])
	assert.Contains(t, r.str("error"), "message")
	assert.Empty(t, w.srv.Requests(), "nothing reached the model")
	assert.Equal(t, 0, p.exit())
}

// Issue 17: after a frame with an unreadable Content-Length, the next
// valid frame is answered (gopi used to stay out of step for good), and a
// huge header line comes back as a short -32700, not quoted whole.
func TestJSONRPCBadFramesResynchronise(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := w.startJSONRPC(true, scriptedArgs("--mode", "jsonrpc")...)
	p.call("pi/get_state", nil) // the first frame sets the framing
	_, err := io.WriteString(p.stdin, strings.Repeat("y", 1<<20)+"\r\n\r\n")
	require.NoError(t, err)
	r := p.next()
	assert.EqualValues(t, -32700, r.obj("error")["code"])
	assert.Less(t, len(r.obj("error").str("message")), 300, "the header line is not echoed back whole")

	_, err = io.WriteString(p.stdin, "Content-Length: abc\r\n\r\n"+`{"jsonrpc":"2.0","id":1,"method":"pi/get_state"}`)
	require.NoError(t, err)
	r = p.next()
	assert.EqualValues(t, -32700, r.obj("error")["code"])
	assert.Nil(t, r["id"])

	state := p.call("pi/get_state", nil).(map[string]any)
	assert.Equal(t, "scripted-1", record(state).obj("model").str("id"), "the next valid frame is answered")
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}

// Issue 17: a request with "id": null used to get no answer at all
// (jsonrpc2 takes it for a notification); it is answered, with id null.
func TestJSONRPCNullIDIsAnswered(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := w.startJSONRPC(true, scriptedArgs("--mode", "jsonrpc")...)
	p.writeRaw(`{"jsonrpc":"2.0","id":null,"method":"pi/get_state"}`)
	r := p.next()
	assert.Contains(t, r, "id")
	assert.Nil(t, r["id"])
	assert.EqualValues(t, -32600, r.obj("error")["code"])
	assert.Contains(t, r.obj("error").str("message"), "null")
	// A notification (no id at all) still gets no answer, and the
	// connection goes on.
	p.notify("initialized", map[string]any{})
	state := p.call("pi/get_state", nil).(map[string]any)
	assert.NotEmpty(t, record(state).str("sessionId"))
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}

// Issue 17: a bash command the user runs while a reply streams is saved
// when the run settles, even if no prompt follows (pi 0.73.1 loses it).
func TestRPCBashDuringAStreamIsSavedWhenTheRunSettles(t *testing.T) {
	t.Parallel()
	stalled := llmtest.Text("a reply that waits")
	stalled.Fault = &llmtest.Fault{StallAfter: 2, Stall: true}
	w := newWorld(t, stalled)
	p := w.start()
	file := p.state("0")["sessionFile"].(string)
	p.ok("1", map[string]any{"type": "prompt", "message": "hello"})
	p.until(func(r record) bool { return r.is("message_start") && r.obj("message").str("role") == "assistant" })
	out := p.ok("2", map[string]any{"type": "bash", "command": "echo during the stream"}).(map[string]any)
	assert.Contains(t, out["output"], "during the stream")
	w.srv.Release()
	p.until(func(r record) bool { return r.is("agent_settled") })
	require.Equal(t, 0, p.exit())

	st := loadSession(t, file)
	var found bool
	for _, m := range st.Context().Messages {
		if b, ok := m.(*llm.BashExecutionMessage); ok && b.Command == "echo during the stream" {
			found = true
		}
	}
	assert.True(t, found, "the bash command is not in the session")
}

// Issue 17: a session write that fails (here the session directory turns
// into a file, as good as a full disk) is told to the client, keeps the
// entries in memory, is retried by the next write, and makes gopi exit
// non-zero if the file still lacks entries at exit.
func TestRPCSessionWriteFailuresAreReportedAndRetried(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("one"), llmtest.Text("two"), llmtest.Text("three"), llmtest.Text("four"))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "first"})
	p.until(func(r record) bool { return r.is("agent_settled") })
	file := p.state("2")["sessionFile"].(string)
	dir := filepath.Dir(file)
	breakDir := func() {
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, os.WriteFile(dir, []byte("not a directory"), 0o644))
	}
	mendDir := func() {
		require.NoError(t, os.Remove(dir))
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}

	breakDir()
	p.ok("3", map[string]any{"type": "prompt", "message": "second"})
	rs := p.until(func(r record) bool { return r.is("agent_settled") })
	var failure record
	for _, r := range rs {
		if r.is("session_write_error") && failure == nil {
			failure = r
		}
	}
	require.NotNil(t, failure, "no session_write_error event\n%s", p.transcript())
	assert.Contains(t, failure.str("error"), "saving")
	assert.Equal(t, file, failure.str("sessionFile"))
	named := p.call("4", map[string]any{"type": "set_session_name", "name": "kept"})
	assert.Equal(t, false, named["success"], "a command whose result was not saved fails")
	assert.Contains(t, named.str("error"), "saving the session name")

	// Space is back: the next write makes up for every entry.
	mendDir()
	p.ok("5", map[string]any{"type": "prompt", "message": "third"})
	rs = p.until(func(r record) bool { return r.is("agent_settled") })
	var saved bool
	for _, r := range rs {
		saved = saved || r.is("session_saved")
	}
	assert.True(t, saved, "no session_saved event once writing worked again")
	var texts []string
	for _, m := range conversation(loadSession(t, file).Context().Messages) {
		if u, ok := m.(*llm.UserMessage); ok {
			texts = append(texts, u.Content.Text())
		}
	}
	assert.Equal(t, []string{"first", "second", "third"}, texts)
	assert.Equal(t, "kept", loadSession(t, file).Name(), "the name set while writes failed is saved too")

	// Still broken at exit: gopi says so and exits non-zero.
	breakDir()
	p.ok("6", map[string]any{"type": "prompt", "message": "fourth"})
	p.until(func(r record) bool { return r.is("agent_settled") })
	assert.Equal(t, 1, p.exit())
	assert.Contains(t, p.stderr.String(), "the session file is missing entries")
}

// Issue 17: invalid UTF-8 in a request (an id, a method or command name)
// used to come back raw in responses and errors. Everything gopi writes
// is valid UTF-8, in both dialects.
func TestInvalidUTF8NeverReachesTheOutput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, input string }{
		{"rpc", "{\"type\":\"\xff\xfe\"}\n{\"id\":\"a\xffb\",\"type\":\"get_state\"}\n{\"id\":\"\xc3\",\"type\":\"prompt\"}\n"},
		{"jsonrpc", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi/\xff\xfe\",\"params\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"nope\"}\n"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(gopiBinary(t), "--mode", tc.mode)
			cmd.Dir = t.TempDir()
			cmd.Env = append(binaryEnv(), "PI_CODING_AGENT_DIR="+t.TempDir(), "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "GEMINI_API_KEY=")
			cmd.Stdin = strings.NewReader(tc.input)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			require.NoError(t, err, stderr.String())
			raceFree(t, stderr.String())
			require.NotEmpty(t, out)
			assert.True(t, utf8.Valid(out), "gopi wrote bytes that are not UTF-8:\n%q", out)
			assert.Contains(t, string(out), "\uFFFD")
		})
	}
}

// Issue 17: of two JSON-RPC requests sharing an id, one used to go
// unanswered, and a get_state reusing a running prompt's id stopped that
// prompt's events. The second is now refused (-32600) and the first goes
// on.
func TestJSONRPCDuplicateIDsAreRefused(t *testing.T) {
	t.Parallel()
	stalled := llmtest.Text("the reply")
	stalled.Fault = &llmtest.Fault{StallAfter: 2, Stall: true}
	w := newWorld(t, stalled)
	p := w.startJSONRPC(true, scriptedArgs("--mode", "rpc")...)
	p.call("initialize", map[string]any{"capabilities": map[string]any{}})
	p.notify("initialized", map[string]any{})

	// A long request (bash) and another with its id.
	p.write(map[string]any{"id": 50, "method": "pi/bash", "params": map[string]any{"command": "sleep 0.5; echo slow"}})
	p.write(map[string]any{"id": 50, "method": "pi/get_state"})
	var replies []record
	p.until(func(r record) bool {
		if r["method"] == nil && r["id"] == float64(50) {
			replies = append(replies, r)
		}
		return len(replies) == 2
	})
	require.NotNil(t, replies[0]["error"], "the duplicate is answered first, at once: %v", replies)
	assert.EqualValues(t, -32600, replies[0].obj("error")["code"])
	assert.Contains(t, replies[1].obj("result").str("output"), "slow", "the first request still gets its answer")

	// A prompt whose run is going keeps its id.
	p.write(map[string]any{"id": 60, "method": "pi/prompt", "params": map[string]any{"message": "hi"}})
	p.until(func(r record) bool {
		return event(r, "message_start") && r.obj("params").obj("message").str("role") == "assistant"
	})
	p.write(map[string]any{"id": 60, "method": "pi/get_state"})
	dup := p.reply(60)
	require.NotNil(t, dup["error"], "%v", dup)
	assert.EqualValues(t, -32600, dup.obj("error")["code"])
	w.srv.Release()
	p.until(func(r record) bool { return event(r, "agent_settled") })
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}

// Issue 17: a context overflow in a session too small to compact used to
// end with willRetry:true and nothing after it. Now the request is tried
// once more as it is (pi 0.73.1 recovers the same way), and a second
// overflow ends the prompt with a clear error.
func TestRPCOverflowOnASmallSessionEndsInAReplyOrAClearError(t *testing.T) {
	t.Parallel()
	overflow := llmtest.HTTPError(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}`)
	t.Run("recovers", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, overflow, llmtest.Text("recovered"))
		p := w.start()
		p.ok("1", map[string]any{"type": "prompt", "message": "a big question"})
		rs := p.until(func(r record) bool { return r.is("agent_settled") })
		var ends []record
		for _, r := range rs {
			if r.is("compaction_end") {
				assert.Equal(t, true, r["willRetry"])
				assert.Contains(t, r.str("errorMessage"), "Nothing to compact")
			}
			if r.is("agent_end") {
				ends = append(ends, r)
			}
		}
		require.Len(t, ends, 2, p.transcript())
		assert.Equal(t, true, ends[0]["willRetry"])
		assert.Equal(t, false, ends[1]["willRetry"])
		text := p.ok("2", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)
		assert.Equal(t, "recovered", text["text"])
		assert.Equal(t, 0, p.exit())
	})
	t.Run("gives up clearly", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, overflow, overflow)
		p := w.start()
		p.ok("1", map[string]any{"type": "prompt", "message": "a big question"})
		rs := p.until(func(r record) bool { return r.is("agent_settled") })
		var last, lastEnd record
		for _, r := range rs {
			if r.is("compaction_end") {
				last = r
			}
			if r.is("agent_end") {
				lastEnd = r
			}
		}
		require.NotNil(t, last)
		assert.Equal(t, false, last["willRetry"])
		assert.Contains(t, last.str("errorMessage"), "Context overflow recovery failed")
		assert.Equal(t, false, lastEnd["willRetry"], "nothing follows the last agent_end")
		assert.Equal(t, 0, w.srv.Pending())
		assert.Equal(t, 0, p.exit())
	})
}

// Issue 17 and 37: an answer never echoes a client's input back
// unbounded, in any dialect. A 40 MB command or method name, a 1 MB id
// and 100 KB field values (a model, a session file, a session id, a
// directory) each get an answer under 4 KiB that still says what is
// wrong (the id refused, answered without it), and gopi serves on. (A
// 40 MB method name used to come back whole over ACP, and an id did in
// every dialect.) One 40 MB frame per dialect: each costs a second, and
// under the race detector, which makes decoding one take most of
// waitLimit on a busy machine, it is 4 MB.
func TestHugeInputGetsShortAnswers(t *testing.T) {
	t.Parallel()
	size := 40 << 20
	if raceEnabled {
		size = 4 << 20
	}
	huge := strings.Repeat("x", size)
	bigID := strings.Repeat("i", 1<<20)
	long := strings.Repeat("y", 100_000)
	// small checks an answer's size (as JSON) and returns it.
	small := func(t *testing.T, r record) record {
		t.Helper()
		b, err := json.Marshal(r)
		require.NoError(t, err)
		assert.Less(t, len(b), 4096, "an answer of %d bytes: %.300s", len(b), b)
		return r
	}
	errorText := func(r record) string {
		if e, ok := r["error"].(map[string]any); ok {
			return fmt.Sprint(e["message"])
		}
		return r.str("error")
	}
	type ask struct {
		frame string
		want  string // in the answer's error; "" for a success
	}
	native := []ask{
		{`{"type":"` + huge + `"}`, "Unknown command: xxx"},
		{`{"id":"` + bigID + `","type":"get_state"}`, `"id" is 1048578 bytes long`},
		{`{"id":"m","type":"set_model","provider":"` + long + `","modelId":"x"}`, "Model not found: yyy"},
		{`{"id":"s","type":"switch_session","sessionPath":"` + long + `"}`, "yyy"},
		{`{"id":"after","type":"get_state"}`, ""},
	}
	jsonrpc := []ask{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`, ""},
		{`{"jsonrpc":"2.0","id":2,"method":"` + huge + `"}`, "Unknown method: xxx"},
		{`{"jsonrpc":"2.0","id":"` + bigID + `","method":"pi/get_state"}`, `"id" is 1048578 bytes long`},
		{`{"jsonrpc":"2.0","id":4,"method":"pi/set_model","params":{"provider":"` + long + `","modelId":"x"}}`, "Model not found: yyy"},
		{`{"jsonrpc":"2.0","id":5,"method":"pi/switch_session","params":{"sessionPath":"` + long + `"}}`, "yyy"},
		{`{"jsonrpc":"2.0","id":6,"method":"pi/get_state"}`, ""},
	}
	acp := []ask{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`, ""},
		{`{"jsonrpc":"2.0","id":2,"method":"` + huge + `"}`, "method not found: xxx"},
		{`{"jsonrpc":"2.0","id":"` + bigID + `","method":"initialize","params":{"protocolVersion":1}}`, `"id" is 1048578 bytes long`},
		{`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"` + long + `","prompt":[]}}`, `no session "yyy`},
		{`{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"` + long + `","mcpServers":[]}}`, `must be an absolute path, not "yyy`},
		{`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`, ""},
	}
	for _, tc := range []struct {
		mode    string
		framing rpc.Framing
		asks    []ask
	}{
		{"rpc", rpc.FramingNewline, native},
		{"jsonrpc", rpc.FramingHeader, jsonrpc},
		{"acp", rpc.FramingNewline, acp},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			p := launch(t, w.cwd, w.agentDir, tc.framing, "--mode", tc.mode, "--model", "faux/faux-fast")
			jp := &jproc{proc: p, header: tc.framing == rpc.FramingHeader}
			for i, a := range tc.asks {
				jp.writeRaw(a.frame)
				// The answer: the next response (native) or the next
				// message with no method (JSON-RPC, ACP).
				rs := p.until(func(r record) bool {
					if tc.mode == "rpc" {
						return r.is("response")
					}
					return r["method"] == nil
				})
				r := small(t, rs[len(rs)-1])
				if a.want == "" {
					assert.Empty(t, errorText(r), "ask %d failed\n%s", i, p.transcript())
					continue
				}
				assert.Contains(t, errorText(r), a.want, "ask %d", i)
				if strings.Contains(a.want, `"id"`) {
					assert.Nil(t, r["id"], "the id is not echoed")
				}
			}
			assert.Equal(t, 0, p.exit())
		})
	}
}

// Issue 25: two requests with one id, sent before the first was answered,
// each get exactly one reply. The id used to be let go when the first
// request's handler returned, a moment before jsonrpc2 wrote its answer;
// a duplicate read in that moment was taken as a new request, took over
// the first one's after-answer hook and then waited forever for a turn
// that hook would have given it (about one pair in four under load).
// The race needs the moment to fall just so, so the test asks many
// times, with the machine kept busy: in one write, in two writes, and
// behind a slow request.
func TestJSONRPCEveryRequestIsAnsweredOnce(t *testing.T) {
	stop := busyCPUs()
	defer stop()
	w := newWorld(t)
	p := w.startJSONRPC(true, scriptedArgs("--mode", "rpc")...)
	p.call("initialize", map[string]any{"capabilities": map[string]any{}})
	p.notify("initialized", map[string]any{})

	frame := func(id int) string {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"pi/get_state"}`, id)
		return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	const pairs = 150
	var want []int
	// In one write.
	for id := 1000; id < 1000+pairs; id++ {
		_, err := io.WriteString(p.stdin, frame(id)+frame(id))
		require.NoError(t, err)
		want = append(want, id)
	}
	// In two writes.
	for id := 2000; id < 2000+pairs; id++ {
		for range 2 {
			_, err := io.WriteString(p.stdin, frame(id))
			require.NoError(t, err)
		}
		want = append(want, id)
	}
	// Behind a slow request, whose own id is reused while it runs.
	p.write(map[string]any{"id": 3000, "method": "pi/bash", "params": map[string]any{"command": "sleep 0.3; echo slow"}})
	_, err := io.WriteString(p.stdin, frame(3000))
	require.NoError(t, err)
	want = append(want, 3000)
	for id := 3001; id < 3001+pairs; id++ {
		_, err := io.WriteString(p.stdin, frame(id)+frame(id))
		require.NoError(t, err)
		want = append(want, id)
	}

	got := map[int][]record{}
	answered := 0
	p.until(func(r record) bool {
		id, ok := r["id"].(float64)
		if r["method"] != nil || !ok || id < 1000 {
			return false
		}
		got[int(id)] = append(got[int(id)], r)
		if len(got[int(id)]) == 2 {
			answered++
		}
		return answered == len(want)
	})
	for _, id := range want {
		rs := got[id]
		require.Len(t, rs, 2, "id %d", id)
		for _, r := range rs {
			if e := r.obj("error"); e != nil {
				assert.EqualValues(t, -32600, e["code"], "id %d: %v", id, r)
				assert.Contains(t, e.str("message"), "duplicate request id", "id %d", id)
			} else {
				assert.NotNil(t, r["result"], "id %d: %v", id, r)
			}
		}
		if id == 3000 {
			// The refusal comes at once; the bash's answer after it.
			assert.NotNil(t, rs[0]["error"], "%v", rs)
			assert.Contains(t, rs[1].obj("result").str("output"), "slow")
		}
	}
	// Nothing more for those ids, and gopi still serves.
	last := p.request("pi/get_state", nil)
	for _, r := range p.until(func(r record) bool { return r["method"] == nil && r["id"] == last }) {
		if id, ok := r["id"].(float64); ok && r["method"] == nil && id >= 1000 {
			t.Errorf("a third reply to id %v: %v", id, r)
		}
	}
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}

// busyCPUs keeps every CPU of the test process busy until stop is called,
// so the races a loaded machine shows come up on an idle one too.
func busyCPUs() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				for i := 0; i < 1e5; i++ {
					_ = i * i
				}
			}
		}()
	}
	return func() { close(done); wg.Wait() }
}
