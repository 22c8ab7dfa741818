package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/core/session"
)

// state is get_state's data.
func (p *proc) state(id string) map[string]any {
	p.t.Helper()
	return p.ok(id, map[string]any{"type": "get_state"}).(map[string]any)
}

// messages is get_messages' list.
// The system messages (the prompt and tools each request was sent with)
// are left out: these tests are about the conversation.
func (p *proc) messages(id string) []any {
	p.t.Helper()
	var out []any
	for _, m := range p.ok(id, map[string]any{"type": "get_messages"}).(map[string]any)["messages"].([]any) {
		if m.(map[string]any)["role"] != "system" {
			out = append(out, m)
		}
	}
	return out
}

// conversation is a context's messages without system messages.
func conversation(msgs []llm.Message) []llm.Message {
	var out []llm.Message
	for _, m := range msgs {
		if m.MessageRole() != llm.RoleSystem {
			out = append(out, m)
		}
	}
	return out
}

// messageText is the text of a get_messages entry.
func messageText(m any) string {
	var b strings.Builder
	switch c := m.(map[string]any)["content"].(type) {
	case string:
		b.WriteString(c)
	case []any:
		for _, blk := range c {
			if blk, ok := blk.(map[string]any); ok && blk["type"] == "text" {
				b.WriteString(blk["text"].(string))
			}
		}
	}
	return b.String()
}

// requestTexts lists the text of every message a model request carried.
func requestTexts(r llmtest.Request) []string {
	var out []string
	for _, m := range r.JSON()["messages"].([]any) {
		out = append(out, messageText(m))
	}
	return out
}

// loadSession loads a session file the way a client would inspect it.
func loadSession(t *testing.T, path string) *session.Store {
	t.Helper()
	st, rep, err := session.Open(path)
	require.NoError(t, err)
	require.True(t, rep.OK(), "%+v", rep)
	return st
}

// entryOfRole finds the first message entry with the given role.
func entryOfRole(t *testing.T, st *session.Store, role llm.Role) string {
	t.Helper()
	for _, e := range st.Entries() {
		if me, ok := e.(*session.MessageEntry); ok && me.Role() == role {
			return me.ID
		}
	}
	t.Fatalf("no %s entry in %s", role, st.File())
	return ""
}

func TestRPCForkAndSwitchBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("reply one"), llmtest.Text("reply two"),
		llmtest.Text("reply retry"), llmtest.Text("reply fresh"))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "one"})
	p.idle()
	p.ok("2", map[string]any{"type": "prompt", "message": "two"})
	p.idle()
	st := p.state("3")
	require.EqualValues(t, 5, st["messageCount"]) // system, then two exchanges
	first := st["sessionFile"].(string)
	firstID := st["sessionId"].(string)

	forks := p.ok("4", map[string]any{"type": "get_fork_messages"}).(map[string]any)["messages"].([]any)
	require.Len(t, forks, 2)
	two := forks[1].(map[string]any)
	require.Equal(t, "two", two["text"])

	// Fork before "two": the new session holds the first exchange.
	res := p.ok("5", map[string]any{"type": "fork", "entryId": two["entryId"]}).(map[string]any)
	assert.Equal(t, "two", res["text"])
	assert.Equal(t, false, res["cancelled"])
	st = p.state("6")
	assert.EqualValues(t, 3, st["messageCount"]) // system, one, reply one
	forked := st["sessionFile"].(string)
	assert.NotEqual(t, first, forked)
	assert.NotEqual(t, firstID, st["sessionId"])
	assert.Equal(t, filepath.Dir(first), filepath.Dir(forked), "a fork lives beside its parent")
	msgs := p.messages("7")
	require.Len(t, msgs, 2)
	assert.Equal(t, "one", messageText(msgs[0]))
	assert.Equal(t, "reply one", messageText(msgs[1]))

	// The fork is written at once and names its parent.
	fs := loadSession(t, forked)
	assert.Equal(t, first, fs.Header().ParentSession)

	// Continuing the fork sends only its history and saves to its file.
	p.ok("8", map[string]any{"type": "prompt", "message": "two, again"})
	p.idle()
	reqs := w.srv.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{"one", "reply one", "two, again"}, requestTexts(reqs[2]))
	fs = loadSession(t, forked)
	assert.Len(t, conversation(fs.Context().Messages), 4)

	// Back to the original: its conversation is untouched.
	sw := p.ok("9", map[string]any{"type": "switch_session", "sessionPath": first}).(map[string]any)
	assert.Equal(t, false, sw["cancelled"])
	st = p.state("10")
	assert.Equal(t, first, st["sessionFile"])
	assert.Equal(t, firstID, st["sessionId"])
	assert.EqualValues(t, 5, st["messageCount"])
	msgs = p.messages("11")
	require.Len(t, msgs, 4)
	assert.Equal(t, "reply two", messageText(msgs[3]))
	last := p.ok("12", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)
	assert.Equal(t, "reply two", last["text"])

	// Fork before the very first message: an empty session with a parent,
	// whose file appears with its first reply.
	res = p.ok("13", map[string]any{"type": "fork", "entryId": forks[0].(map[string]any)["entryId"]}).(map[string]any)
	assert.Equal(t, "one", res["text"])
	st = p.state("14")
	assert.EqualValues(t, 1, st["messageCount"], "only the system message comes along")
	empty := st["sessionFile"].(string)
	assert.NotContains(t, []string{first, forked}, empty)
	p.ok("15", map[string]any{"type": "prompt", "message": "fresh start"})
	p.idle()
	assert.Equal(t, []string{"fresh start"}, requestTexts(w.srv.Requests()[3]))
	es := loadSession(t, empty)
	assert.Equal(t, first, es.Header().ParentSession)
	assert.Len(t, conversation(es.Context().Messages), 2)
	assert.Equal(t, 0, p.exit())

	// The original file never changed.
	orig := loadSession(t, first)
	assert.Len(t, conversation(orig.Context().Messages), 4)
}

func TestRPCSessionSwitchErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("only reply"))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "hello"})
	p.idle()
	file := p.state("2")["sessionFile"].(string)
	assistantID := entryOfRole(t, loadSession(t, file), llm.RoleAssistant)

	missing := filepath.Join(t.TempDir(), "nowhere.jsonl")
	r := p.call("3", map[string]any{"type": "switch_session", "sessionPath": missing})
	assert.Equal(t, false, r["success"])
	assert.Equal(t, "Session file not found: "+missing, r.str("error"))

	notSession := filepath.Join(t.TempDir(), "notes.jsonl")
	require.NoError(t, os.WriteFile(notSession, []byte(`{"type":"message","id":"x"}`+"\n"), 0o644))
	r = p.call("4", map[string]any{"type": "switch_session", "sessionPath": notSession})
	assert.Equal(t, false, r["success"])
	assert.Contains(t, r.str("error"), "not a session file")

	for i, id := range []string{"nope", assistantID} {
		r = p.call("5"+string(rune('a'+i)), map[string]any{"type": "fork", "entryId": id})
		assert.Equal(t, false, r["success"], id)
		assert.Equal(t, "Invalid entry ID for forking", r.str("error"), id)
	}
	r = p.call("6", map[string]any{"type": "fork"})
	assert.Equal(t, false, r["success"])
	assert.Contains(t, r.str("error"), "entryId")

	// Nothing moved.
	st := p.state("7")
	assert.Equal(t, file, st["sessionFile"])
	assert.EqualValues(t, 3, st["messageCount"]) // system, user, reply

	// A damaged line is skipped and reported; the rest loads.
	saved, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(saved), "\n")
	damaged := filepath.Join(t.TempDir(), "damaged.jsonl")
	require.NoError(t, os.WriteFile(damaged, []byte(lines[0]+"not json at all\n"+strings.Join(lines[1:], "")), 0o644))
	p.ok("8", map[string]any{"type": "switch_session", "sessionPath": damaged})
	st = p.state("9")
	assert.Equal(t, damaged, st["sessionFile"])
	assert.EqualValues(t, 3, st["messageCount"])
	p.stderr.await("skipped line 2", waitLimit)
	assert.Contains(t, p.stderr.String(), "skipped line 2")
	assert.Equal(t, 0, p.exit())
}

