package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// pi 1.6.0 (issue 29): get_last_assistant_text is the text of the latest
// assistant message that has some, skipping aborted and failed ones (pi
// 1.5.2 kept an aborted reply's partial text, and gopi gave an empty
// string for a failed one).
func TestRPCLastAssistantTextSkipsAbortedFailedAndEmpty(t *testing.T) {
	t.Parallel()
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

// toolResultTexts runs one prompt whose scripted reply calls tools, and
// returns each tool result's text by tool call id.
func toolResultTexts(t *testing.T, p *proc) map[string]string {
	t.Helper()
	p.ok("1", map[string]any{"type": "prompt", "message": "go"})
	texts := map[string]string{}
	for _, r := range p.until(settled) {
		if !r.is("message_end") || r.obj("message").str("role") != "toolResult" {
			continue
		}
		m := r.obj("message")
		var b strings.Builder
		for _, c := range m["content"].([]any) {
			if s, ok := c.(map[string]any)["text"].(string); ok {
				b.WriteString(s)
			}
		}
		texts[m.str("toolCallId")] = b.String()
	}
	return texts
}

// pi 1.6.0 (#12062): bash output that ends in one line longer than the
// byte limit shows the end of that line, whether a newline follows it or
// not; pi 1.5.2 (and gopi before) showed nothing and a footer like
// "[Showing lines 3-2 of 2]". Checked against pi 1.6.0 with these
// commands: it shows the last 50KB and numbers the lines as here (a
// trailing newline starts no line: seq 1 5000 is 5000 lines, which gopi
// counted as 5001). Where pi's footer then says "(line is 0B)", gopi gives
// the long line's real size.
func TestRPCBashOutputEndingInOneLongLine(t *testing.T) {
	t.Parallel()
	long := `head -c 300000 /dev/zero | tr '\\0' a`
	w := newWorld(t,
		llmtest.ToolCalls(
			llmtest.Call("nl", "bash", `{"command":"echo first; `+long+`; echo"}`),
			llmtest.Call("bare", "bash", `{"command":"echo first; `+long+`"}`),
			llmtest.Call("alone", "bash", `{"command":"`+long+`; echo"}`),
			llmtest.Call("seq", "bash", `{"command":"seq 1 5000"}`),
		),
		llmtest.Text("done"),
	)
	texts := toolResultTexts(t, w.start())
	require.Len(t, texts, 4)
	tail := strings.Repeat("a", 51200) + "\n\n[Showing last 50.0KB of line "
	for id, line := range map[string]string{"nl": "2", "bare": "2", "alone": "1"} {
		text := texts[id]
		assert.True(t, strings.HasPrefix(text, tail+line+" (line is 293.0KB). Full output: "),
			"%s: %s", id, text[max(0, len(text)-200):])
	}
	assert.True(t, strings.HasPrefix(texts["seq"], "3001\n"))
	assert.Contains(t, texts["seq"], "\n5000\n\n[Showing lines 3001-5000 of 5000. Full output: ")
}

// pi 1.6.0 (#12066, #12020): find's path patterns are anchored at the
// search directory, like grep's glob, and a leading "./" is dropped; a
// pattern without a slash still matches names at any depth. pi 1.5.2 (and
// gopi before) matched "src/*.ts" at any depth and, through the folders
// above the search directory, "src/**/*.ts" found every file under a
// project that lives in some src/. pi 1.6.0 answered exactly these lists.
func TestRPCFindPathPatternsAreRelativeToTheSearchDir(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(
			llmtest.Call("rel", "find", `{"pattern":"src/*.ts"}`),
			llmtest.Call("dot", "find", `{"pattern":"./src/*.ts"}`),
			llmtest.Call("any", "find", `{"pattern":"**/src/*.ts"}`),
			llmtest.Call("name", "find", `{"pattern":"*.ts","path":"src"}`),
			llmtest.Call("above", "find", `{"pattern":"src/**/*.ts","path":"src/app"}`),
			llmtest.Call("inside", "find", `{"pattern":"lib/*.ts","path":"src/app"}`),
		),
		llmtest.Text("done"),
	)
	for _, f := range []string{"src/a.ts", "pkg/src/b.ts", "src/app/x.ts", "src/app/lib/y.ts"} {
		p := filepath.Join(w.cwd, f)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	}
	texts := toolResultTexts(t, w.start("--tools", "find"))
	assert.Equal(t, map[string]string{
		"rel":    "src/a.ts",
		"dot":    "src/a.ts",
		"any":    "pkg/src/b.ts\nsrc/a.ts",
		"name":   "a.ts\napp/lib/y.ts\napp/x.ts",
		"above":  "No files found matching pattern",
		"inside": "lib/y.ts",
	}, texts)
}

