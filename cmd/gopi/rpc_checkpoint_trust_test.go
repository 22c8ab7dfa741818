package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/rpc"
)

// Issue 37 ("Trust II"): what a code restore may and may not touch.

// filesOf is everything under dir but .git: each path's kind, permission
// bits and bytes, or a link's target.
func filesOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		require.NoError(t, err)
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			require.NoError(t, err)
			out[rel] = "link -> " + target
		case info.IsDir():
			out[rel] = fmt.Sprintf("dir %04o", info.Mode().Perm())
		default:
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			out[rel] = fmt.Sprintf("file %04o %q", info.Mode().Perm(), data)
		}
		return nil
	}))
	return out
}

func put(t *testing.T, dir, name, content string, perm os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), perm))
	require.NoError(t, os.Chmod(p, perm))
}

// startIn starts gopi in w with TMPDIR set to tmp.
func (w *world) startIn(tmp string, extra ...string) *proc {
	w.t.Helper()
	argv := append([]string{gopiBinary(w.t), "--mode", "rpc", "--model", "scripted/scripted-1"}, extra...)
	return launchArgv(w.t, w.cwd, w.agentDir, rpc.FramingNewline, []string{"TMPDIR=" + tmp}, argv...)
}

// noIndexIn asserts that no gopi left a snapshot index in tmp, and that
// the one in the agent directory is the user's alone.
func noIndexIn(t *testing.T, tmp, agentDir string) {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(tmp, "gopi-checkpoint-index-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "no snapshot index left in TMPDIR")
	dir := filepath.Join(agentDir, "checkpoint-index")
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), info.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, e := range entries {
		info, err := e.Info()
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm(), e.Name())
	}
}

// keyMode is the bits of the tests' private key: 0000 as in the issue,
// which only root can read (so record) and write; for other accounts
// bits as private that they can: 0400, or 0640 when the model writes it.
func keyMode(written bool) os.FileMode {
	switch {
	case os.Geteuid() == 0:
		return 0
	case written:
		return 0o640
	}
	return 0o400
}

func bashCall(t *testing.T, id, command string) llmtest.Turn {
	return llmtest.ToolCalls(llmtest.Call(id, "bash", mustJSON(t, map[string]any{"command": command})))
}

// Issue 37, 1 and 4: cfg (a link to a folder outside), a.txt and sub/f.txt
// are recorded; then a.txt becomes a link to a file outside, sub a link
// to a folder outside, cfg a real folder. The restore puts back exactly
// what was recorded, links as links, and nothing outside changes. No run
// leaves a snapshot index in TMPDIR, whether it ends on EOF, SIGTERM or
// SIGHUP.
func TestRPCCheckpointRestoreNeverFollowsLinks(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	w := newWorld(t,
		bashCall(t, "b1", fmt.Sprintf("rm a.txt && ln -s %[1]s/target.txt a.txt && rm -r sub && ln -s %[1]s/subdir sub && rm cfg && mkdir cfg && echo project > cfg/c.txt && echo project > cfg/keep.txt", outside)),
		llmtest.Text("done"))
	put(t, outside, "cfgdir/c.txt", "outside config\n", 0o644)
	put(t, outside, "cfgdir/keep.txt", "outside keep\n", 0o600)
	put(t, outside, "subdir/f.txt", "outside f\n", 0o644)
	put(t, outside, "target.txt", "outside target\n", 0o600)
	gitIn(t, w.cwd, "init", "-q", "-b", "main")
	require.NoError(t, os.Symlink(filepath.Join(outside, "cfgdir"), filepath.Join(w.cwd, "cfg")))
	put(t, w.cwd, "a.txt", "project a\n", 0o644)
	put(t, w.cwd, "sub/f.txt", "project f\n", 0o644)
	gitIn(t, w.cwd, "add", "-A")
	gitIn(t, w.cwd, "commit", "-q", "-m", "start")
	outsideBefore, before := filesOf(t, outside), filesOf(t, w.cwd)
	tmp := t.TempDir()

	p := w.startIn(tmp)
	p.ok("1", map[string]any{"type": "prompt", "message": "rearrange"})
	p.idle()
	afterTurn := filesOf(t, w.cwd)
	require.Equal(t, "link -> "+filepath.Join(outside, "subdir"), afterTurn["sub"], p.transcript())
	cps := decodeAs[struct{ Checkpoints []checkpointJSON }](t, p.ok("2", map[string]any{"type": "list_checkpoints"})).Checkpoints
	require.Len(t, cps, 1)
	res := decodeAs[struct{ UndoCheckpointID string }](t, p.ok("3", map[string]any{"type": "restore_checkpoint", "checkpointId": cps[0].ID, "restore": "code"}))
	assert.Equal(t, before, filesOf(t, w.cwd), "links as links, files as files")
	assert.Equal(t, "link -> "+filepath.Join(outside, "cfgdir"), filesOf(t, w.cwd)["cfg"])
	assert.Equal(t, outsideBefore, filesOf(t, outside), "nothing outside the project changed")
	p.signal(syscall.SIGTERM)
	p.wait()
	noIndexIn(t, tmp, w.agentDir)

	// A later gopi undoes the restore: the links and the folder are back,
	// and still nothing outside changed.
	p = w.startIn(tmp, "--continue")
	p.ok("1", map[string]any{"type": "restore_checkpoint", "checkpointId": res.UndoCheckpointID, "restore": "code"})
	assert.Equal(t, afterTurn, filesOf(t, w.cwd))
	assert.Equal(t, outsideBefore, filesOf(t, outside))
	p.signal(syscall.SIGHUP)
	p.wait()
	noIndexIn(t, tmp, w.agentDir)

	p = w.startIn(tmp, "--continue")
	p.ok("1", map[string]any{"type": "create_checkpoint"})
	assert.Equal(t, 0, p.exit())
	noIndexIn(t, tmp, w.agentDir)
}

