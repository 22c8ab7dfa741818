package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The client's side of a session: gopi reads and writes files through
// the editor (fs/*), runs bash in its terminals (terminal/*), and shows
// edits as diffs. The test plays the editor and answers gopi's requests.

// clientRequestDefs are the schema's types of the params of gopi's
// requests to the client, by method.
var clientRequestDefs = map[string]string{
	"fs/read_text_file":      "ReadTextFileRequest",
	"fs/write_text_file":     "WriteTextFileRequest",
	"terminal/create":        "CreateTerminalRequest",
	"terminal/output":        "TerminalOutputRequest",
	"terminal/wait_for_exit": "WaitForTerminalExitRequest",
	"terminal/kill":          "KillTerminalRequest",
	"terminal/release":       "ReleaseTerminalRequest",
	"$/cancel_request":       "CancelRequestNotification",
	// acp_permission_test.go
	"session/request_permission": "RequestPermissionRequest",
	"elicitation/create":         "CreateElicitationRequest",
}

// reply is how the test's editor answers one of gopi's requests: a
// result, an error, or (hold) no answer yet.
type reply struct {
	result any
	err    string
	hold   bool
}

// served reads frames up to the response to id, answering gopi's
// requests with handle; it returns the updates, the response and gopi's
// requests and notifications (method and params), in order.
func (p *aproc) served(id float64, handle func(method string, params record) reply) (updates []record, resp record, asked []record) {
	p.t.Helper()
	for {
		r := p.frame()
		method := r.str("method")
		switch {
		case method == "session/update":
			updates = append(updates, r)
			continue
		case method != "":
			asked = append(asked, r)
			if r["id"] == nil {
				continue // a notification ($/cancel_request)
			}
			a := handle(method, r.obj("params"))
			switch {
			case a.hold:
			case a.err != "":
				p.write(map[string]any{"jsonrpc": "2.0", "id": r["id"], "error": map[string]any{"code": -32603, "message": a.err}})
			default:
				res := a.result
				if res == nil {
					res = map[string]any{}
				}
				p.write(map[string]any{"jsonrpc": "2.0", "id": r["id"], "result": res})
			}
			continue
		}
		require.Equal(p.t, id, r["id"], "a response to another request\n%s", p.transcript())
		return updates, r, asked
	}
}

// startedWith initializes with the client capabilities caps and opens a
// session in cwd.
func (p *aproc) startedWith(cwd string, caps map[string]any) string {
	p.t.Helper()
	p.result(p.request("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps}))
	return p.newSession(cwd)
}

var fsCaps = map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}}

// editorFS is the test editor's buffers: reads answer them, writes
// replace them; a path it has no buffer for is read from the disk, as an
// editor opens it.
type editorFS struct {
	t       *testing.T
	session string
	buffers map[string]string
	writes  []record
}

func (e *editorFS) handle(method string, params record) reply {
	e.t.Helper()
	assert.Equal(e.t, e.session, params.str("sessionId"))
	path := params.str("path")
	assert.True(e.t, filepath.IsAbs(path), "%s: a relative path %q", method, path)
	switch method {
	case "fs/read_text_file":
		if b, ok := e.buffers[path]; ok {
			return reply{result: map[string]any{"content": b}}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return reply{err: "no such file: " + path}
		}
		return reply{result: map[string]any{"content": string(data)}}
	case "fs/write_text_file":
		e.writes = append(e.writes, params)
		e.buffers[path] = params.str("content")
		return reply{}
	}
	e.t.Errorf("an unexpected request %s", method)
	return reply{err: "unexpected"}
}

// finalToolUpdate is the last tool_call_update of the prompt's updates.
func finalToolUpdate(t *testing.T, ups []record) record {
	t.Helper()
	for i := len(ups) - 1; i >= 0; i-- {
		if u := upd(ups[i]); u.str("sessionUpdate") == "tool_call_update" && u.str("status") != "in_progress" && u["status"] != nil {
			return u
		}
	}
	t.Fatalf("no final tool_call_update")
	return nil
}

