package checkpoints

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A checkpoint records each folder once: an additional directory inside
// the session's, inside another one or the same as another (through a
// link) is recorded as part of it; one that holds the session's is a
// root of its own (its recorder leaves the session's files out).
func TestCheckpointRootsRecordEachFolderOnce(t *testing.T) {
	base := t.TempDir()
	cwd, outer, lib := filepath.Join(base, "work", "app"), filepath.Join(base, "work"), filepath.Join(base, "lib")
	for _, d := range []string{filepath.Join(cwd, "sub"), filepath.Join(lib, "inner")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.Symlink(lib, filepath.Join(base, "lib-link")))
	dirs := []string{filepath.Join(cwd, "sub"), filepath.Join(lib, "inner"), lib, filepath.Join(base, "lib-link"), outer}
	s := New(Config{Cwd: cwd, Roots: func() []string { return dirs }})
	assert.Equal(t, []string{cwd, lib, outer}, s.checkpointRoots())
}
