package export

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pixel is a 1×1 PNG.
const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

const assistantMarkdown = `## Findings

| file | lines |
|------|-------|
| main.go | 42 |

This is ~~wrong~~ right, see [the docs](https://example.com/docs).

![remote chart](https://example.com/chart.png)

<div onclick="steal()">raw block</div>

` + "```go\nfmt.Println(\"hi\")\n```\n"

func usage(in, out, cr, cw int, cost llm.Cost) llm.Usage {
	cost.Total = cost.Input + cost.Output + cost.CacheRead + cost.CacheWrite
	return llm.Usage{Input: in, Output: out, CacheRead: cr, CacheWrite: cw, TotalTokens: in + out + cr + cw, Cost: cost}
}

func appendMsg(t *testing.T, s *session.Store, m llm.Message) string {
	t.Helper()
	id, err := s.AppendMessage(m)
	require.NoError(t, err)
	return id
}

func must(t *testing.T) func(string, error) string {
	return func(id string, err error) string {
		t.Helper()
		require.NoError(t, err)
		return id
	}
}

// conversation builds a session that has one of everything the page shows.
func conversation(t *testing.T) *session.Store {
	t.Helper()
	ok := must(t)
	s := session.InMemory("/home/dev/project")
	ok(s.AppendModelChange("anthropic", "claude-test"))
	ok(s.AppendThinkingLevelChange(llm.ThinkingHigh))
	first := appendMsg(t, s, &llm.UserMessage{Content: llm.Contents{
		llm.TextContent{Text: "Why does <script>alert('pwned')</script> appear in **bold** output?"},
		llm.ImageContent{Data: pixel, MimeType: "image/png"},
	}, Timestamp: llm.Now()})
	appendMsg(t, s, &llm.AssistantMessage{
		Content: llm.Contents{
			llm.ThinkingContent{Thinking: "secret-reasoning: the user wants a listing"},
			llm.TextContent{Text: "Let me look."},
			llm.ToolCall{ID: "call_1", Name: "bash", Arguments: json.RawMessage(`{"command":"ls -la","timeout":30}`)},
		},
		Provider: "anthropic", Model: "claude-test", StopReason: llm.StopToolUse,
		Usage: usage(1000, 100, 200, 50, llm.Cost{Input: 0.003, Output: 0.0015, CacheRead: 0.0001, CacheWrite: 0.0002}),
	})
	appendMsg(t, s, &llm.ToolResultMessage{ToolCallID: "call_1", ToolName: "bash",
		Content: llm.Contents{llm.TextContent{Text: "listing-line-one\nlisting-line-two"}}})
	appendMsg(t, s, &llm.AssistantMessage{
		Content:  llm.Contents{llm.ToolCall{ID: "call_2", Name: "read", Arguments: json.RawMessage(`{"path":"missing.txt"}`)}},
		Provider: "anthropic", Model: "claude-test", StopReason: llm.StopToolUse,
		Usage: usage(1200, 20, 0, 0, llm.Cost{Input: 0.0036, Output: 0.0003}),
	})
	appendMsg(t, s, &llm.ToolResultMessage{ToolCallID: "call_2", ToolName: "read", IsError: true,
		Content: llm.Contents{llm.TextContent{Text: "ENOENT: missing.txt does not exist"}}})
	answer := appendMsg(t, s, &llm.AssistantMessage{
		Content:  llm.Contents{llm.TextContent{Text: assistantMarkdown}},
		Provider: "anthropic", Model: "claude-test", StopReason: llm.StopStop,
		Usage: usage(1500, 400, 1000, 0, llm.Cost{Input: 0.0045, Output: 0.006, CacheRead: 0.0003}),
	})

	// A branch that is left again: it must not be on the page.
	appendMsg(t, s, llm.UserText("abandoned-branch-question"))
	appendMsg(t, s, &llm.AssistantMessage{Content: llm.Contents{llm.TextContent{Text: "abandoned-branch-answer"}},
		Provider: "anthropic", Model: "claude-other", StopReason: llm.StopStop,
		Usage: usage(9999, 9999, 0, 0, llm.Cost{Input: 1})})
	ok(s.AppendBranchSummary(answer, "Tried *another approach* first.", nil, false, nil))

	exit2 := 2
	appendMsg(t, s, &llm.BashExecutionMessage{Command: "make test", Output: "FAIL: TestThing\n", ExitCode: &exit2,
		Truncated: true, FullOutputPath: "/tmp/bash-full.log", Timestamp: llm.Now()})
	appendMsg(t, s, &llm.BashExecutionMessage{Command: "sleep 100", Cancelled: true, Timestamp: llm.Now()})
	ok(s.AppendCustomMessage("reminder", llm.Contents{llm.TextContent{Text: "visible *custom* note"}}, true, nil))
	ok(s.AppendCustomMessage("state", llm.Contents{llm.TextContent{Text: "hidden-custom-text"}}, false, nil))
	ok(s.AppendCompaction("## Goal\nShip the *parser*.", first, 12345, nil, false, nil))
	ok(s.AppendSessionInfo("Parser <b>work</b>"))
	ok(s.AppendLabel(first, "start-here"))
	appendMsg(t, s, &llm.ToolResultMessage{ToolCallID: "call_gone", ToolName: "grep",
		Content: llm.Contents{llm.TextContent{Text: "orphan-result"}}})
	ok(s.AppendModelChange("openai", "gpt-test"))
	appendMsg(t, s, &llm.AssistantMessage{Content: llm.Contents{}, Provider: "openai", Model: "gpt-test",
		StopReason: llm.StopError, ErrorMessage: "rate limited (429)"})
	return s
}

