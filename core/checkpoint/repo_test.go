package checkpoint

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitT runs git in dir for a test.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
		"GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

func write(t *testing.T, dir, name, content string, perm os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), perm))
	require.NoError(t, os.Chmod(p, perm))
}

// userView is everything of the user's repository a checkpoint must not
// change.
func userView(t *testing.T, dir string) string {
	var b strings.Builder
	b.WriteString(gitT(t, dir, "rev-parse", "HEAD"))
	b.WriteString(gitT(t, dir, "ls-files", "-s"))
	b.WriteString(gitT(t, dir, "stash", "list"))
	for _, line := range strings.SplitAfter(gitT(t, dir, "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		if !strings.HasPrefix(line, "refs/gopi/") {
			b.WriteString(line)
		}
	}
	b.WriteString(gitT(t, dir, "status", "--porcelain", "--untracked-files=all", "--ignored"))
	return b.String()
}

// tree is the files under dir (without .git) as a map: content, with
// "->" for a link and "x" for an executable.
func tree(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		if info.IsDir() {
			if info.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		default:
			data, _ := os.ReadFile(p)
			v := string(data)
			if info.Mode().Perm()&0o111 != 0 {
				v = "x " + v
			}
			out[rel] = v
		}
		return nil
	}))
	return out
}

func newRepo(t *testing.T) string {
	t.Helper()
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "main")
	write(t, dir, ".gitattributes", "*.txt text eol=lf\n", 0o644)
	write(t, dir, ".gitignore", "ignored/\n*.log\n", 0o644)
	write(t, dir, "keep.go", "package keep\n", 0o644)
	write(t, dir, "edit.go", "package edit\n\nfunc A() {}\n", 0o644)
	write(t, dir, "gone.go", "package gone\n", 0o644)
	write(t, dir, "old/name.go", "package old\n", 0o644)
	write(t, dir, "run.sh", "#!/bin/sh\necho hi\n", 0o755)
	write(t, dir, "crlf.txt", "one\r\ntwo\r\n", 0o644) // stored with LF by git add, CRLF on disk
	write(t, dir, "bin.dat", "\x00\x01\x02binary", 0o644)
	require.NoError(t, os.Symlink("keep.go", filepath.Join(dir, "link")))
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "start")
	write(t, dir, "untracked.md", "draft\n", 0o644)
	write(t, dir, "staged.go", "package staged\n", 0o644)
	gitT(t, dir, "add", "staged.go")
	write(t, dir, "stashme.go", "package s\n", 0o644)
	gitT(t, dir, "stash", "push", "-q", "-u", "-m", "user stash", "--", "stashme.go")
	write(t, dir, "ignored/cache.bin", "cache", 0o644)
	write(t, dir, "app.log", "log", 0o644)
	return dir
}

func TestRestoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	before := tree(t, dir)
	user := userView(t, dir)

	r, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	cp, err := r.Snapshot(ctx, "s1/c1")
	require.NoError(t, err)
	assert.Equal(t, user, userView(t, dir), "a snapshot changes nothing of the user's")

	// The agent's turn: every kind of change.
	write(t, dir, "edit.go", "package edit\n\nfunc B() {}\n", 0o644)
	require.NoError(t, os.Remove(filepath.Join(dir, "gone.go")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "new"), 0o755))
	require.NoError(t, os.Rename(filepath.Join(dir, "old/name.go"), filepath.Join(dir, "new/name.go")))
	write(t, dir, "added.go", "package added\n", 0o644)
	write(t, dir, "deep/new/dir/file.go", "package deep\n", 0o644)
	require.NoError(t, os.Chmod(filepath.Join(dir, "run.sh"), 0o644))
	write(t, dir, "crlf.txt", "one\ntwo\n", 0o644)
	write(t, dir, "bin.dat", "\x00\xffother", 0o644)
	require.NoError(t, os.Remove(filepath.Join(dir, "link")))
	require.NoError(t, os.Symlink("edit.go", filepath.Join(dir, "link")))
	write(t, dir, "untracked.md", "changed draft\n", 0o644)
	// Left out, so left alone by the restore.
	write(t, dir, "ignored/cache.bin", "new cache", 0o644)
	write(t, dir, "big.dat", strings.Repeat("x", DefaultMaxFileSize+1), 0o644)
	nested := filepath.Join(dir, "nested")
	require.NoError(t, os.MkdirAll(nested, 0o755))
	gitT(t, nested, "init", "-q")
	write(t, nested, "inner.go", "package inner\n", 0o644)

	changes, err := r.Changes(ctx, cp)
	require.NoError(t, err)
	status := map[string]string{}
	for _, c := range changes {
		status[c.Path] = c.Status
	}
	assert.Equal(t, map[string]string{
		"edit.go": "modified", "gone.go": "deleted", "old/name.go": "deleted", "new/name.go": "added",
		"added.go": "added", "deep/new/dir/file.go": "added", "run.sh": "modified", "crlf.txt": "modified",
		"bin.dat": "modified", "link": "modified", "untracked.md": "modified",
	}, status)
	for _, c := range changes {
		switch c.Path {
		case "bin.dat":
			assert.True(t, c.Binary)
			assert.Empty(t, c.Diff)
		case "edit.go":
			assert.Contains(t, c.Diff, "-func A() {}\n+func B() {}")
		}
	}

	dry, undo, err := r.Restore(ctx, cp, "s1/undo", true)
	require.NoError(t, err)
	assert.Empty(t, undo, "a dry run records nothing")
	assert.Len(t, dry, len(changes))
	afterTurn := tree(t, dir)

	done, undo, err := r.Restore(ctx, cp, "s1/undo", false)
	require.NoError(t, err)
	assert.Equal(t, dry, done, "the dry run said exactly what the restore did")
	require.NotEmpty(t, undo)

	got := tree(t, dir)
	assert.Equal(t, "new cache", got["ignored/cache.bin"], "ignored files are left alone")
	assert.Contains(t, got, "big.dat", "large files are left alone")
	assert.Equal(t, "package inner\n", got["nested/inner.go"], "nested repositories are left alone")
	for _, k := range []string{"ignored/cache.bin", "big.dat", "nested/inner.go"} {
		delete(got, k)
	}
	delete(before, "ignored/cache.bin")
	assert.Equal(t, before, got, "every byte, mode and link is back (CRLF included)")
	assert.NoDirExists(t, filepath.Join(dir, "deep"), "directories the turn made are gone with its files")
	// What the turn left that the restore must not touch goes now, to
	// compare the rest.
	require.NoError(t, os.Remove(filepath.Join(dir, "big.dat")))
	require.NoError(t, os.RemoveAll(nested))
	assert.Equal(t, user, userView(t, dir), "the user's repository is as it was")

	// The restore can be undone.
	_, _, err = r.Restore(ctx, undo, "", false)
	require.NoError(t, err)
	for _, k := range []string{"big.dat", "nested/inner.go"} {
		delete(afterTurn, k)
	}
	assert.Equal(t, afterTurn, tree(t, dir))

	require.NoError(t, r.Prune(ctx, "s1/"))
	assert.Empty(t, strings.TrimSpace(gitT(t, dir, "for-each-ref", "refs/gopi/")))
}

