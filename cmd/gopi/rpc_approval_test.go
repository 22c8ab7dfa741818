package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// answer sends an extension_ui_response choosing value.
func (p *proc) answer(id, value string) {
	p.send(map[string]any{"type": "extension_ui_response", "id": id, "value": value})
}

// toolEnd finds the tool_execution_end of a call.
func toolEnd(rs []record, callID string) record {
	for _, r := range rs {
		if r.is("tool_execution_end") && r.str("toolCallId") == callID {
			return r
		}
	}
	return nil
}

func resultText(end record) string {
	c := end.obj("result")["content"].([]any)
	return c[0].(map[string]any)["text"].(string)
}

func TestRPCApprovalGateWrites(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("w1", "write", `{"path":"out.txt","content":"hello\n"}`)),
		llmtest.Text("ok, not written"),
		llmtest.ToolCalls(
			llmtest.Call("r1", "read", `{"path":"seed.txt"}`),
			llmtest.Call("w2", "write", `{"path":"out.txt","content":"hello\n"}`),
		),
		llmtest.ToolCalls(llmtest.Call("w3", "write", `{"path":"more.txt","content":"again\n"}`)),
		llmtest.ToolCalls(llmtest.Call("e1", "edit", `{"path":"seed.txt","edits":[{"oldText":"seed","newText":"sprout"}]}`)),
		llmtest.Text("done"),
	)
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "seed.txt"), []byte("a seed\n"), 0o644))
	p := w.start("--approval", "writes")

	// Deny: the model reads the refusal; nothing is written.
	p.ok("1", map[string]any{"type": "prompt", "message": "write it"})
	rs := p.until(func(r record) bool { return r.is("extension_ui_request") })
	req := rs[len(rs)-1]
	assert.Equal(t, "select", req.str("method"))
	assert.Equal(t, "Allow write: out.txt?", req.str("title"))
	assert.Equal(t, []any{"Allow", "Allow always", "Deny"}, req["options"])
	details := req.obj("details")
	assert.Equal(t, "write", details.str("toolName"))
	assert.Equal(t, "w1", details.str("toolCallId"), "the question names its call, as its tool_execution events do")
	assert.Equal(t, "out.txt", details.obj("args").str("path"))
	assert.Contains(t, details.str("diff"), "+hello")
	p.answer(req.str("id"), "Deny")
	rs = p.idle()
	end := toolEnd(rs, "w1")
	require.NotNil(t, end)
	assert.Equal(t, true, end["isError"])
	assert.Contains(t, resultText(end), "denied by the user")
	assert.NoFileExists(t, filepath.Join(w.cwd, "out.txt"))

	// Allow always: read never asks under "writes"; write asks once.
	p.ok("2", map[string]any{"type": "prompt", "message": "try again"})
	rs = p.until(func(r record) bool { return r.is("extension_ui_request") })
	req = rs[len(rs)-1]
	assert.Equal(t, "Allow write: out.txt?", req.str("title"), "only the write asks")
	p.answer(req.str("id"), "Allow always")
	rs = p.until(func(r record) bool { return r.is("extension_ui_request") })
	req = rs[len(rs)-1]
	for _, r := range rs {
		assert.False(t, r.is("extension_ui_request") && r.str("title") != "Allow edit: seed.txt?", "asked again: %v", r)
	}
	assert.Equal(t, "Allow edit: seed.txt?", req.str("title"))
	assert.Contains(t, req.obj("details").str("diff"), "-a seed\n+a sprout\n")
	assert.FileExists(t, filepath.Join(w.cwd, "out.txt"))
	assert.FileExists(t, filepath.Join(w.cwd, "more.txt"))
	p.answer(req.str("id"), "Allow")
	p.idle()
	data, err := os.ReadFile(filepath.Join(w.cwd, "seed.txt"))
	require.NoError(t, err)
	assert.Equal(t, "a sprout\n", string(data))
	assert.Equal(t, 0, p.exit())
}

