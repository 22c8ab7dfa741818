package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The permission tests play the client that answers gopi's
// session/request_permission, on the offline faux model.

// asked reads frames up to gopi's next request to the client; it returns
// the session/update notifications before it and the request.
func (p *aproc) asked() (ups []record, req record) {
	p.t.Helper()
	for {
		r := p.frame()
		if r["id"] != nil && r.str("method") != "" {
			return ups, r
		}
		require.Equal(p.t, "session/update", r.str("method"), "gopi answered instead of asking\n%s", p.transcript())
		ups = append(ups, r)
	}
}

// choose answers gopi's request req with the permission option optionID.
func (p *aproc) choose(req record, optionID string) {
	p.t.Helper()
	p.write(map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": map[string]any{
		"outcome": map[string]any{"outcome": "selected", "optionId": optionID}}})
}

// acpToolEnd is the status and text of the last tool call that ended in ups.
func acpToolEnd(t *testing.T, ups []record) (status, text string) {
	t.Helper()
	for i := len(ups) - 1; i >= 0; i-- {
		u := ups[i].obj("params").obj("update")
		if kind(ups[i]) != "tool_call_update" || (u.str("status") != "completed" && u.str("status") != "failed") {
			continue
		}
		var parts []string
		for _, c := range u["content"].([]any) {
			parts = append(parts, record(c.(map[string]any)).obj("content").str("text"))
		}
		return u.str("status"), strings.Join(parts, "\n")
	}
	t.Fatalf("no tool call ended in %v", ups)
	return "", ""
}

// permissionPrompt sends text as a prompt, answers the permission
// request it raises with optionID, and returns the request and the
// prompt's updates, those before the question and after.
func (p *aproc) permissionPrompt(s, text, optionID string) (req record, ups []record) {
	p.t.Helper()
	id := p.prompt(s, text)
	before, req := p.asked()
	require.Equal(p.t, "session/request_permission", req.str("method"))
	p.choose(req, optionID)
	after, res := p.result(id)
	assert.Equal(p.t, "end_turn", res.str("stopReason"))
	return req, append(before, after...)
}

func TestACPPermission(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("old\n"), 0o644))
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session", "--approval", "writes")
	s := p.started(cwd)

	// Allow once: the question shows the call, the command runs.
	cmd := "echo one && echo two"
	req, ups := p.permissionPrompt(s, "bash: "+cmd, "allow_once")
	params := req.obj("params")
	assert.Equal(t, s, params.str("sessionId"))
	call := params.obj("toolCall")
	assert.Equal(t, cmd, call.str("title"), "the whole command")
	assert.Equal(t, "execute", call.str("kind"))
	assert.Equal(t, cmd, call.obj("rawInput").str("command"))
	var kinds []string
	for _, o := range params["options"].([]any) {
		kinds = append(kinds, record(o.(map[string]any)).str("kind"))
	}
	assert.Equal(t, []string{"allow_once", "allow_always", "reject_once", "reject_always"}, kinds)
	var started bool
	for _, u := range ups {
		if kind(u) == "tool_call" {
			started = true
			assert.Equal(t, call.str("toolCallId"), u.obj("params").obj("update").str("toolCallId"), "the question is about the call the client was shown")
		}
	}
	assert.True(t, started, "the tool call was shown before the question")
	status, text := acpToolEnd(t, ups)
	assert.Equal(t, "completed", status)
	assert.Contains(t, text, "one\ntwo")

	// Reject once: the model reads that the call was denied.
	_, ups = p.permissionPrompt(s, "bash: echo no", "reject_once")
	status, text = acpToolEnd(t, ups)
	assert.Equal(t, "failed", status)
	assert.Contains(t, text, "denied by the user")

	// Allow always: the next bash is not asked about.
	_, ups = p.permissionPrompt(s, "bash: echo three", "allow_always")
	status, _ = acpToolEnd(t, ups)
	assert.Equal(t, "completed", status)
	ups, _ = p.result(p.prompt(s, "bash: echo four"))
	status, text = acpToolEnd(t, ups)
	assert.Equal(t, "completed", status)
	assert.Contains(t, text, "four")

	// Reading does not ask under "writes".
	ups, _ = p.result(p.prompt(s, "read: a.txt"))
	status, _ = acpToolEnd(t, ups)
	assert.Equal(t, "completed", status)

	// An edit's question carries its change as a diff; rejected always,
	// the next edit is denied without asking.
	req, ups = p.permissionPrompt(s, "edit: a.txt :: old => new", "reject_always")
	content := req.obj("params").obj("toolCall")["content"].([]any)
	require.Len(t, content, 1)
	diff := record(content[0].(map[string]any))
	assert.Equal(t, "diff", diff.str("type"))
	assert.Equal(t, filepath.Join(cwd, "a.txt"), diff.str("path"))
	assert.Equal(t, "old\n", diff.str("oldText"))
	assert.Equal(t, "new\n", diff.str("newText"))
	status, _ = acpToolEnd(t, ups)
	assert.Equal(t, "failed", status)
	ups, _ = p.result(p.prompt(s, "edit: a.txt :: old => newer"))
	status, text = acpToolEnd(t, ups)
	assert.Equal(t, "failed", status)
	assert.Contains(t, text, "denied by the user")
	got, err := os.ReadFile(filepath.Join(cwd, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(got), "no edit ran")

	// A new file's diff has no old text; a cancelled outcome rejects.
	id := p.prompt(s, "write: b.txt :: hello")
	_, req = p.asked()
	diff = record(req.obj("params").obj("toolCall")["content"].([]any)[0].(map[string]any))
	assert.Equal(t, filepath.Join(cwd, "b.txt"), diff.str("path"))
	assert.Nil(t, diff["oldText"])
	assert.Equal(t, "hello", diff.str("newText"))
	p.write(map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}})
	ups, _ = p.result(id)
	status, text = acpToolEnd(t, ups)
	assert.Equal(t, "failed", status)
	assert.Contains(t, text, "denied by the user")
	assert.NoFileExists(t, filepath.Join(cwd, "b.txt"))

	assert.Equal(t, 0, p.exit())
}

