//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/rpc"
)

// Issue 17: files a careless model (or user) points gopi at, through the
// built binary.

// read on a FIFO used to wedge the session (streaming for ever), and read
// on a 1 GB file to load all of it. Both runs now end: the FIFO with an
// error result, the big file with its first-line note.
func TestRPCReadOnAFIFOAndAHugeFileEnds(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("t1", "read", `{"path":"pipe"}`), llmtest.Call("t2", "read", `{"path":"huge.bin"}`)),
		llmtest.Text("done"),
	)
	require.NoError(t, syscall.Mkfifo(filepath.Join(w.cwd, "pipe"), 0o644))
	f, err := os.Create(filepath.Join(w.cwd, "huge.bin"))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30))
	require.NoError(t, f.Close())

	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "read them"})
	rs := p.until(func(r record) bool { return r.is("agent_settled") })
	results := map[string]record{}
	for _, r := range rs {
		if r.is("tool_execution_end") {
			results[r.str("toolCallId")] = r
		}
	}
	require.Len(t, results, 2, p.transcript())
	assert.Equal(t, true, results["t1"]["isError"])
	assert.Contains(t, toolText(results["t1"]), "named pipe")
	assert.Equal(t, false, results["t2"]["isError"])
	assert.Contains(t, toolText(results["t2"]), "Line 1 is 1024.0MB")
	assert.Equal(t, 0, p.exit())
}

func toolText(r record) string {
	var b strings.Builder
	for _, c := range r.obj("result")["content"].([]any) {
		b.WriteString(c.(map[string]any)["text"].(string))
	}
	return b.String()
}

// export_html used to replace a symlink with a regular file, a FIFO or
// device outright, and a 0600 file with a 0644 one.
func TestRPCExportKeepsTheTargetsWays(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("an answer"))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "hi"})
	p.until(func(r record) bool { return r.is("agent_settled") })
	dir := t.TempDir()

	// Through a symlink: the target changes, the link stays.
	target := filepath.Join(dir, "real.html")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o600))
	link := filepath.Join(dir, "link.html")
	require.NoError(t, os.Symlink(target, link))
	other := filepath.Join(dir, "hard.html")
	require.NoError(t, os.Link(target, other))
	p.ok("2", map[string]any{"type": "export_html", "outputPath": link})
	li, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, li.Mode()&os.ModeSymlink, "the link was replaced")
	data, err := os.ReadFile(other)
	require.NoError(t, err)
	assert.Contains(t, string(data), "an answer", "the hard link no longer shares the file")
	info, err := os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the export loosened the file's mode")

	// A FIFO is refused (at once: nothing reads it) and left alone.
	fifo := filepath.Join(dir, "pipe.html")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	r := p.call("3", map[string]any{"type": "export_html", "outputPath": fifo})
	assert.Equal(t, false, r["success"])
	assert.Contains(t, r.str("error"), "named pipe")
	fi, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeNamedPipe)

	// So is a device: a copy of /dev/null's node in the test's directory
	// (as root; a regression must not replace the real one).
	dev := filepath.Join(dir, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		r = p.call("4", map[string]any{"type": "export_html", "outputPath": dev})
		assert.Equal(t, false, r["success"])
		assert.Contains(t, r.str("error"), "character device")
		fi, err = os.Lstat(dev)
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode()&os.ModeCharDevice, "the device node is still a device")
	} else {
		t.Logf("no device node (%v): that case is not run", err)
	}
	assert.Equal(t, 0, p.exit())
}

// abort during a read of a huge file used to leave the read running to the
// end. Now the run ends as aborted while the file is still being read.
func TestRPCAbortEndsAReadOfAHugeFile(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.ToolCalls(llmtest.Call("t1", "read", `{"path":"huge.bin"}`)), llmtest.Text("unused"))
	f, err := os.Create(filepath.Join(w.cwd, "huge.bin"))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<40)) // 1 TB of nothing: a whole pass would take minutes
	require.NoError(t, f.Close())
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "read it"})
	p.until(func(r record) bool { return r.is("tool_execution_start") })
	p.send(map[string]any{"id": "2", "type": "abort"})
	// abort answers once the run has wound down.
	rs := p.until(func(r record) bool { return r.is("response") && r["id"] == "2" })
	var ended, settled bool
	for _, r := range rs {
		if r.is("tool_execution_end") {
			ended = true
			assert.Contains(t, toolText(r), "aborted")
		}
		if r.is("agent_settled") {
			settled = true
			assert.Equal(t, true, r["aborted"])
		}
	}
	assert.True(t, ended && settled, p.transcript())
	assert.Equal(t, 0, p.exit())
}

// The Go grep (what runs where rg is not installed) skips a FIFO and
// streams a big file, through the binary with no rg on PATH.
func TestRPCGrepWithoutRipgrepSkipsAFIFO(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.ToolCalls(llmtest.Call("t1", "grep", `{"pattern":"needle"}`)), llmtest.Text("done"))
	require.NoError(t, syscall.Mkfifo(filepath.Join(w.cwd, "pipe"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "a.txt"), []byte("hay\nneedle\n"), 0o644))
	bin := t.TempDir() // a PATH with a shell and nothing else
	for _, tool := range []string{"sh", "bash"} {
		if path, err := exec.LookPath(tool); err == nil {
			require.NoError(t, os.Symlink(path, filepath.Join(bin, tool)))
		}
	}
	p := launchArgv(t, w.cwd, w.agentDir, rpc.FramingNewline, []string{"PATH=" + bin},
		gopiBinary(t), "--mode", "rpc", "--model", "scripted/scripted-1", "--tools", "read,grep")
	p.ok("1", map[string]any{"type": "prompt", "message": "find it"})
	rs := p.until(func(r record) bool { return r.is("agent_settled") })
	var out string
	for _, r := range rs {
		if r.is("tool_execution_end") {
			out = toolText(r)
		}
	}
	assert.Contains(t, out, "a.txt:2: needle")
	assert.Equal(t, 0, p.exit())
}

// Files gopi reads on its own account (AGENTS.md, settings.json) may be
// FIFOs a model made with bash: gopi starts, warns and serves instead of
// blocking on them.
func TestRPCStartsWithFIFOsWhereItsOwnFilesGo(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("still fine"))
	require.NoError(t, syscall.Mkfifo(filepath.Join(w.cwd, "AGENTS.md"), 0o644))
	w.trustProject()
	require.NoError(t, os.MkdirAll(filepath.Join(w.cwd, ".pi"), 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(w.cwd, ".pi", "settings.json"), 0o644))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "hi"})
	p.until(func(r record) bool { return r.is("agent_settled") })
	assert.Equal(t, "still fine", p.ok("2", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)["text"])
	assert.Equal(t, 0, p.exit())
	assert.Contains(t, p.stderr.String(), "named pipe")
}
