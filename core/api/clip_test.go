package api

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClip(t *testing.T) {
	assert.Equal(t, "short", Clip("short", ClipName))
	assert.Equal(t, strings.Repeat("x", ClipName)+"…", Clip(strings.Repeat("x", 40<<20), ClipName))
	// Cut on a rune boundary: "é" is two bytes; none is split.
	got := Clip(strings.Repeat("é", 200), 5)
	assert.Equal(t, "éé…", got)
}

func TestIDTooLong(t *testing.T) {
	err := IDTooLong(41943042)
	assert.ErrorIs(t, err, ErrIDTooLong)
	assert.Equal(t, `id too long: "id" is 41943042 bytes long; gopi answers requests whose id is at most 256 bytes`, err.Error())
}

// An os error quotes the path whole; ClipPathError keeps its operation
// and cause and quotes the path's beginning.
func TestClipPathError(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("y", 100_000))
	_, err := os.Stat(long)
	require.Error(t, err)
	clipped := ClipPathError(err)
	assert.Less(t, len(clipped.Error()), ClipName+100)
	assert.Contains(t, clipped.Error(), "stat ")
	assert.Contains(t, clipped.Error(), "yyy…: file name too long")
	var pe *fs.PathError
	assert.True(t, errors.As(clipped, &pe))
	assert.ErrorIs(t, clipped, pe.Err)

	short := errors.New("not a path error")
	assert.Same(t, short, ClipPathError(short))
	_, err = os.Stat(filepath.Join(t.TempDir(), "missing"))
	assert.Same(t, err, ClipPathError(err), "a short path is left as it is")
}