// session/cancel while a permission question waits: gopi withdraws it
// ($/cancel_request), the call does not run, the prompt answers
// cancelled, and nothing of it comes after the answer.
func TestACPPermissionCancelled(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session", "--approval", "all")
	s := p.started(cwd)
	id := p.prompt(s, "bash: touch ran")
	_, req := p.asked()
	p.notify("session/cancel", map[string]any{"sessionId": s})
	var withdrawn bool
	for {
		r := p.frame()
		if r.str("method") == "$/cancel_request" {
			assert.Equal(t, req["id"], r.obj("params")["requestId"])
			withdrawn = true
			continue
		}
		if r.str("method") == "session/update" {
			continue
		}
		require.Equal(t, id, r["id"], "%s", p.transcript())
		assert.Equal(t, "cancelled", r.obj("result").str("stopReason"))
		break
	}
	assert.True(t, withdrawn, "the question is withdrawn before the prompt's answer")
	// The client answers the question late, as the spec has it: gopi
	// drops the answer.
	p.write(map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}})
	assert.NoFileExists(t, filepath.Join(cwd, "ran"))

	ups, res := p.result(p.prompt(s, "reply: again"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	ups, _ = usageLast(t, ups)
	for _, u := range ups {
		assert.Equal(t, "agent_message_chunk", kind(u), "an update of the cancelled prompt after its answer")
	}
	assert.Equal(t, 0, p.exit())
}

// The question about an edit shows the change against what the editor
// has, unsaved changes included, when the client lends its file system:
// what the tool will edit.
func TestACPPermissionDiffFromTheEditor(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	file := filepath.Join(cwd, "a.txt")
	require.NoError(t, os.WriteFile(file, []byte("saved line\n"), 0o644))
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session", "--approval", "writes")
	s := p.startedWith(cwd, fsCaps)
	ed := &editorFS{t: t, session: s, buffers: map[string]string{file: "unsaved line\n"}}
	var asked record
	_, res, _ := p.served(p.prompt(s, "edit: a.txt :: unsaved line => new line"), func(method string, params record) reply {
		if method == "session/request_permission" {
			asked = params
			return reply{result: map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}}
		}
		return ed.handle(method, params)
	})
	assert.Equal(t, "end_turn", res.obj("result").str("stopReason"))
	require.NotNil(t, asked)
	diffs := contentOf(asked.obj("toolCall"), "diff")
	require.Len(t, diffs, 1)
	assert.Equal(t, "unsaved line\n", diffs[0].str("oldText"), "the editor's text, not the disk's")
	assert.Equal(t, "new line\n", diffs[0].str("newText"))
	assert.Equal(t, "new line\n", ed.buffers[file])
	data, _ := os.ReadFile(file)
	assert.Equal(t, "saved line\n", string(data))
	assert.Equal(t, 0, p.exit())
}

