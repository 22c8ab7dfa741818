//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// changedTo asserts that err is a *ChangedError naming path and saying
// what it is now.
func changedTo(t *testing.T, err error, path, now string) {
	t.Helper()
	var c *ChangedError
	require.ErrorAs(t, err, &c)
	assert.ErrorIs(t, err, ErrChanged)
	assert.Equal(t, path, c.Path)
	assert.Equal(t, now, c.Now)
}

func TestPinWritesTheFileItPinned(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conf.txt")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o640))
	before, err := os.Stat(path)
	require.NoError(t, err)
	p := PinPath(path)
	require.NoError(t, p.Check())
	require.NoError(t, p.MkdirAll())
	require.NoError(t, p.Write([]byte("new"), 0o600))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(data))
	after, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "rewritten in place")
	assert.Equal(t, os.FileMode(0o640), after.Mode().Perm())

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	assert.NoError(t, p.Verify(f))
}

// The file of item 5 of issue 37: replaced by a link to a file elsewhere
// after it was pinned, it is refused, and the file elsewhere is not
// opened for writing.
func TestPinRefusesAFileSwappedForALink(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "conf.txt")
	outside := filepath.Join(elsewhere, "outside.txt")
	require.NoError(t, os.WriteFile(path, []byte("mine"), 0o644))
	require.NoError(t, os.WriteFile(outside, []byte("theirs"), 0o644))
	p := PinPath(path)

	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink(outside, path))

	changedTo(t, p.Check(), path, "a link to "+outside)
	changedTo(t, p.Write([]byte("evil"), 0o644), path, "a link to "+outside)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	changedTo(t, p.Verify(f), path, "a link to "+outside)
	data, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "theirs", string(data))
}

func TestPinRefusesAFileReplacedOrRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conf.txt")
	require.NoError(t, os.WriteFile(path, []byte("mine"), 0o644))
	p := PinPath(path)

	other := filepath.Join(dir, "other.txt")
	require.NoError(t, os.WriteFile(other, []byte("other"), 0o644))
	require.NoError(t, os.Rename(other, path))
	changedTo(t, p.Write([]byte("new"), 0o644), path, "another file")
	data, _ := os.ReadFile(path)
	assert.Equal(t, "other", string(data))

	require.NoError(t, os.Remove(path))
	changedTo(t, p.Write([]byte("new"), 0o644), path, "gone")
	_, err := os.Lstat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "a removed file is not made again")
}

func TestPinCreatesANewFileWhereNoneWas(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b", "new.txt")
	p := PinPath(path)
	require.NoError(t, p.Check())
	require.NoError(t, p.MkdirAll())
	require.NoError(t, p.Write([]byte("fresh"), 0o600))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "fresh", string(data))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	// Pinned as absent, the file it made is not the file it pinned.
	changedTo(t, p.Write([]byte("again"), 0o600), path, "a file where there was none")
}

// The new-file case of item 5: nothing was there, and a link to a file
// elsewhere appears before the write.
func TestPinRefusesALinkWhereNoFileWas(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "new.txt")
	outside := filepath.Join(elsewhere, "outside.txt")
	require.NoError(t, os.WriteFile(outside, []byte("theirs"), 0o644))
	p := PinPath(path)

	require.NoError(t, os.Symlink(outside, path))
	changedTo(t, p.Check(), path, "a link to "+outside)
	require.NoError(t, p.MkdirAll())
	changedTo(t, p.Write([]byte("evil"), 0o644), path, "a link to "+outside)
	data, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "theirs", string(data))

	// A dangling link is refused too, and its target not made.
	require.NoError(t, os.Remove(path))
	gone := filepath.Join(elsewhere, "made.txt")
	require.NoError(t, os.Symlink(gone, path))
	changedTo(t, p.Write([]byte("evil"), 0o644), path, "a link to "+gone)
	_, err = os.Lstat(gone)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// A directory on the way to a new file, missing when pinned, that
// appears as a link leads nowhere: nothing is made through it.
func TestPinMakesNoDirectoryThroughALink(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "sub", "deeper", "new.txt")
	p := PinPath(path)

	require.NoError(t, os.Symlink(elsewhere, filepath.Join(dir, "sub")))
	changedTo(t, p.MkdirAll(), filepath.Join(dir, "sub"), "a link to "+elsewhere)
	changedTo(t, p.Write([]byte("evil"), 0o644), filepath.Join(dir, "sub"), "a link to "+elsewhere)
	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// The directory a new file goes in, replaced by a link to another one,
// is not written in.
func TestPinRefusesAReplacedDirectory(t *testing.T) {
	base, elsewhere := t.TempDir(), t.TempDir()
	dir := filepath.Join(base, "proj")
	require.NoError(t, os.Mkdir(dir, 0o755))
	path := filepath.Join(dir, "new.txt")
	p := PinPath(path)

	require.NoError(t, os.Rename(dir, filepath.Join(base, "old")))
	require.NoError(t, os.Symlink(elsewhere, dir))
	changedTo(t, p.Write([]byte("evil"), 0o644), dir, "a link to "+elsewhere)
	changedTo(t, p.MkdirAll(), dir, "a link to "+elsewhere)
	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestPinOfAnUnreachablePathFails(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	p := PinPath(filepath.Join(file, "below", "x.txt"))
	err := p.Write([]byte("x"), 0o644)
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrChanged))
	assert.Equal(t, err, p.Check())
}