func TestRPCClone(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("reply one"), llmtest.Text("reply two"), llmtest.Text("reply three"))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "one"})
	p.idle()
	p.ok("2", map[string]any{"type": "prompt", "message": "two"})
	p.idle()
	p.ok("3", map[string]any{"type": "set_session_name", "name": "cloned work"})
	before := p.messages("4")
	first := p.state("5")["sessionFile"].(string)

	res := p.ok("6", map[string]any{"type": "clone"}).(map[string]any)
	assert.Equal(t, false, res["cancelled"])
	st := p.state("7")
	clone := st["sessionFile"].(string)
	assert.NotEqual(t, first, clone)
	assert.Equal(t, filepath.Dir(first), filepath.Dir(clone))
	assert.EqualValues(t, 5, st["messageCount"])
	assert.Equal(t, "cloned work", st["sessionName"], "the name is on the branch and comes along")
	assert.Equal(t, before, p.messages("8"))

	// The clone is on disk already, with the same branch and a parent.
	cs := loadSession(t, clone)
	assert.Equal(t, first, cs.Header().ParentSession)
	assert.Equal(t, loadSession(t, first).Context().Messages, cs.Context().Messages)

	// The clone continues on its own; the original stays as it was.
	p.ok("9", map[string]any{"type": "prompt", "message": "three"})
	p.idle()
	assert.Equal(t, []string{"one", "reply one", "two", "reply two", "three"}, requestTexts(w.srv.Requests()[2]))
	assert.Equal(t, 0, p.exit())
	assert.Len(t, conversation(loadSession(t, clone).Context().Messages), 6)
	assert.Len(t, conversation(loadSession(t, first).Context().Messages), 4)
}

func TestRPCSwitchIntoPiSession(t *testing.T) {
	t.Parallel()
	ref, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sessions", "pi-0.73.1.jsonl"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "from-pi.jsonl")
	require.NoError(t, os.WriteFile(path, ref, 0o644))
	want := loadSession(t, path).Context()
	require.NotNil(t, want.Model)
	require.Equal(t, "fake", want.Model.Provider)

	w := newWorld(t, llmtest.Text("continued"))
	p := w.start("--thinking", "high")
	require.Equal(t, "high", p.state("1")["thinkingLevel"])

	p.ok("2", map[string]any{"type": "switch_session", "sessionPath": path})
	st := p.state("3")
	assert.Equal(t, path, st["sessionFile"])
	assert.Equal(t, "01a1fe73-4f26-7251-b938-692c21ec01a2", st["sessionId"])
	assert.Equal(t, "reference session", st["sessionName"])
	assert.EqualValues(t, len(want.Messages), st["messageCount"])
	// Provider "fake" is not configured here: the current model stays, and
	// the file's thinking level (off) is restored.
	assert.Equal(t, "scripted-1", st["model"].(map[string]any)["id"])
	assert.Equal(t, "off", st["thinkingLevel"])
	p.stderr.await("could not restore model fake/fake-haiku; using scripted/scripted-1", waitLimit)
	assert.Contains(t, p.stderr.String(), "could not restore model fake/fake-haiku; using scripted/scripted-1")

	msgs := p.messages("4")
	require.Len(t, msgs, len(want.Messages))
	assert.Equal(t, "compactionSummary", msgs[0].(map[string]any)["role"])
	assert.Equal(t, "after-compaction", messageText(msgs[len(msgs)-1]))
	forks := p.ok("5", map[string]any{"type": "get_fork_messages"}).(map[string]any)["messages"].([]any)
	assert.Len(t, forks, 4, "every user message of the file can be forked from")

	// Continue the conversation on the current model.
	p.ok("6", map[string]any{"type": "prompt", "message": "and now?"})
	p.idle()
	req := w.srv.Requests()[0]
	assert.Equal(t, "scripted-1", req.JSON()["model"])
	texts := requestTexts(req)
	require.NotEmpty(t, texts)
	assert.Contains(t, texts[0], "Summarized conversation.")
	assert.Equal(t, "and now?", texts[len(texts)-1])
	assert.Contains(t, texts, "after-compaction")
	assert.Equal(t, "continued", p.ok("7", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)["text"])
	assert.Equal(t, 0, p.exit())

	// pi's lines are kept as they were; the continuation follows them.
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(after), string(ref)), "the file was rewritten instead of appended to")
	got := loadSession(t, path)
	ctx := got.Context()
	assert.Equal(t, &session.ModelRef{Provider: "scripted", ModelID: "scripted-1"}, ctx.Model)
	// gopi's first request in pi's session declares its prompt and tools.
	assert.Len(t, ctx.Messages, len(want.Messages)+3)
	var changed bool
	for _, e := range got.Path() {
		if mc, ok := e.(*session.ModelChangeEntry); ok && mc.Provider == "scripted" {
			changed = true
		}
	}
	assert.True(t, changed, "the switch of model is recorded in the session")
}