// contains and lacks are assert.Contains and assert.NotContains without
// the whole page in the failure message.
func contains(t *testing.T, page, want string) {
	t.Helper()
	if !strings.Contains(page, want) {
		t.Errorf("page lacks %q", want)
	}
}

func lacks(t *testing.T, page, unwanted string) {
	t.Helper()
	if i := strings.Index(page, unwanted); i >= 0 {
		t.Errorf("page has %q: …%s…", unwanted, page[max(0, i-80):min(len(page), i+len(unwanted)+80)])
	}
}

func render(t *testing.T, in Input) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, HTML(&b, in))
	return b.String()
}

func inputOf(s *session.Store) Input {
	return Input{Header: s.Header(), Entries: s.Path(), Provider: "openai", Model: "gpt-test"}
}

func TestHTMLConversation(t *testing.T) {
	out := render(t, inputOf(conversation(t)))
	text := html.UnescapeString(out)

	t.Run("user text is escaped", func(t *testing.T) {
		contains(t, out, "&lt;script&gt;alert(")
		lacks(t, out, "<script>alert")
		// The only script element is the page's own.
		assert.Equal(t, 1, strings.Count(out, "<script"), "script elements")
		contains(t, out, "<strong>bold</strong>")
	})
	t.Run("images are data URIs", func(t *testing.T) {
		contains(t, text, `<img src="data:image/png;base64,`+pixel+`"`)
	})
	t.Run("markdown rendered", func(t *testing.T) {
		for _, want := range []string{"<h2>Findings</h2>", "<table>", "<th>file</th>", "<td>main.go</td>",
			"<del>wrong</del>", `<a href="https://example.com/docs">the docs</a>`, `<code class="language-go">`} {
			contains(t, out, want)
		}
		// Raw HTML in a message is shown, not obeyed.
		contains(t, out, `&lt;div onclick=&quot;steal()&quot;&gt;raw block&lt;/div&gt;`)
		lacks(t, out, `<div onclick`)
		// A remote image is a link, never a fetch.
		lacks(t, out, `src="https://example.com/chart.png"`)
		contains(t, out, `<a class="remote-image" href="https://example.com/chart.png">[image: remote chart]</a>`)
	})
	t.Run("thinking collapsed", func(t *testing.T) {
		contains(t, out, `<details class="thinking"><summary>Thinking</summary><div class="thinking-text">secret-reasoning`)
	})
	t.Run("tool calls with arguments and results", func(t *testing.T) {
		contains(t, text, "{\n  \"command\": \"ls -la\",\n  \"timeout\": 30\n}")
		contains(t, text, "listing-line-one\nlisting-line-two")
		contains(t, out, `<details class="tool failed" open>`)
		contains(t, out, `<span class="badge error">error</span>`)
		contains(t, out, `<pre class="output error">ENOENT: missing.txt does not exist</pre>`)
		// The result sits inside its call's block.
		call := strings.Index(out, "missing.txt&#34;")
		res := strings.Index(out, "ENOENT")
		end := strings.Index(out[call:], "</details>") + call
		assert.True(t, call > 0 && call < res && res < end, "error result inside its call")
		contains(t, text, "orphan-result")
	})
	t.Run("bash executions", func(t *testing.T) {
		contains(t, out, "<code>make test</code>")
		contains(t, out, `<span class="badge error">exit code 2</span>`)
		contains(t, out, "output truncated")
		contains(t, out, "/tmp/bash-full.log")
		contains(t, out, `<span class="badge error">cancelled</span>`)
	})
	t.Run("custom, summaries, events", func(t *testing.T) {
		contains(t, out, "visible <em>custom</em> note")
		lacks(t, out, "hidden-custom-text")
		contains(t, out, "Earlier conversation compacted from 12,345 tokens")
		contains(t, out, "<h2>Goal</h2>")
		contains(t, out, "Tried <em>another approach</em> first.")
		contains(t, out, "Model changed to anthropic/claude-test")
		contains(t, out, "Model changed to openai/gpt-test")
		contains(t, out, "Thinking level set to high")
		contains(t, out, "Error: rate limited (429)")
		contains(t, out, `<span class="badge label">start-here</span>`)
		lacks(t, out, "abandoned-branch")
	})
	t.Run("title and session name", func(t *testing.T) {
		contains(t, out, "<title>Parser &lt;b&gt;work&lt;/b&gt;</title>")
		contains(t, out, "<h1>Parser &lt;b&gt;work&lt;/b&gt;</h1>")
	})
	t.Run("totals", func(t *testing.T) {
		contains(t, out, "in 3,700")
		contains(t, out, "out 520")
		contains(t, out, "cache read 1,200")
		contains(t, out, "cache write 50")
		contains(t, out, "total 5,470")
		contains(t, out, `<td class="tot-cost">$0.0195</td>`)
		contains(t, out, "1 user · 4 assistant · 2 tool calls · 3 tool results · 2 shell commands · 2 custom · 1 compaction · 1 branch summary")
		contains(t, out, `<td class="tot-models"><code>anthropic/claude-test</code>, <code>openai/gpt-test</code></td>`)
		contains(t, out, "<dt>Current model</dt><dd><code>openai/gpt-test</code></dd>")
	})
}

