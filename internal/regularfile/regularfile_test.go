//go:build unix

package regularfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "AGENTS.md")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	link := filepath.Join(dir, "link.md")
	require.NoError(t, os.Symlink(fifo, link))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range []string{fifo, link, dir, os.DevNull} {
			_, err := ReadFile(p)
			assert.ErrorIs(t, err, ErrNotRegular, p)
		}
		_, err := ReadFile(filepath.Join(dir, "missing"))
		assert.True(t, errors.Is(err, fs.ErrNotExist))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFile blocked on a special file")
	}

	regular := filepath.Join(dir, "ok.md")
	require.NoError(t, os.WriteFile(regular, []byte("fine"), 0o644))
	require.NoError(t, os.Symlink(regular, filepath.Join(dir, "ok-link.md")))
	for _, p := range []string{regular, filepath.Join(dir, "ok-link.md")} {
		b, err := ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, "fine", string(b))
	}
	assert.Equal(t, "a named pipe", Kind(fs.ModeNamedPipe))
}
