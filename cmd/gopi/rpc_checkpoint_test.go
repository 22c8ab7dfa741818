package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// The tests here send restore_checkpoint as soon as agent_end is read:
// gopi waits out the moment the run winds down, as for a prompt, rather
// than refuse it (a refusal there once failed them when run in parallel).

// gitIn runs git in dir for a test, with a fixed identity and none of
// the machine's configuration.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// decodeAs turns a command's data into T.
func decodeAs[T any](t *testing.T, data any) T {
	t.Helper()
	b, err := json.Marshal(data)
	require.NoError(t, err)
	var v T
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

type checkpointJSON struct {
	ID, EntryID, CreatedAt, Label, Trigger, Note string
}

type fileJSON struct {
	Path, Status, Diff string
	Binary             bool
}

// Issue 31: a prompt in a git work tree records a checkpoint before its
// run; list, diff, a dry run, a restore of code and conversation, its
// undo after a restart, and the user's repository untouched throughout.
func TestRPCCheckpointRoundTrip(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(
			llmtest.Call("w1", "write", `{"path":"a.txt","content":"agent\n"}`),
			llmtest.Call("b1", "bash", `{"command":"echo made > b.txt && rm gone.txt && chmod +x run.sh && ln -sf gone.txt link && printf 'x\\001' > bin.dat && mkdir -p moved && mv old.txt moved/old.txt && echo new > ignored.log && head -c 3000000 /dev/zero > big.dat && mkdir nested && git -C nested init -q && echo n > nested/n.txt"}`)),
		llmtest.Text("done"),
		llmtest.Text("a new direction"))
	gitIn(t, w.cwd, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "a.txt"), []byte("user\r\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "gone.txt"), []byte("keep me\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "run.sh"), []byte("echo\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "bin.dat"), []byte("\x00\xff"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "old.txt"), []byte("old\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, ".gitignore"), []byte("*.log\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "ignored.log"), []byte("old log\n"), 0o644))
	require.NoError(t, os.Symlink("a.txt", filepath.Join(w.cwd, "link")))
	gitIn(t, w.cwd, "add", "-A")
	gitIn(t, w.cwd, "commit", "-q", "-m", "start")
	userView := func() string {
		return gitIn(t, w.cwd, "rev-parse", "HEAD") + gitIn(t, w.cwd, "ls-files", "-s") + gitIn(t, w.cwd, "stash", "list") +
			gitIn(t, w.cwd, "for-each-ref", "refs/heads", "refs/tags") + gitIn(t, w.cwd, "status", "--porcelain")
	}
	before := userView()

	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "change things"})
	rs := p.idle()
	var created []record
	for _, r := range rs {
		if r.is("checkpoint_created") {
			created = append(created, r)
		}
	}
	require.Len(t, created, 1, p.transcript())
	cps := decodeAs[struct{ Checkpoints []checkpointJSON }](t, p.ok("2", map[string]any{"type": "list_checkpoints"})).Checkpoints
	require.Len(t, cps, 1)
	cp := cps[0]
	assert.Equal(t, "prompt", cp.Trigger)
	assert.Equal(t, cp.ID, created[0].obj("checkpoint").str("id"))
	entries := decodeAs[struct{ Entries []map[string]any }](t, p.ok("3", map[string]any{"type": "get_entries"})).Entries
	var userEntry string
	for _, e := range entries {
		if m, ok := e["message"].(map[string]any); ok && m["role"] == "user" {
			userEntry, _ = e["id"].(string)
		}
	}
	assert.Equal(t, userEntry, cp.EntryID, "keyed to the prompt's user message")

	files := decodeAs[struct{ Files []fileJSON }](t, p.ok("4", map[string]any{"type": "diff_checkpoint", "checkpointId": cp.ID})).Files
	status := map[string]string{}
	for _, f := range files {
		status[f.Path] = f.Status
		if f.Path == "a.txt" {
			assert.Contains(t, f.Diff, "-user\r\n+agent")
		}
	}
	assert.Equal(t, map[string]string{"a.txt": "modified", "b.txt": "added", "gone.txt": "deleted", "run.sh": "modified",
		"link": "modified", "bin.dat": "modified", "old.txt": "deleted", "moved/old.txt": "added"}, status,
		"ignored, large and nested-repository files are not the checkpoint's")

	dry := decodeAs[struct {
		Files []fileJSON
		Text  *string
	}](t, p.ok("5", map[string]any{"type": "restore_checkpoint", "checkpointId": cp.ID, "dryRun": true}))
	assert.Len(t, dry.Files, 8)
	require.NotNil(t, dry.Text)
	assert.Equal(t, "change things", *dry.Text)
	data, _ := os.ReadFile(filepath.Join(w.cwd, "a.txt"))
	assert.Equal(t, "agent\n", string(data), "a dry run changes nothing")

	res := decodeAs[struct {
		Files            []fileJSON
		UndoCheckpointID string
		Text             *string
	}](t, p.ok("6", map[string]any{"type": "restore_checkpoint", "checkpointId": cp.ID}))
	assert.Equal(t, dry.Files, res.Files, "the dry run said exactly what the restore did")
	require.NotEmpty(t, res.UndoCheckpointID)
	require.NotNil(t, res.Text)
	assert.Equal(t, "change things", *res.Text)
	data, _ = os.ReadFile(filepath.Join(w.cwd, "a.txt"))
	assert.Equal(t, "user\r\n", string(data), "every byte back, CRLF included")
	assert.NoFileExists(t, filepath.Join(w.cwd, "b.txt"))
	assert.FileExists(t, filepath.Join(w.cwd, "gone.txt"))
	info, err := os.Stat(filepath.Join(w.cwd, "run.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm(), "the exec bit is undone")
	target, _ := os.Readlink(filepath.Join(w.cwd, "link"))
	assert.Equal(t, "a.txt", target, "a link comes back as a link")
	data, _ = os.ReadFile(filepath.Join(w.cwd, "bin.dat"))
	assert.Equal(t, "\x00\xff", string(data))
	assert.FileExists(t, filepath.Join(w.cwd, "old.txt"))
	assert.NoDirExists(t, filepath.Join(w.cwd, "moved"), "a rename is undone, its new directory gone")
	data, _ = os.ReadFile(filepath.Join(w.cwd, "ignored.log"))
	assert.Equal(t, "new\n", string(data), "ignored files are left alone")
	assert.FileExists(t, filepath.Join(w.cwd, "big.dat"), "large files are left alone")
	assert.FileExists(t, filepath.Join(w.cwd, "nested", "n.txt"), "nested repositories are left alone")
	for _, p := range []string{"big.dat", "nested"} {
		require.NoError(t, os.RemoveAll(filepath.Join(w.cwd, p)))
	}
	msgs := decodeAs[struct{ Messages []map[string]any }](t, p.ok("7", map[string]any{"type": "get_messages"})).Messages
	for _, m := range msgs {
		assert.Equal(t, "system", m["role"], "the conversation is back before the prompt")
	}
	assert.Equal(t, before, userView(), "the user's repository is as it was")

	// The next prompt starts a new branch beside the old one, which the
	// file keeps.
	p.ok("7b", map[string]any{"type": "prompt", "message": "instead, this"})
	p.idle()
	entries = decodeAs[struct{ Entries []map[string]any }](t, p.ok("7c", map[string]any{"type": "get_entries"})).Entries
	parent := map[string]string{}
	var users []string
	for _, e := range entries {
		id, _ := e["id"].(string)
		parent[id], _ = e["parentId"].(string)
		if m, ok := e["message"].(map[string]any); ok && m["role"] == "user" {
			users = append(users, id)
		}
	}
	require.Len(t, users, 2, "both prompts are in the file")
	for id := parent[users[1]]; id != ""; id = parent[id] {
		assert.NotEqual(t, users[0], id, "the new prompt is on a branch of its own, not after the rewound one")
	}

	r := p.call("8", map[string]any{"type": "restore_checkpoint", "checkpointId": "nope"})
	assert.Equal(t, false, r["success"])
	assert.Contains(t, r.str("error"), `no checkpoint "nope"`)
	assert.Equal(t, 0, p.exit())

	// After a restart the checkpoints are still there, and the restore
	// can be undone.
	p = w.start("--continue")
	cps = decodeAs[struct{ Checkpoints []checkpointJSON }](t, p.ok("1", map[string]any{"type": "list_checkpoints"})).Checkpoints
	require.Len(t, cps, 3, "the prompt's, the restore's and the new prompt's")
	assert.Equal(t, "restore", cps[1].Trigger)
	assert.Equal(t, res.UndoCheckpointID, cps[1].ID)
	p.ok("2", map[string]any{"type": "restore_checkpoint", "checkpointId": res.UndoCheckpointID, "restore": "code"})
	data, _ = os.ReadFile(filepath.Join(w.cwd, "a.txt"))
	assert.Equal(t, "agent\n", string(data))
	assert.FileExists(t, filepath.Join(w.cwd, "b.txt"))
	assert.Equal(t, 0, p.exit())
	refs := gitIn(t, w.cwd, "for-each-ref", "--format=%(refname)")
	for _, ref := range strings.Fields(refs) {
		assert.True(t, ref == "refs/heads/main" || strings.HasPrefix(ref, "refs/gopi/checkpoints/"), ref)
	}
}

// Outside a git work tree the edit journal keeps what write and edit
// changed: a prompt that changes no file records nothing; one that does
// records a checkpoint with its first change, which diff and restore
// use (commands' changes are not seen, and the note says so).
func TestRPCCheckpointJournal(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.Text("nothing to change"),
		llmtest.ToolCalls(
			llmtest.Call("w1", "write", `{"path":"new.txt","content":"fresh\n"}`),
			llmtest.Call("e1", "edit", `{"path":"a.txt","edits":[{"oldText":"one","newText":"uno"}]}`)),
		llmtest.ToolCalls(llmtest.Call("e2", "edit", `{"path":"a.txt","edits":[{"oldText":"two","newText":"dos"}]}`)),
		llmtest.Text("done"))
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "a.txt"), []byte("one\ntwo\n"), 0o644))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "look"})
	for _, r := range p.idle() {
		assert.False(t, r.is("checkpoint_created"), "a prompt that changes no file records nothing")
	}
	p.ok("2", map[string]any{"type": "prompt", "message": "change"})
	p.idle()
	cps := decodeAs[struct{ Checkpoints []checkpointJSON }](t, p.ok("3", map[string]any{"type": "list_checkpoints"})).Checkpoints
	require.Len(t, cps, 1)
	assert.Contains(t, cps[0].Note, "only the changes of write and edit")
	files := decodeAs[struct{ Files []fileJSON }](t, p.ok("4", map[string]any{"type": "diff_checkpoint", "checkpointId": cps[0].ID})).Files
	status := map[string]string{}
	for _, f := range files {
		status[f.Path] = f.Status
	}
	assert.Equal(t, map[string]string{"a.txt": "modified", "new.txt": "added"}, status)
	res := decodeAs[struct{ UndoCheckpointID string }](t, p.ok("5", map[string]any{"type": "restore_checkpoint", "checkpointId": cps[0].ID, "restore": "code"}))
	data, _ := os.ReadFile(filepath.Join(w.cwd, "a.txt"))
	assert.Equal(t, "one\ntwo\n", string(data), "the content before the prompt's first change, not its last")
	assert.NoFileExists(t, filepath.Join(w.cwd, "new.txt"))
	require.NotEmpty(t, res.UndoCheckpointID)
	p.ok("6", map[string]any{"type": "restore_checkpoint", "checkpointId": res.UndoCheckpointID, "restore": "code"})
	data, _ = os.ReadFile(filepath.Join(w.cwd, "a.txt"))
	assert.Equal(t, "uno\ndos\n", string(data), "the restore is undone")
	assert.FileExists(t, filepath.Join(w.cwd, "new.txt"))
	assert.Equal(t, 0, p.exit())
	// What the journal keeps is the user's alone.
	err := filepath.Walk(filepath.Join(w.agentDir, "checkpoints"), func(path string, info os.FileInfo, err error) error {
		require.NoError(t, err)
		if !info.IsDir() {
			assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), path)
		}
		return nil
	})
	require.NoError(t, err)
}

