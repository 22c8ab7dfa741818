package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// Shell runs shell commands for the bash tool and [RunShell] (pi's
// BashOperations). Implement it to run commands remotely; [LocalShell]
// runs them on this machine.
type Shell interface {
	// Exec runs req.Command in req.Dir, writing stdout and stderr to
	// req.Output, until the command exits or ctx is done. When ctx is done
	// it stops the command and everything it started and returns ctx's
	// error. exitCode is nil when the command did not exit on its own
	// (killed by a signal).
	Exec(ctx context.Context, req ExecRequest) (exitCode *int, err error)
}

// ExecRequest is one command for a [Shell].
type ExecRequest struct {
	Command string
	Dir     string
	// Env is the environment; nil means the current process's.
	Env    []string
	Output io.Writer
}

// LocalShell runs commands with `bash -c` (or `sh -c` where there is no
// bash) in a process group of their own, so stopping a command stops its
// children too.
type LocalShell struct {
	// Path is the shell to run; empty means /bin/bash, then bash on PATH,
	// then sh.
	Path string
	// KillGrace is how long a stopped command has between SIGTERM and
	// SIGKILL; zero means one second.
	KillGrace time.Duration
	// Start, when set, starts each command in place of cmd.Start (a
	// [Sandbox] starting it confined); a command it fails for does not
	// run.
	Start func(*exec.Cmd) error
}

var _ Shell = LocalShell{}

// pipeGrace is how long Exec waits, after the shell exits, for output to
// stop arriving: background processes that inherited the pipe and keep it
// open without writing are then let go of. Output that is still flowing
// (a slow reader on a loaded machine) is read to its end.
const pipeGrace = 100 * time.Millisecond

// drainCap bounds that reading: a background process that keeps writing
// does not hold the command open for longer.
const drainCap = 3 * time.Second

func (s LocalShell) shell() (string, error) {
	if s.Path != "" {
		if _, err := os.Stat(s.Path); err != nil {
			return "", fmt.Errorf("shell %s: %w", s.Path, err)
		}
		return s.Path, nil
	}
	if _, err := os.Stat("/bin/bash"); err == nil {
		return "/bin/bash", nil
	}
	if p, err := exec.LookPath("bash"); err == nil {
		return p, nil
	}
	return "sh", nil
}

func (s LocalShell) Exec(ctx context.Context, req ExecRequest) (*int, error) {
	if info, err := os.Stat(req.Dir); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("%w: %s", ErrNoWorkDir, req.Dir)
	}
	sh, err := s.shell()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(sh, "-c", req.Command)
	cmd.Dir = req.Dir
	cmd.Env = req.Env
	out := req.Output
	if out == nil {
		out = io.Discard
	}
	// One pipe for both streams keeps their interleaving. gopi reads it
	// itself (not os/exec, whose WaitDelay would cut output still in the
	// pipe when the reader falls behind).
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", sh, err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	ownProcessGroup(cmd)
	if s.Start != nil {
		err = s.Start(cmd)
	} else {
		err = cmd.Start()
	}
	_ = pw.Close()
	if err != nil {
		_ = pr.Close()
		return nil, fmt.Errorf("start %s: %w", sh, err)
	}
	pid := cmd.Process.Pid
	started.add(pid)
	defer started.settle(pid)
	var copied atomic.Int64
	copyDone := make(chan struct{})
	go func() {
		defer close(copyDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := pr.Read(buf)
			if n > 0 {
				_, _ = out.Write(buf[:n])
				copied.Add(int64(n))
			}
			if err != nil {
				return
			}
		}
	}()
	// drain reads on until the pipe ends, stays quiet for pipeGrace, or
	// drainCap has passed.
	drain := func() {
		defer func() { _ = pr.Close() }()
		deadline := time.Now().Add(drainCap)
		for {
			last := copied.Load()
			t := time.NewTimer(pipeGrace)
			select {
			case <-copyDone:
				t.Stop()
				return
			case <-t.C:
			}
			if copied.Load() == last || time.Now().After(deadline) {
				_ = pr.Close()
				<-copyDone
				return
			}
		}
	}

	var waitErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		waitErr = cmd.Wait()
	}()

	select {
	case <-done:
		drain()
		return exitCode(cmd, waitErr)
	case <-ctx.Done():
	}
	grace := s.KillGrace
	if grace <= 0 {
		grace = time.Second
	}
	killGroup(pid, false)
	timer := time.NewTimer(grace)
	select {
	case <-done:
	case <-timer.C:
	}
	timer.Stop()
	// Whatever ignored SIGTERM, the shell's or a detached child's, goes now.
	killGroup(pid, true)
	<-done
	drain()
	return nil, ctx.Err()
}

func exitCode(cmd *exec.Cmd, err error) (*int, error) {
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		return nil, fmt.Errorf("wait for shell: %w", err)
	}
	code := cmd.ProcessState.ExitCode()
	if code < 0 {
		return nil, nil
	}
	return &code, nil
}

// ShellOptions configure [RunShell].
type ShellOptions struct {
	Command string
	Dir     string
	// Env is the environment; nil means the current process's.
	Env []string
	// Timeout stops the command after this long; zero means never.
	Timeout time.Duration
	// Shell runs the command; nil means [LocalShell].
	Shell Shell
	// Sanitize strips terminal escapes, control characters and carriage
	// returns from the output (what the RPC bash command shows), instead
	// of keeping it byte for byte (what the bash tool returns).
	Sanitize bool
	// Limits bound the kept output; zero means [MaxLines] and [MaxBytes].
	Limits Limits
	// TempDir receives the full output file of a truncated output; empty
	// means the system temp dir. TempPrefix names it ("gopi-bash").
	TempDir    string
	TempPrefix string
	// OnChunk, if set, receives every piece of output as it arrives
	// (sanitized when Sanitize is set), in order.
	OnChunk func(text string)
	// OnUpdate, if set, receives the accumulated output at most every
	// UpdateInterval (default 100ms), and once more at the end if
	// anything changed. It is called from one goroutine at a time.
	OnUpdate       func(ShellProgress)
	UpdateInterval time.Duration
	// FullOutputMax, when positive, has RunShell return the whole output
	// too ([ShellResult.FullOutput]), up to that many bytes.
	FullOutputMax int
}

