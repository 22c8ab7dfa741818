package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchTree is a work tree of n committed files of about 1 KiB in
// directories of 100.
func benchTree(b *testing.B, n int) string {
	b.Helper()
	b.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := b.TempDir()
	line := make([]byte, 1024)
	for i := range line {
		line[i] = 'a' + byte(i%26)
	}
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, line, 0o644); err != nil {
			b.Fatal(err)
		}
		// Files of a real tree are older than the racy window.
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	gitB(b, dir, "init", "-q")
	gitB(b, dir, "add", "-A")
	gitB(b, dir, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "start")
	return dir
}

func gitB(b *testing.B, dir string, args ...string) {
	b.Helper()
	if _, err := runGit(context.Background(), dir, nil, nil, args...); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSnapshot20k is a prompt's checkpoint in a tree of 20,000
// files: cold (the first gopi in the project: every file hashed), restart
// (a new process where an earlier one kept its index and stat cache in
// the agent directory, nothing changed) and warm (the next prompt, one
// file changed).
func BenchmarkSnapshot20k(b *testing.B) {
	dir := benchTree(b, 20000)
	ctx := context.Background()
	agentDirs := b.TempDir()
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			agentDir, err := os.MkdirTemp(agentDirs, "agent-")
			if err != nil {
				b.Fatal(err)
			}
			r, err := Open(ctx, dir, Options{IndexDir: IndexDir(agentDir)})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.Snapshot(ctx, "bench/cold"); err != nil {
				b.Fatal(err)
			}
		}
	})
	o := Options{IndexDir: IndexDir(b.TempDir())} // as gopi runs: the index kept between processes
	b.Run("restart", func(b *testing.B) {
		r, err := Open(ctx, dir, o)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Snapshot(ctx, "bench/restart"); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			r, err := Open(ctx, dir, o)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.Snapshot(ctx, "bench/restart"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		r, err := Open(ctx, dir, o)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Snapshot(ctx, "bench/warm"); err != nil {
			b.Fatal(err)
		}
		objects := filepath.Join(dir, ".git", "objects")
		start := dirSize(b, objects)
		i := 0
		for b.Loop() {
			i++
			if err := os.WriteFile(filepath.Join(dir, "d000", "f00000.go"), fmt.Appendf(nil, "change %d %d", i, time.Now().UnixNano()), 0o644); err != nil {
				b.Fatal(err)
			}
			if _, err := r.Snapshot(ctx, "bench/warm"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(dirSize(b, objects)-start)/float64(i), "objbytes/op")
	})
}

// dirSize is the bytes of the files under dir.
func dirSize(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if info, err := d.Info(); err == nil && !d.IsDir() {
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}