// A snapshot over its budget falls back to the journal for that prompt,
// and the checkpoint says so at once; a restore is refused while a run
// streams.
func TestRPCCheckpointBudgetAndStreaming(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("w1", "write", `{"path":"a.txt","content":"agent\n"}`)),
		llmtest.Text("done"),
		llmtest.ToolCalls(llmtest.Call("b1", "bash", `{"command":"sleep 30"}`)),
		llmtest.Text("stopped"))
	gitIn(t, w.cwd, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "a.txt"), []byte("user\n"), 0o644))
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"checkpointBudgetMs": 1})
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "change"})
	var created record
	for _, r := range p.idle() {
		if r.is("checkpoint_created") {
			created = r.obj("checkpoint")
		}
	}
	require.NotNil(t, created, p.transcript())
	assert.Contains(t, created.str("note"), "budget")
	assert.Contains(t, created.str("note"), "only the changes of write and edit")
	p.ok("2", map[string]any{"type": "restore_checkpoint", "checkpointId": created.str("id"), "restore": "code"})
	data, _ := os.ReadFile(filepath.Join(w.cwd, "a.txt"))
	assert.Equal(t, "user\n", string(data), "the journal had what write changed")

	p.ok("3", map[string]any{"type": "prompt", "message": "wait"})
	p.until(func(r record) bool { return r.is("tool_execution_start") })
	r := p.call("4", map[string]any{"type": "restore_checkpoint", "checkpointId": created.str("id")})
	assert.Equal(t, false, r["success"])
	assert.Contains(t, r.str("error"), "wait for the current response to finish")
	p.send(map[string]any{"id": "5", "type": "abort"})
	p.idle()
	assert.Equal(t, 0, p.exit())
}