// ShellProgress is the output so far of a running command.
type ShellProgress struct {
	// Truncation holds the tail-truncated output in Content.
	Truncation Truncation
	// FullOutputPath names the file holding the whole output once it
	// outgrew the limits.
	FullOutputPath string
}

// ShellResult is the outcome of [RunShell].
type ShellResult struct {
	// Output is the end of the combined stdout and stderr, within the
	// limits.
	Output string
	// ExitCode is nil when the command was cancelled, timed out or was
	// killed by a signal.
	ExitCode  *int
	Cancelled bool
	TimedOut  bool
	// Truncated says Output lost its beginning; FullOutputPath then names
	// the file holding the whole output.
	Truncated      bool
	FullOutputPath string
	Truncation     Truncation
	// LastLineBytes is the size of the output's last line, for the note
	// shown when only part of that line fits.
	LastLineBytes int
	// FullOutput is the whole output, not cut to the display limits, when
	// ShellOptions.FullOutputMax asked for it. FullOutputCut says it was
	// over that many bytes and kept only its first and last halves, with
	// a note of what was left out between them (or, when the full output
	// file could not be read, that FullOutput is only Output).
	FullOutput    string
	FullOutputCut bool
}

// RunShell runs a command to the end, streaming its output, and returns
// what it printed within the limits. Cancelling ctx or running past the
// timeout stops the command's whole process group; RunShell then returns
// promptly with Cancelled or TimedOut set and a nil error. An error means
// the command could not be run at all.
func RunShell(ctx context.Context, opts ShellOptions) (ShellResult, error) {
	sh := opts.Shell
	if sh == nil {
		sh = LocalShell{}
	}
	out := newOutputBuffer(opts.Limits, opts.TempDir, opts.TempPrefix)
	runCtx := ctx
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(ctx, opts.Timeout, errShellTimeout)
		defer cancel()
	}

	w := &shellWriter{out: out, onChunk: opts.OnChunk, kick: make(chan struct{}, 1)}
	if opts.Sanitize {
		w.san = &sanitizer{}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if opts.OnUpdate != nil {
		interval := opts.UpdateInterval
		if interval <= 0 {
			interval = 100 * time.Millisecond
		}
		wg.Go(func() { w.pushUpdates(stop, interval, opts.OnUpdate) })
	}

	code, err := sh.Exec(runCtx, ExecRequest{Command: opts.Command, Dir: opts.Dir, Env: opts.Env, Output: w})
	close(stop)
	wg.Wait()
	w.flush()
	if opts.OnUpdate != nil && out.takeDirty() {
		snap := out.snapshot()
		opts.OnUpdate(ShellProgress{Truncation: snap.Truncation, FullOutputPath: snap.FullOutputPath})
	}
	fileErr := out.finish()
	snap := out.snapshot()
	res := ShellResult{
		Output:         snap.Truncation.Content,
		ExitCode:       code,
		Truncated:      snap.Truncation.Truncated,
		FullOutputPath: snap.FullOutputPath,
		Truncation:     snap.Truncation,
		LastLineBytes:  snap.LastLineBytes,
	}
	switch {
	case ctx.Err() != nil:
		res.Cancelled, res.ExitCode = true, nil
	case errors.Is(context.Cause(runCtx), errShellTimeout):
		res.TimedOut, res.ExitCode = true, nil
	case err != nil:
		return res, err
	}
	if fileErr != nil && res.Truncated {
		// The output itself is fine; only the full copy is missing.
		res.FullOutputPath = ""
	}
	if opts.FullOutputMax > 0 {
		var fullErr error
		res.FullOutput, res.FullOutputCut, fullErr = out.full(opts.FullOutputMax)
		if fullErr != nil {
			res.FullOutput, res.FullOutputCut = res.Output, true
		}
	}
	return res, nil
}

// shellWriter feeds a command's output to the buffer, the chunk callback
// and the update pusher.
type shellWriter struct {
	out     *outputBuffer
	onChunk func(string)
	kick    chan struct{}

	mu  sync.Mutex // guards san and serialises onChunk
	san *sanitizer
}

func (w *shellWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.emit(p, false)
	select {
	case w.kick <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *shellWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.san != nil {
		w.emit(nil, true)
	}
}

func (w *shellWriter) emit(p []byte, final bool) {
	if w.san != nil {
		text := w.san.feed(p, final)
		if text == "" {
			return
		}
		p = []byte(text)
	}
	if len(p) == 0 {
		return
	}
	_, _ = w.out.Write(p)
	if w.onChunk != nil {
		w.onChunk(string(p))
	}
}

// pushUpdates sends snapshots to onUpdate at most once per interval while
// output keeps arriving, until stop closes.
func (w *shellWriter) pushUpdates(stop <-chan struct{}, interval time.Duration, onUpdate func(ShellProgress)) {
	var last time.Time
	for {
		select {
		case <-stop:
			return
		case <-w.kick:
		}
		if wait := interval - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-stop:
				t.Stop()
				return
			case <-t.C:
			}
		}
		if w.out.takeDirty() {
			last = time.Now()
			snap := w.out.snapshot()
			onUpdate(ShellProgress{Truncation: snap.Truncation, FullOutputPath: snap.FullOutputPath})
		}
	}
}
