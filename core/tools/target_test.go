package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCallTargetFollowsEveryLink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	proj, out := filepath.Join(base, "proj"), filepath.Join(base, "out")
	require.NoError(t, os.MkdirAll(filepath.Join(proj, "docs"), 0o755))
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "rc"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(out, "rc"), filepath.Join(proj, "notes.txt")))
	require.NoError(t, os.Symlink("../out", filepath.Join(proj, "cfg")))
	require.NoError(t, os.Symlink("docs/a.txt", filepath.Join(proj, "alias")))
	require.NoError(t, os.Symlink("alias", filepath.Join(proj, "alias2")))
	require.NoError(t, os.Symlink(filepath.Join(out, "new"), filepath.Join(proj, "dangling")))
	require.NoError(t, os.Symlink("loop", filepath.Join(proj, "loop")))
	// The project reached through a link of its own: no news.
	via := filepath.Join(base, "via")
	require.NoError(t, os.Symlink("proj", via))

	for _, tc := range []struct {
		tool, path, cwd string
		real            string
		linked, outside bool
	}{
		{"write", "plain.txt", proj, filepath.Join(proj, "plain.txt"), false, false},
		{"write", "new/dir/f.txt", proj, filepath.Join(proj, "new/dir/f.txt"), false, false},
		{"write", "notes.txt", proj, filepath.Join(out, "rc"), true, true},
		{"edit", "cfg/rc", proj, filepath.Join(out, "rc"), true, true},
		{"write", "cfg/sub/new.txt", proj, filepath.Join(out, "sub/new.txt"), true, true},
		{"read", "alias2", proj, filepath.Join(proj, "docs/a.txt"), true, false},
		{"write", "dangling", proj, filepath.Join(out, "new"), true, true},
		{"write", "../out/rc", proj, filepath.Join(out, "rc"), false, true},
		{"write", "notes.txt", via, filepath.Join(out, "rc"), true, true},
		{"write", "plain.txt", via, filepath.Join(proj, "plain.txt"), false, false},
		{"ls", "cfg", proj, out, true, true},
	} {
		got, ok := CallTarget(context.Background(), tc.cwd, tc.tool, json.RawMessage(`{"path":`+quote(tc.path)+`}`))
		require.True(t, ok, tc.path)
		assert.Equal(t, tc.real, got.Real, tc.path)
		assert.Equal(t, tc.linked, got.Linked, "%s linked", tc.path)
		assert.Equal(t, tc.outside, got.Outside, "%s outside", tc.path)
	}

	got, ok := CallTarget(context.Background(), proj, "write", json.RawMessage(`{"path":"alias"}`))
	require.True(t, ok)
	assert.Equal(t, filepath.Join("docs", "a.txt"), got.Shown())
	got, _ = CallTarget(context.Background(), proj, "write", json.RawMessage(`{"path":"notes.txt"}`))
	assert.Equal(t, filepath.Join(out, "rc"), got.Shown())

	got, ok = CallTarget(context.Background(), proj, "write", json.RawMessage(`{"path":"loop"}`))
	require.True(t, ok)
	assert.Empty(t, got.Real, "a link loop has no real target")

	for _, args := range []string{`{"command":"ls"}`, `{}`, `not json`} {
		_, ok := CallTarget(context.Background(), proj, "bash", json.RawMessage(args))
		assert.False(t, ok)
		_, ok = CallTarget(context.Background(), proj, "ls", json.RawMessage(args))
		assert.False(t, ok)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// An extra root (an ACP session's additionalDirectories) is part of the
// project: a path in it, or reached through a link into it, is not
// outside; its files are shown by their absolute path.
func TestCallTargetExtraRoots(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	proj, lib, other := filepath.Join(base, "proj"), filepath.Join(base, "lib"), filepath.Join(base, "other")
	for _, d := range []string{proj, lib, other} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.Symlink(lib, filepath.Join(proj, "vendored")))
	// The extra root named through a link of its own.
	require.NoError(t, os.Symlink("lib", filepath.Join(base, "lib-link")))

	write := func(path string, roots ...string) Target {
		t.Helper()
		got, ok := CallTarget(context.Background(), proj, "write", json.RawMessage(`{"path":`+quote(path)+`}`), roots...)
		require.True(t, ok)
		return got
	}
	assert.True(t, write(filepath.Join(lib, "a.go")).Outside, "without the root")
	got := write(filepath.Join(lib, "a.go"), lib)
	assert.False(t, got.Outside)
	assert.Equal(t, filepath.Join(lib, "a.go"), got.Shown())
	assert.False(t, write("vendored/a.go", filepath.Join(base, "lib-link")).Outside)
	assert.True(t, write(filepath.Join(other, "x"), lib).Outside)
	assert.True(t, write("../other/x", lib).Outside)
	assert.Equal(t, "in.txt", write("in.txt", lib).Shown())
}
