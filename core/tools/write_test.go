package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteCreatesDirectories(t *testing.T) {
	dir := t.TempDir()
	res := run(t, dir, "write", map[string]any{"path": "a/b/c.txt", "content": "hello"})
	require.False(t, res.IsError)
	require.Equal(t, "Successfully wrote 5 bytes to a/b/c.txt", text(res))
	data, err := os.ReadFile(filepath.Join(dir, "a/b/c.txt"))
	require.NoError(t, err)
	require.Equal(t, "hello", string(data))

	res = run(t, dir, "write", map[string]any{"path": "@a/b/c.txt", "content": "bye"})
	require.False(t, res.IsError)
	data, _ = os.ReadFile(filepath.Join(dir, "a/b/c.txt"))
	require.Equal(t, "bye", string(data))
}

func TestWriteFailsOnDirectory(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	res := run(t, dir, "write", map[string]any{"path": "d", "content": "x"})
	require.True(t, res.IsError)
}