// Issue 37, 2: x was a file and became a folder with files in it; d/ was
// a folder and became a file. The restore succeeds and puts both back.
func TestRPCCheckpointRestoreKindChanges(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		bashCall(t, "b1", "rm x && mkdir -p x/deep && echo y > x/deep/y.txt && echo z > x/z.txt && rm -r d && echo now a file > d"),
		llmtest.Text("done"))
	gitIn(t, w.cwd, "init", "-q", "-b", "main")
	put(t, w.cwd, "x", "x was a file\n", 0o644)
	put(t, w.cwd, "d/a.txt", "in d\n", 0o644)
	put(t, w.cwd, "d/e/b.txt", "deeper\n", 0o644)
	gitIn(t, w.cwd, "add", "-A")
	gitIn(t, w.cwd, "commit", "-q", "-m", "start")
	before := filesOf(t, w.cwd)
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "reshape"})
	p.idle()
	require.Contains(t, filesOf(t, w.cwd), filepath.Join("x", "deep", "y.txt"), p.transcript())
	cps := decodeAs[struct{ Checkpoints []checkpointJSON }](t, p.ok("2", map[string]any{"type": "list_checkpoints"})).Checkpoints
	require.Len(t, cps, 1)
	p.ok("3", map[string]any{"type": "restore_checkpoint", "checkpointId": cps[0].ID, "restore": "code"})
	assert.Equal(t, before, filesOf(t, w.cwd))
	assert.Equal(t, 0, p.exit())
}

// Issue 37, 3: .env.local (0600) and key.pem (0000), deleted by the
// model, come back with their modes, restored by a later gopi.
func TestRPCCheckpointRestoreKeepsModes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, bashCall(t, "b1", "rm .env.local key.pem"), llmtest.Text("done"))
	gitIn(t, w.cwd, "init", "-q", "-b", "main")
	put(t, w.cwd, "main.go", "package main\n", 0o644)
	gitIn(t, w.cwd, "add", "-A")
	gitIn(t, w.cwd, "commit", "-q", "-m", "start")
	put(t, w.cwd, ".env.local", "SECRET=1\n", 0o600)
	put(t, w.cwd, "key.pem", "-----BEGIN PRIVATE KEY-----\n", keyMode(false))
	before := filesOf(t, w.cwd)
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "clean up"})
	p.idle()
	require.NotContains(t, filesOf(t, w.cwd), "key.pem", p.transcript())
	assert.Equal(t, 0, p.exit())

	p = w.start("--continue")
	cps := decodeAs[struct{ Checkpoints []checkpointJSON }](t, p.ok("1", map[string]any{"type": "list_checkpoints"})).Checkpoints
	require.Len(t, cps, 1)
	p.ok("2", map[string]any{"type": "restore_checkpoint", "checkpointId": cps[0].ID, "restore": "code"})
	assert.Equal(t, before, filesOf(t, w.cwd))
	assert.Equal(t, 0, p.exit())
}

