package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteReplacesAndLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
	require.NoError(t, Write(path, []byte("new"), ".f-*.tmp"))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(data))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the file keeps its mode")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1)

	assert.Error(t, Write(filepath.Join(dir, "missing", "f.txt"), []byte("x"), ".f-*.tmp"))
}

// Issue 17: a write through a symlink lands in its target and leaves the
// link; a FIFO or device is refused at once; hard links stay shared; a
// new file is 0644.
func TestWriteKeepsWhatMakesTheFileTheUsers(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.txt")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o640))
	link := filepath.Join(dir, "link.txt")
	require.NoError(t, os.Symlink("real.txt", link))
	for _, write := range []func(string, []byte, string) error{Write, WriteKeepingFile} {
		require.NoError(t, write(link, []byte("via link"), ".f-*.tmp"))
		li, err := os.Lstat(link)
		require.NoError(t, err)
		assert.NotZero(t, li.Mode()&os.ModeSymlink, "the link stays a link")
		data, _ := os.ReadFile(target)
		assert.Equal(t, "via link", string(data))
		info, _ := os.Stat(target)
		assert.Equal(t, os.FileMode(0o640), info.Mode().Perm())
	}

	// A dangling link creates its target.
	dangling := filepath.Join(dir, "dangling.txt")
	require.NoError(t, os.Symlink("new.txt", dangling))
	require.NoError(t, Write(dangling, []byte("fresh"), ".f-*.tmp"))
	data, err := os.ReadFile(filepath.Join(dir, "new.txt"))
	require.NoError(t, err)
	assert.Equal(t, "fresh", string(data))

	// Hard links keep sharing the contents.
	other := filepath.Join(dir, "hard.txt")
	require.NoError(t, os.Link(target, other))
	for _, write := range []func(string, []byte, string) error{Write, WriteKeepingFile} {
		require.NoError(t, write(target, []byte("shared"), ".f-*.tmp"))
		data, _ = os.ReadFile(other)
		assert.Equal(t, "shared", string(data))
	}

	// Special files are refused, without blocking on a FIFO.
	fifo := filepath.Join(dir, "pipe")
	if err := mkfifo(fifo); err == nil {
		for _, write := range []func(string, []byte, string) error{Write, WriteKeepingFile} {
			err := write(fifo, []byte("x"), ".f-*.tmp")
			require.ErrorIs(t, err, ErrNotRegular)
			assert.Contains(t, err.Error(), "named pipe")
			fi, _ := os.Lstat(fifo)
			assert.NotZero(t, fi.Mode()&os.ModeNamedPipe, "the FIFO is still there")
		}
	}
	// A device node of the test's own (as root), never the real /dev/null.
	if dev := filepath.Join(dir, "null"); mknull(dev) == nil {
		err = Write(dev, []byte("x"), ".f-*.tmp")
		require.ErrorIs(t, err, ErrNotRegular)
		assert.Contains(t, err.Error(), "character device")
	}
	err = Write(dir, []byte("x"), ".f-*.tmp")
	require.ErrorIs(t, err, ErrNotRegular)

	require.NoError(t, Write(filepath.Join(dir, "brand-new.txt"), []byte("x"), ".f-*.tmp"))
	info, err := os.Stat(filepath.Join(dir, "brand-new.txt"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
}

// Issue 25: a new file can be made private (an export holds the
// conversation); an existing one keeps its mode all the same.
func TestWriteKeepingFilePermAppliesToNewFilesOnly(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "export.html")
	require.NoError(t, WriteKeepingFilePerm(fresh, []byte("page"), ".f-*.tmp", 0o600))
	info, err := os.Stat(fresh)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	shared := filepath.Join(dir, "shared.html")
	require.NoError(t, os.WriteFile(shared, []byte("old"), 0o644))
	require.NoError(t, WriteKeepingFilePerm(shared, []byte("page"), ".f-*.tmp", 0o600))
	info, err = os.Stat(shared)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
}