// A conversation-only restore can be undone too: its undo checkpoint
// records no files, and restoring its conversation brings the later
// messages back.
func TestRPCCheckpointConversationUndo(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("first answer"))
	gitIn(t, w.cwd, "init", "-q")
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "ask"})
	p.idle()
	cps := decodeAs[struct{ Checkpoints []checkpointJSON }](t, p.ok("2", map[string]any{"type": "list_checkpoints"})).Checkpoints
	require.Len(t, cps, 1)
	users := func() int {
		n := 0
		for _, m := range decodeAs[struct{ Messages []map[string]any }](t, p.ok("m", map[string]any{"type": "get_messages"})).Messages {
			if m["role"] == "user" {
				n++
			}
		}
		return n
	}
	res := decodeAs[struct{ UndoCheckpointID string }](t, p.ok("3", map[string]any{"type": "restore_checkpoint", "checkpointId": cps[0].ID, "restore": "conversation"}))
	require.NotEmpty(t, res.UndoCheckpointID)
	assert.Equal(t, 0, users())
	r := p.call("4", map[string]any{"type": "restore_checkpoint", "checkpointId": res.UndoCheckpointID, "restore": "code"})
	assert.Equal(t, false, r["success"])
	assert.Contains(t, r.str("error"), "no files were recorded")
	p.ok("5", map[string]any{"type": "restore_checkpoint", "checkpointId": res.UndoCheckpointID, "restore": "conversation"})
	assert.Equal(t, 1, users(), "the conversation is back where it was")
	assert.Equal(t, 0, p.exit())
}