// callStatuses is the status sequence of the tool call id: the
// tool_call's, then each tool_call_update's that sets one, with the
// permission question marked "asked" where it came.
func callStatuses(frames []record, id string) []string {
	var out []string
	for _, r := range frames {
		if r.str("method") == "session/request_permission" {
			if r.obj("params").obj("toolCall").str("toolCallId") == id {
				out = append(out, "asked")
			}
			continue
		}
		u := upd(r)
		if u.str("toolCallId") != id || u.str("status") == "" {
			continue
		}
		out = append(out, u.str("sessionUpdate")+" "+u.str("status"))
	}
	return out
}

// A call waiting for permission is pending, and in_progress only once it
// runs: a rejected write never shows in_progress (an editor that spins on
// in_progress would show a denied call as running), an allowed one does,
// after the answer; a call that needs no question goes to in_progress
// at once.
func TestACPPermissionStatusFollowsTheAnswer(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session", "--approval", "writes")
	s := p.started(cwd)
	// statuses runs text, answering its question with optionID, and
	// returns the statuses of its one call.
	statuses := func(text, optionID string) []string {
		t.Helper()
		id := p.prompt(s, text)
		before, req := p.asked()
		require.Equal(t, "session/request_permission", req.str("method"))
		p.choose(req, optionID)
		after, _ := p.result(id)
		frames := append(append(before, req), after...)
		return callStatuses(frames, req.obj("params").obj("toolCall").str("toolCallId"))
	}

	assert.Equal(t, []string{"tool_call pending", "asked", "tool_call_update failed"},
		statuses("write: denied.txt :: no", "reject_once"))
	assert.NoFileExists(t, filepath.Join(cwd, "denied.txt"))

	assert.Equal(t, []string{"tool_call pending", "asked", "tool_call_update in_progress", "tool_call_update completed"},
		statuses("write: allowed.txt :: yes", "allow_once"))
	assert.FileExists(t, filepath.Join(cwd, "allowed.txt"))

	// No question under "writes" for a read.
	ups, _ := p.result(p.prompt(s, "read: allowed.txt"))
	var id string
	for _, u := range ups {
		if kind(u) == "tool_call" {
			id = upd(u).str("toolCallId")
		}
	}
	assert.Equal(t, []string{"tool_call pending", "tool_call_update in_progress", "tool_call_update completed"}, callStatuses(ups, id))
	assert.Equal(t, 0, p.exit())
}

// A codemode script's nested bash asks over ACP too: the client was shown
// the nested call as a tool call of its own before the question, and the
// script's result ends the codemode call.
func TestACPCodemodeNestedCallAsks(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session", "--approval", "writes", "--tools", "+codemode")
	s := p.started(cwd)
	req, ups := p.permissionPrompt(s, `call: codemode {"code": "const r = await tools.bash({ command: \"echo nested\" }); return r.output.trim()"}`, "allow_once")
	call := req.obj("params").obj("toolCall")
	assert.Equal(t, "echo nested", call.str("title"))
	nested := call.str("toolCallId")
	assert.Contains(t, nested, "/", "the nested call's id is the codemode call's, numbered")
	var shown, codemodeShown bool
	for _, u := range ups {
		up := u.obj("params").obj("update")
		if kind(u) == "tool_call" && up.str("toolCallId") == nested {
			shown = true
		}
		if kind(u) == "tool_call" && strings.HasPrefix(nested, up.str("toolCallId")+"/") {
			codemodeShown = true
		}
	}
	assert.True(t, shown, "the nested call was shown before the question")
	assert.True(t, codemodeShown, "so was the codemode call")
	status, text := acpToolEnd(t, ups)
	assert.Equal(t, "completed", status)
	assert.Contains(t, text, "Script completed")
	assert.Contains(t, text, "nested")
}