func TestRPCApprovalFromSettingsTimesOutAndAborts(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("r1", "read", `{"path":"seed.txt"}`)),
		llmtest.Text("could not read"),
		llmtest.ToolCalls(llmtest.Call("b1", "bash", `{"command":"echo never"}`)),
	)
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "seed.txt"), []byte("a seed\n"), 0o644))
	w.trustProject()
	w.writeJSON(filepath.Join(w.cwd, ".pi", "settings.json"), map[string]any{"approval": "all", "approvalTimeoutMs": 200})
	p := w.start()

	// Nobody answers: the question times out and counts as Deny.
	p.ok("1", map[string]any{"type": "prompt", "message": "read it"})
	rs := p.idle()
	var asked record
	for _, r := range rs {
		if r.is("extension_ui_request") {
			asked = r
		}
	}
	require.NotNil(t, asked, "with approval all, read asks too")
	assert.EqualValues(t, 200, asked["timeout"])
	end := toolEnd(rs, "r1")
	assert.Equal(t, true, end["isError"])
	assert.Contains(t, resultText(end), "denied by the user")

	// An abort while the question waits ends the run.
	p.ok("2", map[string]any{"type": "prompt", "message": "run it"})
	p.until(func(r record) bool { return r.is("extension_ui_request") })
	p.send(map[string]any{"id": "3", "type": "abort"})
	rs = p.until(func(r record) bool { return r.is("response") && r["id"] == "3" })
	assert.Contains(t, types(rs), "agent_end")
	assert.Equal(t, 0, p.exit())
}

// collect reads records until every one of the matches has been seen at
// least once, and returns all of them.
func (p *proc) collect(matches ...func(record) bool) []record {
	p.t.Helper()
	seen := make([]bool, len(matches))
	left := len(matches)
	return p.until(func(r record) bool {
		for i, m := range matches {
			if !seen[i] && m(r) {
				seen[i] = true
				left--
			}
		}
		return left == 0
	})
}

// Issue 25: an abort while an approval question waits asks nothing more.
// The later calls of the same message end as aborted, as calls an abort
// stops always do; none of them runs.
func TestRPCApprovalAbortAsksNoMore(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(
			llmtest.Call("w1", "write", `{"path":"a.txt","content":"a\n"}`),
			llmtest.Call("b1", "bash", `{"command":"echo x > x.txt"}`),
			llmtest.Call("w2", "write", `{"path":"c.txt","content":"c\n"}`),
		),
	)
	p := w.start("--approval", "writes")
	p.ok("1", map[string]any{"type": "prompt", "message": "write a; bash x; write c"})
	rs := p.until(func(r record) bool { return r.is("extension_ui_request") })
	assert.Equal(t, "Allow write: a.txt?", rs[len(rs)-1].str("title"))

	p.send(map[string]any{"id": "2", "type": "abort"})
	rs = p.collect(
		func(r record) bool { return r.is("response") && r["id"] == "2" },
		func(r record) bool { return r.is("agent_end") },
	)
	for _, r := range rs {
		assert.False(t, r.is("extension_ui_request"), "asked after the abort: %v", r)
	}
	for _, id := range []string{"w1", "b1", "w2"} {
		end := toolEnd(rs, id)
		require.NotNil(t, end, "%s has no end\n%s", id, p.transcript())
		assert.Equal(t, true, end["isError"])
		assert.Equal(t, "Operation aborted", resultText(end), id)
	}
	for _, f := range []string{"a.txt", "x.txt", "c.txt"} {
		assert.NoFileExists(t, filepath.Join(w.cwd, f))
	}
	assert.Equal(t, 0, p.exit())
}

// askAndDeny prompts and denies every approval question of the run; it
// returns the questions in order and the run's records.
func (p *proc) askAndDeny(id, message string) (asked []record, rs []record) {
	p.t.Helper()
	p.ok(id, map[string]any{"type": "prompt", "message": message})
	rs = p.until(func(r record) bool {
		if r.is("extension_ui_request") && r.str("method") == "select" {
			asked = append(asked, r)
			p.answer(r.str("id"), "Deny")
		}
		return r.is("agent_end")
	})
	return asked, rs
}