func TestTitle(t *testing.T) {
	s := session.InMemory("/p")
	appendMsg(t, s, llm.UserText("hi"))
	out := render(t, Input{Header: s.Header(), Entries: s.Path()})
	contains(t, out, "<title>Session "+s.ID()+"</title>")

	out = render(t, Input{Header: s.Header(), Entries: s.Path(), Title: "My export"})
	contains(t, out, "<h1>My export</h1>")
}

// attrRE finds src and href attributes with the tag they sit on.
var attrRE = regexp.MustCompile(`<([a-zA-Z]+)\b[^>]*?\s(src|href)\s*=\s*"([^"]*)"`)

// assertOffline fails when the page would load anything from the
// network: a src that is not a data: URI, an href outside an <a>, or a
// remote URL in CSS.
func assertOffline(t *testing.T, out string) {
	t.Helper()
	checked := 0
	for _, m := range attrRE.FindAllStringSubmatch(out, -1) {
		tag, attr, val := strings.ToLower(m[1]), m[2], html.UnescapeString(m[3])
		checked++
		switch {
		case attr == "src":
			assert.True(t, strings.HasPrefix(val, "data:"), "<%s src=%q> is not embedded", tag, val)
		case tag != "a":
			assert.NotRegexp(t, `^(?i)(https?:)?//`, val, "<%s href=%q> loads a remote resource", tag, val)
		}
	}
	assert.Positive(t, checked)
	assert.NotRegexp(t, `(?i)url\(\s*['"]?(https?:)?//`, out)
	lacks(t, out, "@import")
	assert.NotRegexp(t, `(?i)<(link|iframe|object|embed)\b`, out)
}

func TestNoRemoteResources(t *testing.T) {
	assertOffline(t, render(t, inputOf(conversation(t))))
}

