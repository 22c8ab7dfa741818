package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stopGrace is how long a stdio server has to exit after its stdin closes,
// and again after SIGTERM, before the next step (mcp.md: stdin, SIGTERM,
// then SIGKILL to the process group).
var stopGrace = 2 * time.Second

// stdioTransport runs a server as a child process in its own process group
// and speaks newline-delimited JSON over its stdin and stdout. The SDK's
// CommandTransport signals only the process itself; a server launched
// through a wrapper (npx, uvx) leaves its real process behind, so the
// group is stopped instead.
type stdioTransport struct {
	cmd *exec.Cmd
	// stderr keeps the end of what the server wrote to stderr, for
	// reports of a failed start.
	stderr *tailBuffer
	// wg owns the goroutine that waits for the process.
	wg *sync.WaitGroup
	// started receives the process once it runs.
	started func(*process)
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	// Pipes of our own, not cmd's: exec's pipes close when Wait returns,
	// which may be before the last line is read.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	t.cmd.Stdin, t.cmd.Stdout, t.cmd.Stderr = inR, outW, t.stderr
	ownGroup(t.cmd)
	err = t.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	p := &process{cmd: t.cmd, stdin: inW, stdout: outR, done: make(chan struct{})}
	t.wg.Go(func() {
		p.err = t.cmd.Wait()
		close(p.done)
	})
	if t.started != nil {
		t.started(p)
	}
	return (&sdk.IOTransport{Reader: outR, Writer: p}).Connect(ctx)
}

// process is a running stdio server. As the transport's writer it is
// closed when the session closes, and that stops the process.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	done   chan struct{} // closes once the process has exited
	err    error         // Wait's, once done is closed

	stopOnce sync.Once
	stopErr  error
}

func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close stops the server: its stdin closes, then it gets SIGTERM and
// SIGKILL, both sent to its process group, until it has exited. What the
// group still holds once the server is gone is killed too.
func (p *process) Close() error {
	p.stopOnce.Do(func() { p.stopErr = p.stop() })
	return p.stopErr
}

func (p *process) stop() error {
	defer p.stdout.Close()
	p.stdin.Close()
	pgid := p.cmd.Process.Pid
	exited := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-p.done:
			return true
		case <-t.C:
			return false
		}
	}
	if !exited(stopGrace) {
		terminateGroup(pgid)
		if !exited(stopGrace) {
			killGroup(pgid)
			if !exited(stopGrace) {
				return fmt.Errorf("process %d did not exit after SIGKILL", pgid)
			}
		}
	}
	// The server is gone; children it left in its group go with it.
	killGroup(pgid)
	var exit *exec.ExitError
	if errors.As(p.err, &exit) {
		return nil // a server stopped by a signal or failing on exit is still stopped
	}
	return p.err
}

// tailBuffer keeps the last bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex // guards buf
	buf []byte
}

const tailMax = 4 << 10

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - tailMax; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

var _ io.WriteCloser = (*process)(nil)