// Issue 25: pi's clients show a select's title and nothing else, so the
// question shows every line of a command, escapes what could disguise it,
// and when it must cut says how much it left out; the details hold the
// whole call.
func TestRPCApprovalQuestionShowsTheWholeCall(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	for i := range 30 {
		fmt.Fprintf(&long, "echo line %d\n", i+1)
	}
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("b1", "bash", `{"command":"echo harmless\ntouch pwned.txt"}`)),
		llmtest.ToolCalls(llmtest.Call("b2", "bash", `{"command":"echo ok\r\u001b[2Ktouch pwned.txt"}`)),
		llmtest.ToolCalls(llmtest.Call("b3", "bash", mustJSON(t, map[string]any{"command": long.String() + "touch pwned.txt"}))),
		llmtest.ToolCalls(llmtest.Call("w1", "write", `{"path":"notes.txt\n../../escape.txt","content":"x"}`)),
		llmtest.Text("all denied"),
	)
	p := w.start("--approval", "writes")
	asked, _ := p.askAndDeny("1", "try")
	require.Len(t, asked, 4, p.transcript())

	assert.Equal(t, "Allow bash: echo harmless\ntouch pwned.txt?", asked[0].str("title"))
	assert.Equal(t, `Allow bash: echo ok\r\x1b[2Ktouch pwned.txt?`, asked[1].str("title"))
	title := asked[2].str("title")
	assert.True(t, strings.HasPrefix(title, "Allow bash: echo line 1\necho line 2\n"), title)
	assert.True(t, strings.HasSuffix(title, "echo line 20 … (+11 more lines, see details)?"), title)
	assert.Equal(t, long.String()+"touch pwned.txt", asked[2].obj("details").obj("args").str("command"))
	assert.Equal(t, `Allow write: notes.txt\n../../escape.txt?`, asked[3].str("title"))
	assert.NoFileExists(t, filepath.Join(w.cwd, "pwned.txt"))
	assert.Equal(t, 0, p.exit())
}

// Issue 25: a path reached through a symbolic link (of the file or of a
// directory on the way) is asked about as the file it really is, and one
// outside the project says so; details carry the resolved path. What is
// approved is what runs: a link changed while the question waits does not
// move the write elsewhere.
func TestRPCApprovalQuestionNamesTheRealTarget(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("w1", "write", `{"path":"notes.txt","content":"pwned\n"}`)),
		llmtest.ToolCalls(llmtest.Call("w2", "write", `{"path":"cfg/new.txt","content":"pwned\n"}`)),
		llmtest.ToolCalls(llmtest.Call("e1", "edit", `{"path":"alias.txt","edits":[{"oldText":"real","newText":"edited"}]}`)),
		llmtest.ToolCalls(llmtest.Call("w3", "write", `{"path":"../escape.txt","content":"x"}`)),
		llmtest.ToolCalls(llmtest.Call("r1", "read", `{"path":"cfg/.bashrc"}`)),
		llmtest.ToolCalls(llmtest.Call("w4", "write", `{"path":"plain.txt","content":"plain\n"}`)),
		llmtest.ToolCalls(llmtest.Call("w5", "write", `{"path":"notes.txt","content":"approved\n"}`)),
		llmtest.Text("done"),
	)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	bashrc := filepath.Join(outside, ".bashrc")
	require.NoError(t, os.WriteFile(bashrc, []byte("original\n"), 0o644))
	require.NoError(t, os.Symlink(bashrc, filepath.Join(w.cwd, "notes.txt")))
	require.NoError(t, os.Symlink(outside, filepath.Join(w.cwd, "cfg")))
	require.NoError(t, os.Mkdir(filepath.Join(w.cwd, "docs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "docs", "real.txt"), []byte("real\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join("docs", "real.txt"), filepath.Join(w.cwd, "alias.txt")))
	p := w.start("--approval", "all")

	p.ok("1", map[string]any{"type": "prompt", "message": "go"})
	var asked []record
	p.until(func(r record) bool {
		if r.is("extension_ui_request") && r.str("method") == "select" {
			asked = append(asked, r)
			if len(asked) < 7 {
				p.answer(r.str("id"), "Deny")
				return false
			}
			// The link moves while the question waits: the write still
			// lands in the file the question named.
			link := filepath.Join(w.cwd, "notes.txt")
			require.NoError(t, os.Remove(link))
			require.NoError(t, os.Symlink(filepath.Join(outside, "other.txt"), link))
			p.answer(r.str("id"), "Allow")
		}
		return r.is("agent_end")
	})
	require.Len(t, asked, 7, p.transcript())
	titles := make([]string, len(asked))
	for i, r := range asked {
		titles[i] = r.str("title")
	}
	assert.Equal(t, []string{
		"Allow write: notes.txt → " + bashrc + " (outside the project)?",
		"Allow write: cfg/new.txt → " + filepath.Join(outside, "new.txt") + " (outside the project)?",
		"Allow edit: alias.txt → " + filepath.Join("docs", "real.txt") + "?",
		"Allow write: ../escape.txt (outside the project)?",
		"Allow read: cfg/.bashrc → " + bashrc + " (outside the project)?",
		"Allow write: plain.txt?",
		"Allow write: notes.txt → " + bashrc + " (outside the project)?",
	}, titles)
	d := asked[0].obj("details")
	assert.Equal(t, bashrc, d.str("resolvedPath"))
	assert.Equal(t, true, d["outsideProject"])
	assert.Contains(t, d.str("diff"), "-original")
	d = asked[2].obj("details")
	cwd, err := filepath.EvalSymlinks(w.cwd)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(cwd, "docs", "real.txt"), d.str("resolvedPath"))
	assert.Nil(t, d["outsideProject"])

	data, err := os.ReadFile(bashrc)
	require.NoError(t, err)
	assert.Equal(t, "approved\n", string(data), "the approved file was written")
	assert.NoFileExists(t, filepath.Join(outside, "other.txt"), "the link's new target was not")
	assert.NoFileExists(t, filepath.Join(outside, "new.txt"))
	assert.Equal(t, 0, p.exit())
}