// The edit journal (outside git) keeps the same promises: a file it kept
// comes back as a file in a real folder, not through the link that took
// its folder's place; private files keep their modes; nothing outside
// changes; the undo puts the links back.
func TestRPCCheckpointJournalRestoreTrust(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	w := newWorld(t,
		llmtest.ToolCalls(
			llmtest.Call("w1", "write", `{"path":"sub/f.txt","content":"agent f\n"}`),
			llmtest.Call("w2", "write", `{"path":"a.txt","content":"agent a\n"}`),
			llmtest.Call("w3", "write", `{"path":".env.local","content":"SECRET=agent\n"}`),
			llmtest.Call("w4", "write", `{"path":"key.pem","content":"agent key\n"}`)),
		bashCall(t, "b1", fmt.Sprintf("rm -r sub && ln -s %[1]s/subdir sub && rm a.txt && ln -s %[1]s/target.txt a.txt", outside)),
		llmtest.Text("done"))
	put(t, outside, "subdir/f.txt", "outside f\n", 0o644)
	put(t, outside, "target.txt", "outside target\n", 0o600)
	put(t, w.cwd, "sub/f.txt", "project f\n", 0o644)
	put(t, w.cwd, "a.txt", "project a\n", 0o644)
	put(t, w.cwd, ".env.local", "SECRET=1\n", 0o600)
	put(t, w.cwd, "key.pem", "-----BEGIN PRIVATE KEY-----\n", keyMode(true))
	outsideBefore, before := filesOf(t, outside), filesOf(t, w.cwd)
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "change"})
	p.idle()
	afterTurn := filesOf(t, w.cwd)
	require.Equal(t, "link -> "+filepath.Join(outside, "subdir"), afterTurn["sub"], p.transcript())
	cps := decodeAs[struct{ Checkpoints []checkpointJSON }](t, p.ok("2", map[string]any{"type": "list_checkpoints"})).Checkpoints
	require.Len(t, cps, 1)
	res := decodeAs[struct{ UndoCheckpointID string }](t, p.ok("3", map[string]any{"type": "restore_checkpoint", "checkpointId": cps[0].ID, "restore": "code"}))
	assert.Equal(t, before, filesOf(t, w.cwd))
	assert.Equal(t, outsideBefore, filesOf(t, outside), "nothing outside the project changed")
	p.ok("4", map[string]any{"type": "restore_checkpoint", "checkpointId": res.UndoCheckpointID, "restore": "code"})
	assert.Equal(t, afterTurn, filesOf(t, w.cwd), "the undo brings the links back")
	assert.Equal(t, outsideBefore, filesOf(t, outside))
	assert.Equal(t, 0, p.exit())
}

// Issue 37, 4: an agent directory that cannot keep the snapshot index
// (a file where its folder must be) stops no checkpoint: gopi says so
// once on stderr, keeps the index in a private temporary folder, and
// removes it when it exits, on SIGTERM as on stdin's end.
func TestRPCCheckpointIndexDirUnusable(t *testing.T) {
	t.Parallel()
	w := newWorld(t, bashCall(t, "b1", "echo changed > a.txt"), llmtest.Text("done"))
	gitIn(t, w.cwd, "init", "-q", "-b", "main")
	put(t, w.cwd, "a.txt", "project a\n", 0o644)
	put(t, w.agentDir, "checkpoint-index", "not a folder\n", 0o644)
	before := filesOf(t, w.cwd)
	tmp := t.TempDir()
	temporary := func() []string {
		found, err := filepath.Glob(filepath.Join(tmp, "gopi-checkpoint-index-*"))
		require.NoError(t, err)
		for _, dir := range found {
			info, err := os.Stat(dir)
			require.NoError(t, err)
			assert.Equal(t, fs.FileMode(0o700), info.Mode().Perm(), "the temporary folder is the user's alone")
		}
		return found
	}

	p := w.startIn(tmp)
	p.ok("1", map[string]any{"type": "prompt", "message": "change a"})
	p.idle()
	p.ok("2", map[string]any{"type": "create_checkpoint", "label": "by hand"})
	cps := decodeAs[struct{ Checkpoints []checkpointJSON }](t, p.ok("3", map[string]any{"type": "list_checkpoints"})).Checkpoints
	require.Len(t, cps, 2)
	assert.Empty(t, cps[0].Note, "the prompt's snapshot was taken: %s", p.transcript())
	assert.Len(t, temporary(), 1, "one temporary index while gopi runs")
	p.ok("4", map[string]any{"type": "restore_checkpoint", "checkpointId": cps[0].ID, "restore": "code"})
	assert.Equal(t, before, filesOf(t, w.cwd))
	p.signal(syscall.SIGTERM)
	p.wait()
	assert.Equal(t, 1, strings.Count(p.stderr.String(), "the snapshot index cannot be kept"), "said once:\n%s", p.stderr.String())
	assert.Empty(t, temporary(), "removed on SIGTERM")

	p = w.startIn(tmp, "--continue")
	p.ok("1", map[string]any{"type": "create_checkpoint"})
	assert.Len(t, temporary(), 1)
	assert.Equal(t, 0, p.exit())
	assert.Empty(t, temporary(), "removed at stdin's end")
}