// A snapshot taken from a subdirectory covers that directory alone.
func TestScopeIsTheDirectory(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	sub := filepath.Join(dir, "old")
	r, err := Open(ctx, sub, Options{})
	require.NoError(t, err)
	cp, err := r.Snapshot(ctx, "s/1")
	require.NoError(t, err)
	write(t, dir, "old/name.go", "package changed\n", 0o644)
	write(t, dir, "edit.go", "outside\n", 0o644)
	changes, err := r.Changes(ctx, cp)
	require.NoError(t, err)
	require.Len(t, changes, 1)
	assert.Equal(t, "name.go", changes[0].Path)
	_, _, err = r.Restore(ctx, cp, "", false)
	require.NoError(t, err)
	data, _ := os.ReadFile(filepath.Join(dir, "edit.go"))
	assert.Equal(t, "outside\n", string(data), "outside the scope nothing is restored")
}

// The second snapshot of an unchanged tree reuses the hashes, and a file
// changed since is still seen.
func TestSnapshotCacheSeesChanges(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	r, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	a, err := r.Snapshot(ctx, "s/a")
	require.NoError(t, err)
	b, err := r.Snapshot(ctx, "s/b")
	require.NoError(t, err)
	assert.Equal(t, gitT(t, dir, "rev-parse", a+"^{tree}"), gitT(t, dir, "rev-parse", b+"^{tree}"))
	write(t, dir, "keep.go", "package other\n", 0o644) // same size, just now
	changes, err := r.Changes(ctx, b)
	require.NoError(t, err)
	require.Len(t, changes, 1)
	assert.Equal(t, "keep.go", changes[0].Path)
}

func TestOpenOutsideGit(t *testing.T) {
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(t.TempDir()))
	_, err := Open(context.Background(), t.TempDir(), Options{})
	assert.ErrorIs(t, err, errNotRepo)
}

func TestIsBinary(t *testing.T) {
	assert.True(t, isBinary([]byte("a\x00b")))
	assert.False(t, isBinary(bytes.Repeat([]byte("a"), 9000)))
}

// Files whose filter is lfs are not recorded and a restore leaves them
// alone.
func TestLFSFilesLeftAlone(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, ".gitattributes", "*.txt text eol=lf\n*.bin filter=lfs diff=lfs merge=lfs -text\n", 0o644)
	write(t, dir, "model.bin", "weights v1", 0o644)
	r, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	cp, err := r.Snapshot(ctx, "s/lfs")
	require.NoError(t, err)
	assert.NotContains(t, gitT(t, dir, "ls-tree", "-r", "--name-only", cp), "model.bin")
	write(t, dir, "model.bin", "weights v2", 0o644)
	changes, _, err := r.Restore(ctx, cp, "", false)
	require.NoError(t, err)
	assert.Empty(t, changes)
	data, _ := os.ReadFile(filepath.Join(dir, "model.bin"))
	assert.Equal(t, "weights v2", string(data))
}