// answerWith sends an extension_ui_response choosing value, with the
// file content the user settled on.
func (p *proc) answerWith(id, value, content string) {
	p.send(map[string]any{"type": "extension_ui_response", "id": id, "value": value, "content": content})
}

// An approval answer may carry the whole content the user wants an edit
// or write to leave in the file (the proposal as they changed it): the
// call writes exactly that, through the link target the question named,
// and its result tells the model the file holds the user's version. The
// same content as the proposal changes nothing; other tools ignore it.
func TestRPCApprovalAnswerCarriesTheUserVersion(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("e1", "edit", `{"path":"seed.txt","edits":[{"oldText":"seed","newText":"sprout"}]}`)),
		llmtest.ToolCalls(llmtest.Call("w1", "write", `{"path":"out.txt","content":"hello\n"}`)),
		llmtest.ToolCalls(llmtest.Call("e2", "edit", `{"path":"seed.txt","edits":[{"oldText":"tree","newText":"bush"}]}`)),
		llmtest.ToolCalls(llmtest.Call("b1", "bash", `{"command":"echo x > x.txt"}`)),
		llmtest.ToolCalls(llmtest.Call("w2", "write", `{"path":"notes.txt","content":"model\n"}`)),
		llmtest.Text("done"),
	)
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "seed.txt"), []byte("a seed\n"), 0o644))
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	real := filepath.Join(outside, "real.txt")
	require.NoError(t, os.WriteFile(real, []byte("original\n"), 0o644))
	link := filepath.Join(w.cwd, "notes.txt")
	require.NoError(t, os.Symlink(real, link))
	p := w.start("--approval", "writes")

	p.ok("1", map[string]any{"type": "prompt", "message": "go"})
	var titles []string
	rs := p.until(func(r record) bool {
		if !r.is("extension_ui_request") || r.str("method") != "select" {
			return r.is("agent_end")
		}
		titles = append(titles, r.str("title"))
		id := r.str("id")
		switch tool := r.obj("details").str("toolName"); {
		case tool == "edit" && len(titles) == 1:
			p.answerWith(id, "Allow", "a tree\n")
		case tool == "write" && len(titles) == 2:
			p.answerWith(id, "Allow", "hi there\n")
		case tool == "edit":
			p.answerWith(id, "Allow", "a bush\n") // just what the model asked for
		case tool == "bash":
			p.answerWith(id, "Allow", "touch other.txt")
		default:
			// The link moves while the question waits: the user's
			// version still lands in the file the question named.
			require.NoError(t, os.Remove(link))
			require.NoError(t, os.Symlink(filepath.Join(outside, "other.txt"), link))
			p.answerWith(id, "Allow always", "user\n")
		}
		return false
	})
	require.Len(t, titles, 5, p.transcript())

	read := func(name string) string {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		return string(data)
	}
	changed := "the user changed your proposed change"
	end := toolEnd(rs, "e1")
	require.NotNil(t, end)
	assert.Equal(t, false, end["isError"])
	assert.Contains(t, resultText(end), "Successfully replaced the content of seed.txt.")
	assert.Contains(t, strings.ToLower(resultText(end)), changed)
	assert.Contains(t, end.obj("result").obj("details").str("diff"), "+1 a tree")

	end = toolEnd(rs, "w1")
	assert.Contains(t, strings.ToLower(resultText(end)), changed)
	assert.Equal(t, "hi there\n", read(filepath.Join(w.cwd, "out.txt")))

	end = toolEnd(rs, "e2")
	assert.Equal(t, "Successfully replaced 1 block(s) in seed.txt.", resultText(end), "same as the proposal: nothing said")
	assert.Equal(t, "a bush\n", read(filepath.Join(w.cwd, "seed.txt")))

	end = toolEnd(rs, "b1")
	assert.NotContains(t, strings.ToLower(resultText(end)), changed)
	assert.FileExists(t, filepath.Join(w.cwd, "x.txt"))
	assert.NoFileExists(t, filepath.Join(w.cwd, "other.txt"), "bash ignores content")

	end = toolEnd(rs, "w2")
	assert.Contains(t, strings.ToLower(resultText(end)), changed)
	assert.Equal(t, "user\n", read(real))
	assert.NoFileExists(t, filepath.Join(outside, "other.txt"))

	// The model's next request carries what the tool results said.
	last := w.srv.LastRequest(t)
	assert.Contains(t, strings.ToLower(string(last.Body)), changed)
	assert.Equal(t, 0, p.exit())
}