// contentOf is the content entries of an update of type typ.
func contentOf(u record, typ string) []record {
	var out []record
	cs, _ := u["content"].([]any)
	for _, c := range cs {
		if r := record(c.(map[string]any)); r.str("type") == typ {
			out = append(out, r)
		}
	}
	return out
}

// updateText joins the text content of an update.
func updateText(u record) string {
	var s string
	for _, c := range contentOf(u, "content") {
		s += c.obj("content").str("text")
	}
	return s
}

func TestACPReadsTheEditorsUnsavedBuffer(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	note := filepath.Join(cwd, "note.txt")
	require.NoError(t, os.WriteFile(note, []byte("saved on disk\n"), 0o644))
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	s := p.startedWith(cwd, fsCaps)
	ed := &editorFS{t: t, session: s, buffers: map[string]string{note: "unsaved in the editor, and longer than the file on disk\n"}}

	ups, resp, asked := p.served(p.prompt(s, "read: note.txt"), ed.handle)
	require.Nil(t, resp["error"])
	assert.Equal(t, "end_turn", resp.obj("result").str("stopReason"))
	require.NotEmpty(t, asked)
	assert.Equal(t, "fs/read_text_file", asked[0].str("method"))
	assert.Equal(t, note, asked[0].obj("params").str("path"))
	end := finalToolUpdate(t, ups)
	assert.Equal(t, "completed", end.str("status"))
	assert.Contains(t, updateText(end), "unsaved in the editor")
	assert.NotContains(t, updateText(end), "saved on disk")
	assert.Contains(t, chunks(ups, "agent_message_chunk"), "unsaved in the editor", "the model read the editor's content")

	// The editor cannot read it: the tool fails with its message.
	ed.buffers = map[string]string{}
	require.NoError(t, os.Remove(note))
	require.NoError(t, os.WriteFile(note, []byte("on disk again\n"), 0o644))
	failing := func(method string, params record) reply { return reply{err: "the buffer is locked"} }
	ups, resp, _ = p.served(p.prompt(s, "read: note.txt"), failing)
	require.Nil(t, resp["error"])
	end = finalToolUpdate(t, ups)
	assert.Equal(t, "failed", end.str("status"))
	assert.Contains(t, updateText(end), "the buffer is locked")
	assert.NotContains(t, updateText(end), "on disk again")

	// A binary file (an image) is read from the disk, not through the
	// editor.
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef\x00\x00\x00\x00IEND\xaeB`\x82")
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "dot.png"), png, 0o644))
	ups, resp, asked = p.served(p.prompt(s, "read: dot.png"), ed.handle)
	require.Nil(t, resp["error"])
	assert.Empty(t, asked, "no request to the editor for an image")
	assert.Equal(t, "completed", finalToolUpdate(t, ups).str("status"))
	assert.Equal(t, 0, p.exit())
}

func TestACPWritesAndEditsThroughTheEditor(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	f := filepath.Join(cwd, "f.txt")
	require.NoError(t, os.WriteFile(f, []byte("a\nold line\nb\n"), 0o644))
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	s := p.startedWith(cwd, fsCaps)
	unsaved := "a\nold line\nb\nunsaved tail\n"
	ed := &editorFS{t: t, session: s, buffers: map[string]string{f: unsaved}}

	// An edit applies to the editor's buffer, and lands there.
	ups, resp, _ := p.served(p.prompt(s, "edit: f.txt :: old line => new line"), ed.handle)
	require.Nil(t, resp["error"])
	end := finalToolUpdate(t, ups)
	assert.Equal(t, "completed", end.str("status"), "%v", end)
	require.Len(t, ed.writes, 1)
	assert.Equal(t, f, ed.writes[0].str("path"))
	assert.Equal(t, "a\nnew line\nb\nunsaved tail\n", ed.writes[0].str("content"))
	disk, err := os.ReadFile(f)
	require.NoError(t, err)
	assert.Equal(t, "a\nold line\nb\n", string(disk), "the disk is the editor's to save")
	// Its diff is of the whole buffer, before and after.
	diffs := contentOf(end, "diff")
	require.Len(t, diffs, 1)
	assert.Equal(t, f, diffs[0].str("path"))
	assert.Equal(t, unsaved, diffs[0].str("oldText"))
	assert.Equal(t, "a\nnew line\nb\nunsaved tail\n", diffs[0].str("newText"))

	// A new file is written through the editor too: a diff with no old
	// text.
	n := filepath.Join(cwd, "new.txt")
	ups, resp, _ = p.served(p.prompt(s, "write: new.txt :: hello editor"), ed.handle)
	require.Nil(t, resp["error"])
	end = finalToolUpdate(t, ups)
	assert.Equal(t, "completed", end.str("status"))
	require.Len(t, ed.writes, 2)
	assert.Equal(t, n, ed.writes[1].str("path"))
	assert.Equal(t, "hello editor", ed.writes[1].str("content"))
	assert.NoFileExists(t, n)
	diffs = contentOf(end, "diff")
	require.Len(t, diffs, 1)
	assert.Equal(t, "hello editor", diffs[0].str("newText"))
	assert.Nil(t, diffs[0]["oldText"], "a new file")

	// The editor refuses a write: the tool fails with its message.
	refusing := func(method string, params record) reply {
		if method == "fs/write_text_file" {
			return reply{err: "the file is read-only in the editor"}
		}
		return ed.handle(method, params)
	}
	ups, resp, _ = p.served(p.prompt(s, "write: f.txt :: replaced"), refusing)
	require.Nil(t, resp["error"])
	end = finalToolUpdate(t, ups)
	assert.Equal(t, "failed", end.str("status"))
	assert.Contains(t, updateText(end), "the file is read-only in the editor")
	assert.Empty(t, contentOf(end, "diff"), "no diff of a failed call")
	assert.Equal(t, 0, p.exit())
}

func TestACPLocalDiffsWithoutTheClientsFileSystem(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	f := filepath.Join(cwd, "f.txt")
	require.NoError(t, os.WriteFile(f, []byte("one\ntwo\nthree\n"), 0o644))
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	s := p.started(cwd)
	none := func(method string, params record) reply {
		t.Errorf("gopi asked the client %s, which declared no capabilities", method)
		return reply{err: "not supported"}
	}

	ups, resp, _ := p.served(p.prompt(s, "edit: f.txt :: two => TWO"), none)
	require.Nil(t, resp["error"])
	diffs := contentOf(finalToolUpdate(t, ups), "diff")
	require.Len(t, diffs, 1)
	assert.Equal(t, f, diffs[0].str("path"))
	assert.Equal(t, "one\ntwo\nthree\n", diffs[0].str("oldText"), "the whole file before")
	assert.Equal(t, "one\nTWO\nthree\n", diffs[0].str("newText"), "the whole file after")

	ups, resp, _ = p.served(p.prompt(s, "write: f.txt :: fresh"), none)
	require.Nil(t, resp["error"])
	diffs = contentOf(finalToolUpdate(t, ups), "diff")
	require.Len(t, diffs, 1)
	assert.Equal(t, "one\nTWO\nthree\n", diffs[0].str("oldText"), "a write over a file shows what it held")
	assert.Equal(t, "fresh", diffs[0].str("newText"))
	disk, err := os.ReadFile(f)
	require.NoError(t, err)
	assert.Equal(t, "fresh", string(disk))

	ups, resp, _ = p.served(p.prompt(s, "bash: echo local"), none)
	require.Nil(t, resp["error"])
	end := finalToolUpdate(t, ups)
	assert.Empty(t, contentOf(end, "terminal"))
	assert.Contains(t, updateText(end), "local")
	assert.Equal(t, 0, p.exit())
}

// editorTerminal answers terminal requests as an editor whose command
// printed output and exited with code.
type editorTerminal struct {
	t       *testing.T
	session string
	output  string
	code    int
	created record
	waitFor func() reply // the wait_for_exit answer; nil answers at once
}

func (e *editorTerminal) handle(method string, params record) reply {
	e.t.Helper()
	assert.Equal(e.t, e.session, params.str("sessionId"))
	if method != "terminal/create" {
		assert.Equal(e.t, "term-1", params.str("terminalId"), method)
	}
	switch method {
	case "terminal/create":
		e.created = params
		return reply{result: map[string]any{"terminalId": "term-1"}}
	case "terminal/wait_for_exit":
		if e.waitFor != nil {
			return e.waitFor()
		}
		return reply{result: map[string]any{"exitCode": e.code}}
	case "terminal/output":
		return reply{result: map[string]any{"output": e.output, "truncated": false}}
	case "terminal/kill", "terminal/release":
		return reply{}
	}
	e.t.Errorf("an unexpected request %s", method)
	return reply{err: "unexpected"}
}

func methods(asked []record) []string {
	var out []string
	for _, r := range asked {
		out = append(out, r.str("method"))
	}
	return out
}

func TestACPBashRunsInTheEditorsTerminal(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	// The editor's terminal is used with the sandbox off (ACP's default
	// sandbox runs commands in gopi, confined:
	// TestACPSandboxAdditionalDirectories).
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session", "--sandbox", "off")
	s := p.startedWith(cwd, map[string]any{"terminal": true})
	term := &editorTerminal{t: t, session: s, output: "printed in the editor\n", code: 3}

	ups, resp, asked := p.served(p.prompt(s, "bash: make test"), term.handle)
	require.Nil(t, resp["error"])
	assert.Equal(t, "end_turn", resp.obj("result").str("stopReason"))
	assert.Equal(t, []string{"terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"}, methods(asked))
	assert.Equal(t, "bash", term.created.str("command"))
	assert.Equal(t, []any{"-c", "make test"}, term.created["args"])
	assert.Equal(t, cwd, term.created.str("cwd"))
	assert.NotNil(t, term.created["outputByteLimit"])

	// The terminal is in the tool call while it runs, and after.
	var shown bool
	for _, u := range ups {
		if u := upd(u); u.str("sessionUpdate") == "tool_call_update" && u["status"] == nil {
			terms := contentOf(u, "terminal")
			require.Len(t, terms, 1)
			assert.Equal(t, "term-1", terms[0].str("terminalId"))
			shown = true
		}
	}
	assert.True(t, shown, "no tool_call_update embedding the terminal")
	end := finalToolUpdate(t, ups)
	assert.Equal(t, "failed", end.str("status"), "exit code 3 fails, as bash's does")
	terms := contentOf(end, "terminal")
	require.Len(t, terms, 1)
	assert.Equal(t, "term-1", terms[0].str("terminalId"))
	assert.Contains(t, updateText(end), "printed in the editor")
	assert.Contains(t, updateText(end), "exited with code 3")
	assert.Contains(t, chunks(ups, "agent_message_chunk"), "printed in the editor", "the model read the terminal's output")

	// The editor cannot start the command: bash fails with its message,
	// and there is no terminal to release.
	refusing := func(method string, params record) reply { return reply{err: "no more terminals"} }
	ups, resp, asked = p.served(p.prompt(s, "bash: make test"), refusing)
	require.Nil(t, resp["error"])
	assert.Equal(t, []string{"terminal/create"}, methods(asked))
	end = finalToolUpdate(t, ups)
	assert.Equal(t, "failed", end.str("status"))
	assert.Contains(t, updateText(end), "no more terminals")
	assert.Empty(t, contentOf(end, "terminal"))
	assert.Equal(t, 0, p.exit())
}

func TestACPCancelKillsTheEditorsTerminal(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session", "--sandbox", "off")
	s := p.startedWith(cwd, map[string]any{"terminal": true})
	term := &editorTerminal{t: t, session: s, output: "partial output\n"}
	term.waitFor = func() reply {
		// The command runs on; the user cancels.
		p.notify("session/cancel", map[string]any{"sessionId": s})
		return reply{hold: true}
	}
	ups, resp, asked := p.served(p.prompt(s, "bash: sleep 600"), term.handle)
	require.Nil(t, resp["error"])
	assert.Equal(t, "cancelled", resp.obj("result").str("stopReason"))
	got := methods(asked)
	require.Equal(t, []string{"terminal/create", "terminal/wait_for_exit", "$/cancel_request", "terminal/kill", "terminal/output", "terminal/release"}, got)
	assert.Equal(t, asked[1]["id"], asked[2].obj("params")["requestId"], "the wait is given up")
	end := finalToolUpdate(t, ups)
	assert.Equal(t, "failed", end.str("status"))
	assert.Contains(t, updateText(end), "partial output")

	// The session goes on.
	ups, resp, _ = p.served(p.prompt(s, "reply: again"), term.handle)
	require.Nil(t, resp["error"])
	ups, _ = usageLast(t, ups)
	assert.Equal(t, "again", chunks(ups, "agent_message_chunk"))
	assert.Equal(t, 0, p.exit())
}

func TestACPLoadReplaysDiffs(t *testing.T) {
	t.Parallel()
	cwd, agentDir := t.TempDir(), t.TempDir()
	f := filepath.Join(cwd, "f.txt")
	require.NoError(t, os.WriteFile(f, []byte("alpha\nbeta\n"), 0o644))
	p := startACP(t, cwd, agentDir, "--model", "faux/faux-fast")
	p.initialized()
	id := p.newSession(cwd)
	_, res := p.result(p.prompt(id, "edit: f.txt :: beta => gamma"))
	require.Equal(t, "end_turn", res.str("stopReason"))
	_, res = p.result(p.prompt(id, "write: g.txt :: written"))
	require.Equal(t, "end_turn", res.str("stopReason"))
	require.Equal(t, 0, p.exit())

	q := startACP(t, cwd, agentDir, "--model", "faux/faux-fast")
	q.initialized()
	ups, _ := q.result(q.request("session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}))
	var diffs []record
	for _, u := range ups {
		diffs = append(diffs, contentOf(upd(u), "diff")...)
	}
	require.Len(t, diffs, 2, "one diff per edit entry, one per write")
	assert.Equal(t, f, diffs[0].str("path"))
	assert.Equal(t, "beta", diffs[0].str("oldText"), "the edit's own replacement")
	assert.Equal(t, "gamma", diffs[0].str("newText"))
	assert.Equal(t, filepath.Join(cwd, "g.txt"), diffs[1].str("path"))
	assert.Equal(t, "written", diffs[1].str("newText"))
	assert.Nil(t, diffs[1]["oldText"], "what a write replaced is not stored")
	assert.Equal(t, 0, q.exit())
}

// An edit through the editor's file system goes through the same tool
// pipeline as one on the disk: the approval stage asks, and the journal
// stage records the file in the prompt's checkpoint (the folder is not a
// git work tree, so the checkpoint is the edit journal's, stored at the
// prompt's first write or edit: a prompt that edits nothing has none).
func TestACPEditThroughTheEditorPassesApprovalAndTheJournal(t *testing.T) {
	t.Parallel()
	cwd, agentDir := t.TempDir(), t.TempDir()
	file := filepath.Join(cwd, "a.txt")
	require.NoError(t, os.WriteFile(file, []byte("saved line\n"), 0o644))
	p := startACP(t, cwd, agentDir, "--model", "faux/faux-fast", "--approval", "writes")
	s := p.startedWith(cwd, fsCaps)
	ed := &editorFS{t: t, session: s, buffers: map[string]string{file: "unsaved line\n"}}
	_, res, _ := p.served(p.prompt(s, "reply: nothing to change"), ed.handle)
	require.Equal(t, "end_turn", res.obj("result").str("stopReason"))
	asked := 0
	_, res, _ = p.served(p.prompt(s, "edit: a.txt :: unsaved line => new line"), func(method string, params record) reply {
		if method == "session/request_permission" {
			asked++
			return reply{result: map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}}
		}
		return ed.handle(method, params)
	})
	assert.Equal(t, "end_turn", res.obj("result").str("stopReason"))
	assert.Equal(t, 1, asked, "the approval stage asked")
	assert.Equal(t, "new line\n", ed.buffers[file], "the editor wrote it")

	ups, res, _ := p.served(p.prompt(s, "/rewind"), ed.handle)
	assert.Equal(t, "end_turn", res.obj("result").str("stopReason"))
	list := agentText(ups)
	assert.Contains(t, list, "before “edit: a.txt :: unsaved line => new line”", "the journal stage recorded the edit")
	assert.NotContains(t, list, "nothing to change", "a prompt without edits has no journal checkpoint")
	assert.Equal(t, 0, p.exit())
}