// exportAttr finds src and href attributes with their tag.
var exportAttr = regexp.MustCompile(`<([a-zA-Z]+)\b[^>]*?\s(src|href)\s*=\s*"([^"]*)"`)

// requireSelfContained fails when the page would load anything from the
// network or another file.
func requireSelfContained(t *testing.T, page string) {
	t.Helper()
	for _, m := range exportAttr.FindAllStringSubmatch(page, -1) {
		tag, attr, val := m[1], m[2], m[3]
		if attr == "src" {
			assert.True(t, strings.HasPrefix(val, "data:"), "<%s src=%q> is not embedded", tag, val)
		} else {
			assert.Equal(t, "a", tag, "<%s href=%q> loads a resource", tag, val)
		}
	}
	assert.NotRegexp(t, `(?i)<link\b`, page)
	assert.NotRegexp(t, `(?i)@import|url\(\s*['"]?(https?:)?//`, page)
}

func TestRPCExportHTML(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("Here is `the code` you asked for."), llmtest.Text("in memory reply"))
	p := w.start()

	r := p.call("1", map[string]any{"type": "export_html"})
	assert.Equal(t, false, r["success"])
	assert.Equal(t, "Nothing to export yet - start a conversation first", r.str("error"))

	p.ok("2", map[string]any{"type": "prompt", "message": "please **bold** <b>this</b>"})
	p.idle()
	st := p.state("3")
	file := st["sessionFile"].(string)
	id := st["sessionId"].(string)

	// Default: pi's name after the session file, in the cwd.
	out := p.ok("4", map[string]any{"type": "export_html"}).(map[string]any)["path"].(string)
	assert.Equal(t, w.cwd, filepath.Dir(out))
	base := filepath.Base(out)
	assert.Equal(t, "pi-session-"+strings.TrimSuffix(filepath.Base(file), ".jsonl")+".html", base)
	assert.Regexp(t, `^pi-session-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_`+regexp.QuoteMeta(id)+`\.html$`, base)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	page := string(data)
	assert.Contains(t, page, "please <strong>bold</strong> &lt;b&gt;this&lt;/b&gt;", "user markdown is rendered, raw HTML escaped")
	assert.Contains(t, page, "Here is <code>the code</code> you asked for.")
	assert.Contains(t, page, "scripted-1")
	assert.Contains(t, page, id)
	requireSelfContained(t, page)

	// A relative outputPath is taken from the cwd; an absolute one as is.
	require.NoError(t, os.Mkdir(filepath.Join(w.cwd, "out"), 0o755))
	rel := p.ok("5", map[string]any{"type": "export_html", "outputPath": "out/page.html"}).(map[string]any)["path"]
	assert.Equal(t, filepath.Join(w.cwd, "out", "page.html"), rel)
	abs := filepath.Join(t.TempDir(), "abs.html")
	assert.Equal(t, abs, p.ok("6", map[string]any{"type": "export_html", "outputPath": abs}).(map[string]any)["path"])
	for _, f := range []string{rel.(string), abs} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Equal(t, page, string(b))
	}
	r = p.call("7", map[string]any{"type": "export_html", "outputPath": "missing-dir/page.html"})
	assert.Equal(t, false, r["success"])
	assert.Contains(t, r.str("error"), "missing-dir")
	assert.Equal(t, 0, p.exit())

	// An in-memory session exports too, named as its file would be.
	p = w.start("--no-session")
	p.ok("1", map[string]any{"type": "prompt", "message": "no file here"})
	p.idle()
	id = p.state("2")["sessionId"].(string)
	out = p.ok("3", map[string]any{"type": "export_html"}).(map[string]any)["path"].(string)
	assert.Equal(t, w.cwd, filepath.Dir(out))
	assert.Regexp(t, `^pi-session-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_`+regexp.QuoteMeta(id)+`\.html$`, filepath.Base(out))
	data, err = os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(data), "in memory reply")
	assert.Equal(t, 0, p.exit())
}
