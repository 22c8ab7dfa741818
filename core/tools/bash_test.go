package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/internal/testenv"
)

func TestBashOutput(t *testing.T) {
	dir := t.TempDir()
	res := run(t, dir, "bash", map[string]any{"command": "echo hello; echo err >&2; pwd"})
	require.False(t, res.IsError)
	require.Equal(t, "hello\nerr\n"+dir+"\n", text(res))
	require.Nil(t, res.Details)

	res = run(t, dir, "bash", map[string]any{"command": "true"})
	require.Equal(t, "(no output)", text(res))
}

func TestBashExitCode(t *testing.T) {
	res := run(t, t.TempDir(), "bash", map[string]any{"command": "echo out; exit 3"})
	require.True(t, res.IsError)
	require.Equal(t, "out\n\n\nCommand exited with code 3", text(res))
}

func TestBashCommandPrefix(t *testing.T) {
	res := run(t, t.TempDir(), "bash", map[string]any{"command": "echo $GREETING"}, WithCommandPrefix("GREETING=hi"))
	require.Equal(t, "hi\n", text(res))
}

func TestBashStreamsUpdates(t *testing.T) {
	res, updates := runUpdates(t, context.Background(), t.TempDir(), "bash",
		map[string]any{"command": "echo one; sleep 0.5; echo two"})
	require.False(t, res.IsError)
	require.Equal(t, "one\ntwo\n", text(res))
	require.GreaterOrEqual(t, len(updates), 3)
	require.Empty(t, updates[0].Content, "the first update announces the run")
	sawPartial := false
	for _, u := range updates[1:] {
		if text(u) == "one\n" {
			sawPartial = true
		}
		require.Equal(t, BashDetails{}, u.Details)
	}
	require.True(t, sawPartial, "output must stream before the command ends: %v", updates)
	require.Equal(t, "one\ntwo\n", text(updates[len(updates)-1]))
}

// processGone reports whether pid has exited (a zombie counts as gone:
// nothing may reap it inside a container).
func processGone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) != nil
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d survived", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBashTimeoutKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	start := time.Now()
	res := run(t, dir, "bash", map[string]any{
		"command": "echo started; sleep 30 & echo $! > " + pidFile + "; sleep 30",
		"timeout": 0.5,
	})
	require.Less(t, time.Since(start), 5*time.Second)
	require.True(t, res.IsError)
	require.Equal(t, "started\n\n\nCommand timed out after 0.5 seconds", text(res))
	waitGone(t, testenv.WaitPID(t, pidFile, 3*time.Second))
}

func TestBashCancelKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		testenv.WaitPID(t, pidFile, 3*time.Second)
		cancel()
	})
	start := time.Now()
	res, _ := runUpdates(t, ctx, dir, "bash", map[string]any{
		"command": "sleep 30 & echo $! > " + pidFile + "; trap '' TERM; sleep 30",
	})
	wg.Wait()
	require.Less(t, time.Since(start), 5*time.Second)
	require.True(t, res.IsError)
	require.Equal(t, "Command aborted", text(res))
	waitGone(t, testenv.WaitPID(t, pidFile, 3*time.Second))
}

func TestBashBackgroundChildDoesNotBlock(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	start := time.Now()
	res := run(t, dir, "bash", map[string]any{"command": "sleep 30 & echo $! > " + pidFile + "; echo done"})
	require.Less(t, time.Since(start), 5*time.Second)
	require.Equal(t, "done\n", text(res))
	pid := testenv.WaitPID(t, pidFile, 3*time.Second)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
}

func TestBashTruncatesLargeOutput(t *testing.T) {
	tmp := t.TempDir()
	res, updates := runUpdates(t, context.Background(), t.TempDir(), "bash",
		map[string]any{"command": "seq 1 5000"}, WithTempDir(tmp))
	require.False(t, res.IsError)
	d := res.Details.(BashDetails)
	require.NotNil(t, d.Truncation)
	require.True(t, d.Truncation.Truncated)
	require.Equal(t, TruncatedByLines, d.Truncation.TruncatedBy)
	require.Equal(t, 5000, d.Truncation.TotalLines, "a trailing newline starts no line, as pi counts")
	require.Equal(t, 2000, d.Truncation.OutputLines)
	require.Equal(t, tmp, filepath.Dir(d.FullOutputPath))
	out := text(res)
	require.True(t, strings.HasPrefix(out, "3001\n"), out[:20])
	require.True(t, strings.HasSuffix(out, "5000\n\n[Showing lines 3001-5000 of 5000. Full output: "+d.FullOutputPath+"]"))
	full, err := os.ReadFile(d.FullOutputPath)
	require.NoError(t, err)
	require.Equal(t, 5000, strings.Count(string(full), "\n"))
	require.True(t, strings.HasPrefix(string(full), "1\n2\n3\n"))
	last := updates[len(updates)-1].Details.(BashDetails)
	require.Equal(t, d.FullOutputPath, last.FullOutputPath)
}

func TestBashTruncatesByBytes(t *testing.T) {
	res := run(t, t.TempDir(), "bash", map[string]any{"command": "head -c 200000 /dev/zero | tr '\\0' 'x'"},
		WithTempDir(t.TempDir()))
	d := res.Details.(BashDetails)
	require.True(t, d.Truncation.LastLinePartial)
	require.Equal(t, MaxBytes, d.Truncation.OutputBytes)
	require.Contains(t, text(res), "[Showing last 50.0KB of line 1 (line is 195.3KB). Full output: ")
}