// Issue 37, item 5: what the user approved is the file they were shown.
// conf.txt is a regular file when the question is asked and a link to a
// file outside the project when the user answers; new.txt does not exist
// when asked and is a link to another outside file when the user
// answers. Both approved calls fail, the model reads why, and neither
// outside file changes, nor does anything appear outside.
func TestRPCApprovedCallRefusesAFileSwappedForALink(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("e1", "edit", `{"path":"conf.txt","edits":[{"oldText":"key=1","newText":"key=2"}]}`)),
		llmtest.ToolCalls(llmtest.Call("w1", "write", `{"path":"new.txt","content":"pwned\n"}`)),
		llmtest.ToolCalls(llmtest.Call("w2", "write", `{"path":"sub/deep/new.txt","content":"pwned\n"}`)),
		llmtest.ToolCalls(llmtest.Call("w3", "write", `{"path":"plain.txt","content":"fine\n"}`)),
		llmtest.Text("done"),
	)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	conf, other := filepath.Join(outside, "conf.txt"), filepath.Join(outside, "other.txt")
	require.NoError(t, os.WriteFile(conf, []byte("key=1\n"), 0o644))
	require.NoError(t, os.WriteFile(other, []byte("keep\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "conf.txt"), []byte("key=1\n"), 0o644))
	p := w.start("--approval", "writes")

	p.ok("1", map[string]any{"type": "prompt", "message": "go"})
	var titles []string
	rs := p.until(func(r record) bool {
		if !r.is("extension_ui_request") || r.str("method") != "select" {
			return r.is("agent_end")
		}
		titles = append(titles, r.str("title"))
		switch r.obj("details").str("toolCallId") {
		case "e1": // the file is swapped for a link while the question waits
			require.NoError(t, os.Remove(filepath.Join(w.cwd, "conf.txt")))
			require.NoError(t, os.Symlink(conf, filepath.Join(w.cwd, "conf.txt")))
		case "w1": // a link appears where there was no file
			require.NoError(t, os.Symlink(other, filepath.Join(w.cwd, "new.txt")))
		case "w2": // a missing directory appears as a link
			require.NoError(t, os.Symlink(outside, filepath.Join(w.cwd, "sub")))
		}
		p.answer(r.str("id"), "Allow")
		return false
	})
	assert.Equal(t, []string{"Allow edit: conf.txt?", "Allow write: new.txt?", "Allow write: sub/deep/new.txt?", "Allow write: plain.txt?"}, titles)

	for _, c := range []struct{ id, path, now string }{
		{"e1", filepath.Join(w.cwd, "conf.txt"), "a link to " + conf},
		{"w1", filepath.Join(w.cwd, "new.txt"), "a link to " + other},
		{"w2", filepath.Join(w.cwd, "sub"), "a link to " + outside},
	} {
		end := toolEnd(rs, c.id)
		require.NotNil(t, end, p.transcript())
		assert.Equal(t, true, end["isError"], c.id)
		assert.Contains(t, resultText(end), c.path+" changed while the approval question waited (it is now "+c.now+"); "+
			"the approval was for the file the question named, so nothing was read or written", c.id)
	}
	assert.Equal(t, "Successfully wrote 5 bytes to plain.txt", resultText(toolEnd(rs, "w3")), "an unchanged target is written")

	data, err := os.ReadFile(conf)
	require.NoError(t, err)
	assert.Equal(t, "key=1\n", string(data), "the file outside is byte-identical")
	data, err = os.ReadFile(other)
	require.NoError(t, err)
	assert.Equal(t, "keep\n", string(data))
	assert.NoDirExists(t, filepath.Join(outside, "deep"), "nothing was made outside")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Len(t, entries, 2)
	assert.Equal(t, 0, p.exit())
}