// pi 1.6.0 (#9986): a batch of tool calls aborted part-way gives every call
// that had not started an "Operation aborted" result. Here an extension's
// tool_call handler asks before the write, and the client aborts while the
// question waits: the bash call prepared before it, the write and the bash
// call after it all end "Operation aborted", and nothing runs. pi 1.6.0
// answers exactly so (once its dialog is answered: pi's abort waits for
// it); gopi before ran the first call with the aborted context ("Command
// aborted") and blocked the others as a failed extension.
func TestExtensionAbortedBatchCallsAreOperationAborted(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t,
		llmtest.ToolCalls(
			llmtest.Call("c1", "bash", `{"command":"echo one > one.txt"}`),
			llmtest.Call("c2", "write", `{"path":"two.txt","content":"two"}`),
			llmtest.Call("c3", "bash", `{"command":"echo three > three.txt"}`),
		),
		llmtest.Text("unused"),
	)
	ext := w.writeExt("ask.ts", `export default function (pi) {
	pi.on("tool_call", async (event, ctx) => {
		if (event.toolName !== "write") return;
		if (!(await ctx.ui.confirm("Write?", event.input.path))) return { block: true, reason: "not allowed" };
	});
}
`)
	p := e.gopi(t, w, "-e", ext)
	p.ok("1", map[string]any{"type": "prompt", "message": "go"})
	p.until(func(r record) bool { return r.is("extension_ui_request") && r.str("method") == "confirm" })
	p.send(map[string]any{"id": "a", "type": "abort"})
	rs := p.all(responseTo("a"), settled)
	for _, id := range []string{"c1", "c2", "c3"} {
		end := toolEnd(rs, id)
		require.NotNil(t, end, "%s has no end\n%s", id, p.transcript())
		assert.Equal(t, true, end["isError"], id)
		assert.Equal(t, "Operation aborted", resultText(end), id)
	}
	var results []string
	for _, m := range p.messages("m") {
		if m := m.(map[string]any); m["role"] == "toolResult" {
			results = append(results, m["toolCallId"].(string))
		}
	}
	assert.Equal(t, []string{"c1", "c2", "c3"}, results, "every call has its result in the session")
	for _, f := range []string{"one.txt", "two.txt", "three.txt"} {
		assert.NoFileExists(t, filepath.Join(w.cwd, f))
	}
	assert.Equal(t, 0, p.exit())
}

// compatWorld is a world whose model speaks OpenAI Chat Completions, as
// gateways and OpenAI-compatible servers do.
func compatWorld(t *testing.T, turns ...llmtest.Turn) *world {
	t.Helper()
	w := newWorld(t, turns...)
	w.writeJSON(filepath.Join(w.agentDir, "models.json"), map[string]any{"providers": map[string]any{
		"compat": map[string]any{
			"baseUrl": w.srv.OpenAIURL(), "api": "openai-completions", "apiKey": "test-key",
			"models": []any{map[string]any{"id": "compat-1", "name": "Compat", "input": []string{"text"},
				"contextWindow": 100000, "maxTokens": 8000}},
		},
	}})
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"retry": map[string]any{"baseDelayMs": 1, "maxRetries": 9}})
	return w
}

// streamError is a turn whose 200 stream carries an error event after one
// event, the way a gateway relays an upstream failure.
func streamError(raw string) llmtest.Turn {
	return llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("partial answer")}, Fault: &llmtest.Fault{Raw: raw, RawAfter: 1}}
}

