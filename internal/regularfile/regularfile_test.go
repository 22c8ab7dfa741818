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

func TestMissingCoversAPathUnderAFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, under := ReadFile(filepath.Join(file, "settings.json"))
	_, absent := ReadFile(filepath.Join(dir, "nothing.json"))
	_, isDir := ReadFile(dir)
	if !Missing(under) || !Missing(absent) {
		t.Errorf("Missing(%v) = %v, Missing(%v) = %v; want both true", under, Missing(under), absent, Missing(absent))
	}
	if Missing(isDir) {
		t.Errorf("a folder where a file should be is a problem to report, not a missing file: %v", isDir)
	}
}
