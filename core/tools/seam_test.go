package tools

import (
	"context"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/internal/testenv"
)

// recordingFS is a non-local FS: it forwards to the disk and records the
// calls, proving the tools go through the seam.
type recordingFS struct {
	LocalFS
	mu    sync.Mutex
	calls []string
}

func (r *recordingFS) record(op, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, op+" "+filepath.Base(name))
}

func (r *recordingFS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	r.record("read", name)
	return r.LocalFS.ReadFile(ctx, name)
}

func (r *recordingFS) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	r.record("open", name)
	return r.LocalFS.Open(ctx, name)
}

func (r *recordingFS) WriteFile(ctx context.Context, name string, data []byte) error {
	r.record("write", name)
	return r.LocalFS.WriteFile(ctx, name, data)
}

func (r *recordingFS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	r.record("readdir", name)
	return r.LocalFS.ReadDir(ctx, name)
}

func TestToolsUseFS(t *testing.T) {
	dir := t.TempDir()
	rfs := &recordingFS{}
	run(t, dir, "write", map[string]any{"path": "f.txt", "content": "abc"}, WithFS(rfs))
	run(t, dir, "edit", map[string]any{"path": "f.txt", "edits": []map[string]string{{"oldText": "b", "newText": "B"}}}, WithFS(rfs))
	require.Equal(t, "aBc", text(run(t, dir, "read", map[string]any{"path": "f.txt"}, WithFS(rfs))))
	// A non-local FS is walked in Go even where rg is installed.
	require.Equal(t, "f.txt:1: aBc", text(run(t, dir, "grep", map[string]any{"pattern": "B"}, WithFS(rfs))))
	require.Equal(t, []string{"write f.txt", "read f.txt", "write f.txt", "read f.txt", "readdir " + filepath.Base(dir), "open f.txt"}, rfs.calls)
}

// echoShell is a Shell that runs nothing and prints its request.
type echoShell struct{}

func (echoShell) Exec(_ context.Context, req ExecRequest) (*int, error) {
	_, _ = req.Output.Write([]byte("would run: " + req.Command + " in " + req.Dir))
	code := 0
	return &code, nil
}

func TestBashUsesShell(t *testing.T) {
	res := run(t, "/remote/dir", "bash", map[string]any{"command": "make"}, WithShell(echoShell{}))
	require.Equal(t, "would run: make in /remote/dir", text(res))
}

// TestFindFd runs find with the fd on PATH: through fd when it is new
// enough, through the Go walker when it is not (Debian 12's fd 8.6 lacks
// --no-require-git and used to fail every search); either way with the
// same rules.
func TestFindFd(t *testing.T) {
	fd := testenv.LookPath(t, "fd", "fdfind")
	t.Logf("fd at %s usable: %v", fd, fdUsable(fd))
	dir := searchTree(t)
	res := run(t, dir, "find", map[string]any{"pattern": "*.go"})
	require.ElementsMatch(t, []string{"main.go", "pkg/util.go", "pkg/util_test.go"}, strings.Split(text(res), "\n"))
}

func TestFdVersionCheck(t *testing.T) {
	for v, want := range map[string]bool{
		"fd 8.7.0\n":     true,
		"fdfind 8.6.0\n": false,
		"fd 10.2.0":      true,
		"fd 7.9.1":       false,
		"fd":             false,
		"fd x.y":         false,
	} {
		require.Equal(t, want, fdAtLeast(v, 8, 7), v)
	}
}