func TestRunShellSanitizes(t *testing.T) {
	var mu sync.Mutex
	var chunks []string
	res, err := RunShell(context.Background(), ShellOptions{
		Command:  `printf '\033[31mred\033[0m\r\nplain\x01\n'`,
		Dir:      t.TempDir(),
		Sanitize: true,
		OnChunk: func(s string) {
			mu.Lock()
			chunks = append(chunks, s)
			mu.Unlock()
		},
	})
	require.NoError(t, err)
	require.Equal(t, "red\nplain\n", res.Output)
	require.Equal(t, 0, *res.ExitCode)
	require.Equal(t, "red\nplain\n", strings.Join(chunks, ""))
}

func TestRunShellMissingDir(t *testing.T) {
	_, err := RunShell(context.Background(), ShellOptions{Command: "true", Dir: filepath.Join(t.TempDir(), "gone")})
	require.ErrorContains(t, err, "working directory does not exist")
}

func TestSanitizerSplitInput(t *testing.T) {
	var s sanitizer
	in := []byte("a\x1b[3")
	got := s.feed(in, false)
	got += s.feed([]byte("1mé"[:3]), false)
	got += s.feed([]byte("1mé"[3:]), false)
	got += s.feed(nil, true)
	require.Equal(t, "aé", got)
}

// slowWriter takes its time with every write, as a reader on a loaded
// machine does.
type slowWriter struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(80 * time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// Output still in the pipe when the shell exits is read to its end, however
// slow the reader: it used to be cut 100 ms after the exit.
func TestExecReadsOutputToItsEndWithASlowReader(t *testing.T) {
	w := &slowWriter{}
	code, err := LocalShell{}.Exec(context.Background(), ExecRequest{
		Command: "head -c 300000 /dev/zero | tr '\\0' x; echo END",
		Dir:     t.TempDir(),
		Output:  w,
	})
	require.NoError(t, err)
	require.NotNil(t, code)
	require.Equal(t, 0, *code)
	out := w.buf.String()
	require.Equal(t, 300004, len(out))
	require.True(t, strings.HasSuffix(out, "xEND\n"))
}

// bash's structured content (pi 1.5) holds the whole output, not the
// model's tail-truncated view, with the exit code and the wall time; only
// a command that exited on its own has it.
func TestBashStructuredContent(t *testing.T) {
	dir := t.TempDir()
	res := run(t, dir, "bash", map[string]any{"command": "echo hello; echo err >&2"})
	out, ok := res.StructuredContent.(BashOutput)
	require.True(t, ok, "%#v", res.StructuredContent)
	require.Equal(t, "hello\nerr\n", out.Output)
	require.False(t, out.Truncated)
	require.Empty(t, out.FullOutputPath)
	require.Equal(t, 0, out.ExitCode)
	require.GreaterOrEqual(t, out.WallTimeSeconds, 0.0)
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	require.Contains(t, string(raw), `"structuredContent":{"output":"hello\nerr\n","truncated":false,"exit_code":0,"wall_time_seconds":`)

	// An empty output is empty here, not the model's "(no output)".
	res = run(t, dir, "bash", map[string]any{"command": "exit 3"})
	require.True(t, res.IsError)
	require.Equal(t, BashOutput{ExitCode: 3, WallTimeSeconds: res.StructuredContent.(BashOutput).WallTimeSeconds}, res.StructuredContent)

	// Over the display limits but within BashOutputMax: all of it.
	res = run(t, dir, "bash", map[string]any{"command": "seq 1 5000"}, WithTempDir(t.TempDir()))
	out = res.StructuredContent.(BashOutput)
	require.True(t, res.Details.(BashDetails).Truncation.Truncated)
	require.False(t, out.Truncated)
	require.Empty(t, out.FullOutputPath)
	require.True(t, strings.HasPrefix(out.Output, "1\n2\n3\n"))
	require.Equal(t, 5000, strings.Count(out.Output, "\n"))

	// Over BashOutputMax: the first and last halves, cut to whole
	// characters, and the file with the rest.
	res = run(t, dir, "bash", map[string]any{"command": "printf 'é%.0s' $(seq 1 600000); echo; echo end"}, WithTempDir(t.TempDir()))
	out = res.StructuredContent.(BashOutput)
	require.True(t, out.Truncated)
	require.Equal(t, res.Details.(BashDetails).FullOutputPath, out.FullOutputPath)
	require.NotEmpty(t, out.FullOutputPath)
	head, tail, found := strings.Cut(out.Output, "\n\n[... ")
	require.True(t, found)
	require.True(t, utf8.ValidString(out.Output))
	require.Equal(t, strings.Repeat("é", BashOutputMax/4), head)
	omitted := 600000*2 + len("\nend\n") - BashOutputMax
	require.True(t, strings.HasPrefix(tail, fmt.Sprintf("%d bytes omitted ...]\n\n", omitted)), tail[:40])
	require.True(t, strings.HasSuffix(tail, "é\nend\n"))

	// No exit of its own: no structured content.
	res = run(t, dir, "bash", map[string]any{"command": "echo started; sleep 30", "timeout": 0.3})
	require.True(t, res.IsError)
	require.Nil(t, res.StructuredContent)
	res = run(t, dir, "bash", map[string]any{"command": "echo dying; kill -KILL $$"})
	require.True(t, res.IsError)
	require.Equal(t, "dying\n\n\nCommand terminated without an exit code", text(res))
	require.Nil(t, res.StructuredContent)
}