// pi 1.6.0 (#12064, #12128): a failure reported as "Connection closed." or
// as a bare socket error code (read ECONNRESET, write EPIPE, connect
// ETIMEDOUT) is retried. Over a connection gopi holds itself a broken
// socket is a transport failure and always was retried; these are the
// same failures relayed by a gateway as an error without a type inside
// a 200 stream, which gopi took for permanent. An error that names no
// broken connection still is permanent.
func TestRPCRetriesConnectionFailuresRelayedInTheStream(t *testing.T) {
	t.Parallel()
	failures := []string{
		`{"error":{"message":"Connection closed."}}`,
		`{"error":{"message":"read ECONNRESET"}}`,
		`{"error":{"message":"write EPIPE"}}`,
		`{"error":{"message":"connect ETIMEDOUT 10.1.2.3:443"}}`,
	}
	var turns []llmtest.Turn
	for _, f := range failures {
		turns = append(turns, streamError("data: "+f+"\n\n"))
	}
	turns = append(turns, llmtest.Text("recovered"),
		streamError(`data: {"error":{"message":"Invalid value for 'ECONNRESETS' in messages"}}`+"\n\n"))
	w := compatWorld(t, turns...)
	p := w.start("--model", "compat/compat-1")
	p.ok("1", map[string]any{"type": "prompt", "message": "try"})
	rs := p.until(settled)
	var retried []string
	for _, r := range rs {
		if r.is("auto_retry_start") {
			retried = append(retried, r.str("errorMessage"))
		}
	}
	require.Len(t, retried, len(failures), p.transcript())
	for i, f := range failures {
		var e struct{ Error struct{ Message string } }
		require.NoError(t, json.Unmarshal([]byte(f), &e))
		assert.Contains(t, retried[i], e.Error.Message)
	}
	assert.Equal(t, "recovered", p.ok("2", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)["text"])

	p.ok("3", map[string]any{"type": "prompt", "message": "again"})
	for _, r := range p.until(settled) {
		assert.False(t, r.is("auto_retry_start"), "an error that names no broken connection is not retried: %v", r)
	}
	assert.Equal(t, 0, p.exit())
}

// The same over Anthropic Messages: pi 1.6.0's own example (#12064), a
// gateway's api_error "Connection closed.", and socket errors in error
// events without a type.
func TestRPCRetriesConnectionFailuresInAnthropicErrorEvents(t *testing.T) {
	t.Parallel()
	failures := []string{
		`{"type":"error","error":{"type":"api_error","message":"Connection closed."}}`,
		`{"type":"error","error":{"message":"read ECONNRESET"}}`,
		`{"type":"error","error":{"message":"Connection closed."}}`,
	}
	var turns []llmtest.Turn
	for _, f := range failures {
		turns = append(turns, streamError("event: error\ndata: "+f+"\n\n"))
	}
	w := newWorld(t, append(turns, llmtest.Text("recovered"))...)
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"retry": map[string]any{"baseDelayMs": 1, "maxRetries": 9}})
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "try"})
	retries := 0
	for _, r := range p.until(settled) {
		if r.is("auto_retry_start") {
			retries++
		}
	}
	assert.Equal(t, len(failures), retries, p.transcript())
	assert.Equal(t, "recovered", p.ok("2", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)["text"])
	assert.Equal(t, 0, p.exit())
}

// pi 1.6.0: "Could not restore model" is reported in RPC mode too, at
// startup as after switch_session, and a problem already reported is not
// repeated. Checked against pi 1.6.0 with this session and these
// commands: one "Warning: Could not restore model fake/fake-haiku. Using
// scripted/scripted-1" on stderr, at startup. gopi said nothing at
// startup (and went on with the session's model when it lacked
// credentials), then once per switch_session.
func TestRPCCouldNotRestoreModelIsReportedOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ref, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sessions", "pi-0.73.1.jsonl"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "from-pi.jsonl")
	require.NoError(t, os.WriteFile(path, ref, 0o644))
	const want = "could not restore model fake/fake-haiku; using scripted/scripted-1"

	p := startProc(t, w.cwd, w.agentDir, "--mode", "rpc", "--session", path)
	st := p.state("1")
	assert.Equal(t, "scripted-1", st["model"].(map[string]any)["id"])
	p.stderr.await(want, waitLimit)
	assert.Contains(t, p.stderr.String(), want, "reported at startup")
	for i, c := range []map[string]any{
		{"type": "new_session"},
		{"type": "switch_session", "sessionPath": path},
		{"type": "new_session"},
		{"type": "switch_session", "sessionPath": path},
	} {
		p.ok(fmt.Sprint("c", i), c)
	}
	assert.Equal(t, 0, p.exit())
	assert.Equal(t, 1, strings.Count(p.stderr.String(), want), p.stderr.String())
}
