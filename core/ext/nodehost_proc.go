package ext

// This file owns one run of the Node process (hostProc): starting it with
// its four pipes, loading the extensions in it and making it the current
// one, counting the calls that keep a retired one alive, and stopping it.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/internal/rpccodec"
	"go.lsp.dev/jsonrpc2"
)

// hostProc is one run of the Node process.
type hostProc struct {
	cmd    *exec.Cmd
	conn   jsonrpc2.Conn
	exited chan struct{} // closed once the process has been waited for
	err    error         // how it exited, set before exited closes
	queue  *orderedQueue
	regs   Registrations
	// stderrTail keeps the host's last output, for the crash report.
	stderrTail *tailWriter
	crashed    bool // set before exited closes
	// syncIn and syncOut are gopi's ends of the sync pipes: the host's
	// requests come in on syncIn, their answers go out on syncOut.
	syncIn, syncOut *os.File

	callMu sync.Mutex // guards calls and retired
	calls  int        // calls to it under way
	// retired is closed when a reload replaced it and its last call has
	// ended: it may then be stopped.
	retired chan struct{}
}

// begin counts a call to p; end ends it, closing retired once a retired
// process has no call left.
func (p *hostProc) begin() {
	p.callMu.Lock()
	p.calls++
	p.callMu.Unlock()
}

func (p *hostProc) end() {
	p.callMu.Lock()
	defer p.callMu.Unlock()
	p.calls--
	p.releaseLocked()
}

// retire marks p as replaced; the returned channel closes once no call to
// it is under way.
func (p *hostProc) retire() <-chan struct{} {
	p.callMu.Lock()
	defer p.callMu.Unlock()
	p.retired = make(chan struct{})
	p.releaseLocked()
	return p.retired
}

func (p *hostProc) releaseLocked() {
	if p.retired != nil && p.calls == 0 {
		select {
		case <-p.retired:
		default:
			close(p.retired)
		}
	}
}

// launch starts a Node process and connects to it. Its notifications
// wait in its queue until adopt makes it the current process.
func (n *NodeHost) launch() (*hostProc, error) {
	n.mu.Lock()
	closed := n.closed
	n.mu.Unlock()
	if closed {
		return nil, ErrStopped
	}
	script, err := n.scriptPath()
	if err != nil {
		return nil, err
	}
	// The pipes to the host, from it, of its sync requests and of their
	// answers: the child's fds 3 to 6 are the ends it reads (3, 6) or
	// writes (4, 5).
	var child, ours [4]*os.File
	for i := range child {
		r, w, err := os.Pipe()
		if err != nil {
			closeFiles(child[:i])
			closeFiles(ours[:i])
			return nil, fmt.Errorf("starting the extension host: %w", err)
		}
		child[i], ours[i] = r, w
		if i == 1 || i == 2 {
			child[i], ours[i] = w, r
		}
	}
	log := n.Log
	if log == nil {
		log = io.Discard
	}
	tail := &tailWriter{max: 4096}
	out := io.MultiWriter(&lineWriter{w: log, prefix: "gopi: extension host: "}, tail)
	cmd := exec.Command(n.Runtime.Node, script, n.Runtime.PiPackage)
	cmd.Dir = n.Cwd
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = child[:]
	cmd.SysProcAttr = hostProcAttr()
	cmd.Env = append(os.Environ(), "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0")
	err = cmd.Start()
	closeFiles(child[:])
	if err != nil {
		closeFiles(ours[:])
		return nil, fmt.Errorf("starting the extension host (%s): %w", n.Runtime.Node, err)
	}
	p := &hostProc{cmd: cmd, exited: make(chan struct{}), stderrTail: tail, queue: newOrderedQueue(),
		syncIn: ours[2], syncOut: ours[3]}
	// The connection owns its read loop and the handlers it runs: its
	// Close (in kill) waits for them.
	p.conn = jsonrpc2.NewConn(jsonrpc2.NewNDJSONStream(&pipePair{r: ours[1], w: ours[0]}), jsonrpc2.WithCodec(rpccodec.Std{}))
	p.conn.Go(context.Background(), n.handler(p))
	wait := func() {
		p.err = cmd.Wait()
		restarted := n.markExited(p)
		close(p.exited)
		_ = p.conn.Close()
		// Ends serveSync, even if a child of the host holds the pipe.
		closeFiles([]*os.File{p.syncIn, p.syncOut})
		p.queue.close()
		n.exited(p, restarted)
	}
	if !n.goOwned(wait) {
		// Closed while it started: it goes at once.
		_ = p.conn.Close()
		killGroup(cmd)
		wait()
		return nil, ErrStopped
	}
	n.goOwned(func() { n.serveSync(p) })
	return p, nil
}

func closeFiles(fs []*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// spawn starts a Node process, loads the extensions in it and makes it
// the current one.
func (n *NodeHost) spawn(ctx context.Context) (*hostProc, error) {
	p, err := n.launch()
	if err != nil {
		return nil, err
	}
	return n.adopt(ctx, p)
}

// adopt makes p, a process launch started, the current one: its
// notifications go to the peer from now on, and it loads n.Paths
// (keeping what it loaded for ProjectTrust).
func (n *NodeHost) adopt(ctx context.Context, p *hostProc) (*hostProc, error) {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		n.kill(p)
		return nil, ErrStopped
	}
	// The queue's goroutine ends when the process does (its wait closes
	// the queue).
	n.wg.Go(func() { p.queue.run(n.deliver) })
	n.proc = p
	n.gen++
	n.mu.Unlock()

	lctx, cancel := context.WithTimeout(ctx, n.loadTimeout())
	defer cancel()
	params := InitializeParams{Cwd: n.Cwd, Paths: n.Paths, FlagValues: n.FlagValues,
		State: InitialState{Cwd: n.Cwd, ProjectTrusted: !n.Untrusted}}
	if err := n.callOn(lctx, p, HostInitialize, params, &p.regs); err != nil {
		n.mu.Lock()
		if n.proc == p {
			n.proc = nil
		}
		n.mu.Unlock()
		n.kill(p)
		return nil, fmt.Errorf("loading extensions in the host: %w%s", err, tailNote(p.stderrTail))
	}
	return p, nil
}

func (n *NodeHost) kill(p *hostProc) {
	_ = p.conn.Close()
	select {
	case <-p.exited:
	case <-time.After(2 * time.Second):
	}
	killGroup(p.cmd)
	<-p.exited
}

// pipePair is the two pipe ends gopi holds as one stream.
type pipePair struct {
	r *os.File
	w *os.File
}

func (p *pipePair) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipePair) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipePair) Close() error                { return errors.Join(p.w.Close(), p.r.Close()) }
