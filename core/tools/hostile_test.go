//go:build unix

package tools

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 17: files a careless model points the tools at.

// runWithin fails the test instead of hanging when a tool does not return.
func runWithin(t *testing.T, ctx context.Context, dir, name string, args any) (res string, isError bool) {
	t.Helper()
	type out struct {
		text string
		err  bool
	}
	done := make(chan out, 1)
	go func() {
		r, _ := runUpdates(t, ctx, dir, name, args)
		done <- out{text(r), r.IsError}
	}()
	select {
	case o := <-done:
		return o.text, o.err
	case <-time.After(60 * time.Second): // a hang, not a slow machine
		t.Fatalf("%s did not return", name)
	}
	return "", false
}

func TestReadRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	out, isErr := runWithin(t, context.Background(), dir, "read", map[string]any{"path": "pipe"})
	assert.True(t, isErr)
	assert.Contains(t, out, "named pipe")

	out, isErr = runWithin(t, context.Background(), dir, "read", map[string]any{"path": os.DevNull})
	assert.True(t, isErr)
	assert.Contains(t, out, "character device")

	// edit reads the file whole: same refusal, no hang.
	out, isErr = runWithin(t, context.Background(), dir, "edit", map[string]any{"path": "pipe", "edits": []any{map[string]any{"oldText": "a", "newText": "b"}}})
	assert.True(t, isErr)
	assert.Contains(t, out, "named pipe")
}

// A file over smallFile is streamed, and reads exactly as if it had been
// loaded whole.
func TestReadLargeFileMatchesWholeRead(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; b.Len() <= smallFile+1000; i++ {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("y", i%300))
	}
	b.WriteString("no newline at the end")
	content := b.String()
	writeFile(t, filepath.Join(dir, "big.txt"), content)
	total := strings.Count(content, "\n") + 1
	for _, args := range []map[string]any{
		{},
		{"offset": 5000},
		{"offset": 100, "limit": 7},
		{"offset": total},
		{"offset": total - 3, "limit": 10},
		{"offset": total + 1},
	} {
		args["path"] = "big.txt"
		want := readText(content, decodeReadArgs(t, args))
		got := run(t, dir, "read", args)
		assert.Equal(t, want.IsError, got.IsError, "%v", args)
		assert.Equal(t, text(want), text(got), "%v", args)
	}
}

func decodeReadArgs(t *testing.T, m map[string]any) readArgs {
	b, _ := json.Marshal(m)
	var a readArgs
	require.NoError(t, json.Unmarshal(b, &a))
	return a
}

// A 1 GB file (sparse: no disk used) with no newline: read returns with
// the note about its first line, holding a few MB at most (a read that
// loaded the file would hold the whole gigabyte). The size keeps the pass
// short enough for a loaded CI machine under the race detector.
func TestReadHugeFileStaysSmall(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "huge.bin")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30))
	require.NoError(t, f.Close())

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, isErr := runWithin(t, context.Background(), dir, "read", map[string]any{"path": "huge.bin"})
	runtime.ReadMemStats(&after)
	assert.False(t, isErr, out)
	assert.Contains(t, out, "Line 1 is 1024.0MB")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "read allocated more than 64 MB for a 1 GB file")

	// An abort ends the pass at once.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	out, _ = runWithin(t, ctx, dir, "read", map[string]any{"path": "huge.bin"})
	if ctx.Err() != nil {
		assert.Contains(t, out, "aborted")
	}
}

// The Go grep (used without rg) skips a FIFO instead of waiting on it,
// and streams a large file instead of loading it.
func TestGoGrepSkipsSpecialFilesAndStreams(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	writeFile(t, filepath.Join(dir, "a.txt"), "nothing\nneedle here\n")
	big := filepath.Join(dir, "big.log")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(200<<20)) // 200 MB of zeros: over MaxWholeFile
	_, err = f.WriteAt([]byte("\nneedle at the end\n"), 200<<20)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "text.log"), []byte(strings.Repeat("hay\n", 1<<20)+"needle deep\n"), 0o644))

	rfs := &recordingFS{} // not the local FS: the Go walker runs even with rg installed
	done := make(chan string, 1)
	go func() {
		res := run(t, dir, "grep", map[string]any{"pattern": "needle"}, WithFS(rfs))
		done <- text(res)
	}()
	select {
	case out := <-done:
		assert.Contains(t, out, "a.txt:2: needle here")
		assert.Contains(t, out, "text.log:1048577: needle deep")
		assert.NotContains(t, out, "big.log", "a file of zeros is binary")
	case <-time.After(60 * time.Second): // a hang, not a slow machine
		t.Fatal("grep did not return (a FIFO?)")
	}
}

// write and edit refuse a FIFO or device instead of blocking on it or
// writing into it.
func TestWriteRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	out, isErr := runWithin(t, context.Background(), dir, "write", map[string]any{"path": "pipe", "content": "x"})
	assert.True(t, isErr)
	assert.Contains(t, out, "named pipe")
	out, isErr = runWithin(t, context.Background(), dir, "write", map[string]any{"path": os.DevNull, "content": "x"})
	assert.True(t, isErr)
	assert.Contains(t, out, "character device")
}

// grep given a FIFO as its path refuses it, rg or not (rg would read it
// and wait for a writer for ever).
func TestGrepRefusesAFIFOPath(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	out, isErr := runWithin(t, context.Background(), dir, "grep", map[string]any{"pattern": "x", "path": "pipe"})
	assert.True(t, isErr)
	assert.Contains(t, out, "named pipe")
}

// A tiny PNG that declares a 100,000 × 100,000 picture is not decoded
// (that would take 40 GB): the image is left out with a note.
func TestReadImageBombIsNotDecoded(t *testing.T) {
	var png bytes.Buffer
	png.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], 100_000)
	binary.BigEndian.PutUint32(ihdr[4:], 100_000)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	chunk := func(typ string, data []byte) {
		_ = binary.Write(&png, binary.BigEndian, uint32(len(data)))
		png.WriteString(typ)
		png.Write(data)
		_ = binary.Write(&png, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	chunk("IHDR", ihdr)
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	chunk("IEND", nil)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bomb.png"), png.Bytes(), 0o644))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, isErr := runWithin(t, context.Background(), dir, "read", map[string]any{"path": "bomb.png"})
	runtime.ReadMemStats(&after)
	assert.False(t, isErr)
	assert.Contains(t, out, "Image omitted")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20))
}