// openReference loads pi's reference session from a copy, so nothing can
// touch the checked-in file.
func openReference(t *testing.T) (*session.Store, []byte) {
	t.Helper()
	data, err := os.ReadFile("../../testdata/sessions/pi-0.73.1.jsonl")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "pi.jsonl")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	s, rep, err := session.Open(path)
	require.NoError(t, err)
	require.True(t, rep.OK())
	return s, data
}

func TestReferenceSession(t *testing.T) {
	s, data := openReference(t)
	out := render(t, Input{Header: s.Header(), Entries: s.Path(), Provider: "fake", Model: "fake-sonnet"})
	text := html.UnescapeString(out)

	// Add the assistant usage up straight from the JSONL.
	var in, outTok, assistants int
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		var e struct {
			Type    string `json:"type"`
			Message struct {
				Role  string    `json:"role"`
				Usage llm.Usage `json:"usage"`
			} `json:"message"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		if e.Type == "message" && e.Message.Role == "assistant" {
			assistants++
			in += e.Message.Usage.Input
			outTok += e.Message.Usage.Output
		}
	}
	require.Positive(t, assistants)

	for _, want := range []string{
		"read: greeting.txt", "Tool said: hello file", "hello file\n",
		"echo from-user-bash", "from-user-bash\n", "exit code 0",
		"Model changed to fake/fake-sonnet", "Earlier conversation compacted from",
		"in " + commas(in), "out " + commas(outTok), assistantsLine(assistants),
	} {
		contains(t, text, want)
	}
	contains(t, text, `"path": "greeting.txt"`)
	assertOffline(t, out)
}

func assistantsLine(n int) string { return " · " + commas(n) + " assistant · " }

func TestDefaultFileName(t *testing.T) {
	ts := time.Date(2026, 11, 21, 14, 12, 12, 199_000_000, time.UTC)
	assert.Equal(t, "pi-session-2026-11-21T14-12-12-199Z_01a1fe73-4f26-7251-b938-692c21ec01a2.html",
		DefaultFileName("01a1fe73-4f26-7251-b938-692c21ec01a2", ts))
	// Any zone comes out as UTC, as in pi's session file names.
	local := ts.In(time.FixedZone("x", 3600))
	assert.Equal(t, DefaultFileName("id", ts), DefaultFileName("id", local))
}

func TestWriteFile(t *testing.T) {
	s := conversation(t)
	dir := t.TempDir()
	path := filepath.Join(dir, DefaultFileName(s.ID(), time.Now()))
	require.NoError(t, os.WriteFile(path, []byte("old contents"), 0o600))

	require.NoError(t, WriteFile(path, inputOf(s)))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, render(t, inputOf(s)), string(got))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "issue 17: an export keeps the file's mode")

	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, names, 1, "no temporary file left behind")

	err = WriteFile(filepath.Join(dir, "no-such-dir", "x.html"), inputOf(s))
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestHTMLWriterError(t *testing.T) {
	err := HTML(failingWriter{}, inputOf(conversation(t)))
	require.Error(t, err)
	assert.ErrorIs(t, err, io.ErrClosedPipe)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestMarkdown(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		not      []string
	}{
		{name: "inline raw html", in: "a <b onmouseover=x>b</b> c",
			want: []string{"a &lt;b onmouseover=x&gt;b&lt;/b&gt; c"}, not: []string{"<b "}},
		{name: "javascript link", in: "[click](javascript:alert(1))",
			not: []string{"javascript:"}},
		{name: "data image embedded", in: "![dot](data:image/png;base64," + pixel + ")",
			want: []string{`<img src="data:image/png;base64,` + pixel + `" alt="dot">`}},
		{name: "svg data image not embedded", in: "![x](data:image/svg+xml;base64,PHN2Zz4=)",
			want: []string{"[image: x]"}, not: []string{"<img", "href"}},
		{name: "hard wraps", in: "line one\nline two", want: []string{"line one<br>\nline two"}},
		{name: "strikethrough and task list", in: "~~old~~\n\n- [x] done",
			want: []string{"<del>old</del>", `<input checked="" disabled="" type="checkbox"> done`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(markdown(tc.in))
			for _, w := range tc.want {
				assert.Contains(t, got, w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, got, n)
			}
		})
	}
}

func TestCommas(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -12345: "-12,345"} {
		assert.Equal(t, want, commas(n))
	}
}
