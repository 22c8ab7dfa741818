package ext

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopi-dev/gopi/internal/rpccodec"
	"go.lsp.dev/jsonrpc2"
)

// hostFiles are the extension host's script and the module of method
// names it imports (generated from protocol.go).
//
//go:embed nodehost/host.mjs nodehost/methods.gen.mjs
var hostFiles embed.FS

// NodeHost runs pi extensions in a Node process (nodehost/host.mjs) and
// talks to it over a private pair of pipes (fds 3 and 4 of the child),
// never gopi's stdout; a second pair (fds 5 and 6) carries the host's
// [MethodSpec.Sync] requests. The host's own stdout and stderr go to Log.
type NodeHost struct {
	// Runtime is the Node and pi package to use; when its Node is empty,
	// Start looks for one with Find (so the search, which runs node, is
	// part of the background start).
	Runtime Runtime
	Find    RuntimeOptions
	// Paths are the extensions to load, in order.
	Paths []string
	Cwd   string
	// FlagValues are values given on gopi's command line for flags
	// extensions register.
	FlagValues map[string]any
	// HookTimeout bounds a hook call (not a tool or a command); the clock
	// stops while the extension waits for a dialog's answer. Zero means
	// DefaultHookTimeout.
	HookTimeout time.Duration
	// LoadTimeout bounds loading; zero means DefaultLoadTimeout.
	LoadTimeout time.Duration
	// Log receives the host's output, a line at a time.
	Log io.Writer
	// ScriptDir is where the host script is written; "" means the user's
	// cache directory.
	ScriptDir string
	// Untrusted says the project is not trusted: ctx.isProjectTrusted()
	// answers false.
	Untrusted bool

	peer    Peer
	rid     atomic.Int64
	dialogs atomic.Int64
	// wg owns the goroutines n starts for its processes (each one's wait,
	// its notification queue, a retired one's stop); Close waits for them.
	wg sync.WaitGroup

	mu sync.Mutex // guards the fields below
	// closed is set once by Close: nothing starts after it.
	closed   bool
	proc     *hostProc
	restarts []time.Time
	gen      int
	updates  map[string]func(json.RawMessage)
	// restarting is closed when a restart after a crash has finished;
	// nil when none is under way.
	restarting chan struct{}
	// early is the process ProjectTrust started, until Start adopts it.
	early *hostProc
}

var _ Extension = (*NodeHost)(nil)

const (
	DefaultHookTimeout = 30 * time.Second
	DefaultLoadTimeout = 60 * time.Second
	// maxRestarts within restartWindow: more and the host stays down.
	maxRestarts   = 3
	restartWindow = time.Minute
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

// Start implements [Extension].
func (n *NodeHost) Start(ctx context.Context, peer Peer) (Registrations, error) {
	if err := hostUnsupported(); err != nil {
		return Registrations{}, err
	}
	n.mu.Lock()
	n.peer = peer
	n.updates = map[string]func(json.RawMessage){}
	early := n.early
	n.early = nil
	n.mu.Unlock()
	var p *hostProc
	var err error
	if early != nil {
		p, err = n.adopt(ctx, early)
	} else {
		if err := n.findRuntime(ctx); err != nil {
			return Registrations{}, err
		}
		p, err = n.spawn(ctx)
	}
	if err != nil {
		return Registrations{}, err
	}
	return p.regs, nil
}

func (n *NodeHost) findRuntime(ctx context.Context) error {
	if n.Runtime.Node != "" {
		return nil
	}
	rt, err := FindRuntime(ctx, n.Find)
	if err != nil {
		return err
	}
	n.Runtime = rt
	return nil
}

func (n *NodeHost) loadTimeout() time.Duration {
	if n.LoadTimeout == 0 {
		return DefaultLoadTimeout
	}
	return n.LoadTimeout
}

// ProjectTrust starts the host before gopi knows whether the project is
// trusted, loads n.Paths there (the extensions that may decide: the
// user's and the command line's, never the project's) and runs their
// project_trust handlers for cwd. Start later keeps that process and what
// it loaded, then loads the rest of n.Paths, which the caller may have
// changed meanwhile. Until then the host's requests are refused and its
// notifications wait. On error nothing is left running.
func (n *NodeHost) ProjectTrust(ctx context.Context, cwd string) (TrustAnswer, error) {
	if err := hostUnsupported(); err != nil {
		return TrustAnswer{}, err
	}
	if err := n.findRuntime(ctx); err != nil {
		return TrustAnswer{}, err
	}
	p, err := n.launch()
	if err != nil {
		return TrustAnswer{}, err
	}
	lctx, cancel := context.WithTimeout(ctx, n.loadTimeout())
	defer cancel()
	var ans TrustAnswer
	if err := n.callOn(lctx, p, HostProjectTrust, ProjectTrustParams{Cwd: cwd, Paths: n.Paths}, &ans); err != nil {
		n.kill(p)
		return TrustAnswer{}, fmt.Errorf("asking the extensions about the project's trust: %w%s", err, tailNote(p.stderrTail))
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		n.kill(p)
		return TrustAnswer{}, ErrStopped
	}
	n.early = p
	n.mu.Unlock()
	return ans, nil
}

// Reload implements [Reloader]: a new host process loads the extensions
// afresh and takes over every later call; the old one finishes the calls
// it has under way (the command that asked for the reload goes on in its
// old frame, as in pi) and is then stopped. If the new one fails to load,
// the old one stays.
func (n *NodeHost) Reload(ctx context.Context) (Registrations, error) {
	n.mu.Lock()
	old := n.proc
	n.mu.Unlock()
	p, err := n.spawn(ctx)
	if err != nil {
		n.mu.Lock()
		if n.proc == nil && !n.closed {
			n.proc = old
		}
		n.mu.Unlock()
		return Registrations{}, err
	}
	if old != nil {
		done := old.retire()
		stop := func() {
			select {
			case <-done:
			case <-old.exited:
			}
			n.kill(old)
		}
		if !n.goOwned(stop) {
			// Closed meanwhile: Close no longer knows old.
			n.kill(old)
		}
	}
	return p.regs, nil
}

// Generation counts the host's (re)starts; the state gopi mirrored into an
// earlier one is gone.
func (n *NodeHost) Generation() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.gen
}

// scriptPath writes the host's files to a directory named after their
// hash, once, and returns the script's path there.
func (n *NodeHost) scriptPath() (string, error) {
	base := n.ScriptDir
	if base == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		base = filepath.Join(cache, "gopi")
	}
	files, sum, err := hostScripts()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "extension-host-"+sum)
	script := filepath.Join(dir, "host.mjs")
	if sameFiles(dir, files) {
		return script, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("writing the extension host script: %w", err)
	}
	tmp, err := os.MkdirTemp(base, "extension-host-*.tmp")
	if err != nil {
		return "", fmt.Errorf("writing the extension host script: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return "", fmt.Errorf("writing the extension host script: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another gopi wrote it first, or a damaged copy is in the way.
		if sameFiles(dir, files) {
			return script, nil
		}
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("writing the extension host script: %w", err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			return "", fmt.Errorf("writing the extension host script: %w", err)
		}
	}
	return script, nil
}

// hostScripts are the embedded host files by name, and a short hash of
// them all.
func hostScripts() (map[string][]byte, string, error) {
	entries, err := hostFiles.ReadDir("nodehost")
	if err != nil {
		return nil, "", fmt.Errorf("reading the embedded extension host: %w", err)
	}
	files := map[string][]byte{}
	h := sha256.New()
	for _, e := range entries { // sorted by name
		b, err := hostFiles.ReadFile("nodehost/" + e.Name())
		if err != nil {
			return nil, "", fmt.Errorf("reading the embedded extension host: %w", err)
		}
		files[e.Name()] = b
		fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
		h.Write(b)
	}
	return files, hex.EncodeToString(h.Sum(nil)[:6]), nil
}

// sameFiles reports whether dir holds exactly files' contents.
func sameFiles(dir string, files map[string][]byte) bool {
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			return false
		}
	}
	return true
}

// goOwned runs f in a goroutine Close waits for; false, and f not run,
// once n is closed.
func (n *NodeHost) goOwned(f func()) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	n.wg.Go(f)
	return true
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

// serveSync answers the host's sync requests ([MethodSpec.Sync]) one at a
// time, as the host makes them, until its pipe closes. The host's thread
// waits for each answer, so every request gets one.
func (n *NodeHost) serveSync(p *hostProc) {
	sc := bufio.NewScanner(p.syncIn)
	sc.Buffer(nil, 64<<20)
	enc := json.NewEncoder(p.syncOut)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method Method          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		var res any
		err := json.Unmarshal(sc.Bytes(), &req)
		if err == nil {
			res, err = n.syncRequest(req.Method, req.Params)
		}
		ans := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		if err != nil {
			ans["error"] = wireError(err)
		} else {
			ans["result"] = res
		}
		if enc.Encode(ans) != nil {
			return
		}
	}
}

// syncRequest serves one sync request.
func (n *NodeHost) syncRequest(method Method, params json.RawMessage) (any, error) {
	if sp, ok := spec(PeerSide, method); !ok || !sp.Sync {
		return nil, fmt.Errorf("%w: %q is not a sync request", ErrNoMethod, method)
	}
	n.mu.Lock()
	peer := n.peer
	n.mu.Unlock()
	if peer == nil {
		return nil, fmt.Errorf("%w: %s is not available yet", errTrustPending, method)
	}
	return peer.Request(context.Background(), method, params)
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

func tailNote(t *tailWriter) string {
	if s := t.String(); s != "" {
		return "; its last output: " + s
	}
	return ""
}

// handler answers the host's calls. Requests run concurrently (a dialog
// may wait for the user). Notifications are delivered on the read loop,
// so each takes effect before the answer to the call that caused it, as
// in pi, and the peer must handle those without calling the host; the
// [MethodSpec.Queued] ones (they may start a run, whose hooks call the
// host and wait for answers on this read loop) go through the ordered
// queue instead.
func (n *NodeHost) handler(p *hostProc) jsonrpc2.Handler {
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		// The request borrows jsonrpc2's read buffer until the handler
		// returns (or calls Async): what outlives that is copied now. A
		// queued notification's method name read later would have been
		// overwritten by the next message (a sendUserMessage lost now and
		// then under load).
		method := Method(strings.Clone(req.Method()))
		params := append(json.RawMessage(nil), req.Params()...)
		sp, _ := spec(PeerSide, method)
		n.mu.Lock()
		peer := n.peer
		n.mu.Unlock()
		if !req.IsCall() {
			switch {
			case method == PeerReady:
			case sp.Queued || peer == nil:
				// Before Start there is no one to deliver to: the queue
				// keeps it until then.
				p.queue.push(method, params)
			default:
				n.deliver(method, params)
			}
			return nil, nil
		}
		// A command's session operations see the messages it sent before
		// them (sendMessage that starts a run, then waitForIdle). Only
		// those wait: a dialog or a model switch asked for from a hook
		// that a queued sendMessage is itself waiting on must not.
		seq := p.queue.count()
		jsonrpc2.Async(ctx)
		if sp.AfterQueue && !p.queue.waitFor(ctx, seq) {
			return nil, jsonrpc2.NewError(jsonrpc2.InternalError, errStopping.Error())
		}
		if peer == nil {
			return nil, jsonrpc2.NewError(jsonrpc2.InternalError, fmt.Sprintf("%s: %s is not available yet", errTrustPending, method))
		}
		if method == PeerUIAsk {
			n.dialogs.Add(1)
			defer n.dialogs.Add(-1)
		}
		res, err := peer.Request(jsonrpc2.DetachContext(ctx), method, params)
		if err != nil {
			return nil, wireError(err)
		}
		return res, nil
	}
}

// wireError is err as the host gets it: the JSON-RPC code of its kind,
// and its text.
func wireError(err error) error {
	code := jsonrpc2.InternalError
	switch {
	case errors.Is(err, ErrInvalidParams):
		code = jsonrpc2.InvalidParams
	case errors.Is(err, ErrNoMethod):
		code = jsonrpc2.MethodNotFound
	}
	return jsonrpc2.NewError(code, err.Error())
}

// deliver hands one notification to the peer (tool updates go to the
// call that waits for them).
func (n *NodeHost) deliver(method Method, params json.RawMessage) {
	n.mu.Lock()
	peer := n.peer
	n.mu.Unlock()
	if method == PeerToolUpdate {
		u, err := decode[ToolUpdateParams](method, params)
		if err != nil {
			peer.Notification(PeerError, mustJSON(ErrorEvent{ExtensionPath: "<extension host>", Event: string(method), Error: err.Error()}))
			return
		}
		n.mu.Lock()
		f := n.updates[u.ToolCallID]
		n.mu.Unlock()
		if f != nil {
			f(u.Partial)
		}
		return
	}
	peer.Notification(method, params)
}

// markExited notes that p has ended. Unless gopi stopped it, it crashed:
// p stops being the current process and, up to maxRestarts a minute, a
// restart is announced (the returned channel, closed when it is done), so
// that calls wait for it. crashed reports whether p crashed.
func (n *NodeHost) markExited(p *hostProc) (restarted chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed || n.proc != p {
		return nil
	}
	n.proc = nil
	now := time.Now()
	recent := n.restarts[:0]
	for _, t := range n.restarts {
		if now.Sub(t) < restartWindow {
			recent = append(recent, t)
		}
	}
	n.restarts = append(recent, now)
	p.crashed = true
	if len(n.restarts) <= maxRestarts {
		n.restarting = make(chan struct{})
		return n.restarting
	}
	return nil
}

// exited reports a crashed host and starts it again when markExited
// said so.
func (n *NodeHost) exited(p *hostProc, restarted chan struct{}) {
	if !p.crashed {
		return
	}
	again := restarted != nil
	if again {
		defer func() {
			n.mu.Lock()
			n.restarting = nil
			n.mu.Unlock()
			close(restarted)
		}()
	}
	n.mu.Lock()
	peer := n.peer
	n.mu.Unlock()
	how := "exited"
	if p.err != nil {
		how = p.err.Error()
	}
	msg := fmt.Sprintf("the extension host stopped (%s)%s", how, tailNote(p.stderrTail))
	if again {
		msg += "; restarting it"
	} else {
		msg += "; it crashed too often, so extensions stay off"
	}
	peer.Notification(PeerError, mustJSON(ErrorEvent{ExtensionPath: "<extension host>", Event: "host_exit", Error: msg}))
	if !again {
		peer.Notification(PeerStopped, nil)
		return
	}
	if _, err := n.spawn(context.Background()); err != nil {
		peer.Notification(PeerError, mustJSON(ErrorEvent{ExtensionPath: "<extension host>", Event: "host_restart", Error: err.Error()}))
		return
	}
	peer.Notification(PeerRestarted, nil)
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// current is the running host process; during a restart it waits for
// the new one.
func (n *NodeHost) current(ctx context.Context) (*hostProc, error) {
	for {
		n.mu.Lock()
		restarting, p, closed := n.restarting, n.proc, n.closed
		n.mu.Unlock()
		switch {
		case closed:
			return nil, ErrStopped
		case restarting != nil:
			select {
			case <-restarting:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case p == nil:
			return nil, errNotRunning
		default:
			select {
			case <-p.conn.Done():
				// It is going: wait until its end is known.
				select {
				case <-p.exited:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			default:
				return p, nil
			}
		}
	}
}

type untimedKey struct{}

// Untimed marks ctx so that a hook called with it has no timeout (a
// custom compaction may call a model).
func Untimed(ctx context.Context) context.Context { return context.WithValue(ctx, untimedKey{}, true) }

// Call implements [Extension].
func (n *NodeHost) Call(ctx context.Context, method Method, params, result any) error {
	p, err := n.current(ctx)
	if err != nil {
		return err
	}
	return n.callOn(ctx, p, method, params, result)
}

func (n *NodeHost) callOn(ctx context.Context, p *hostProc, method Method, params, result any) error {
	p.begin()
	defer p.end()
	b, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("extension call %s: %w", method, err)
	}
	rid := n.rid.Add(1)
	raw := withRID(b, rid)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if sp, _ := spec(HostSide, method); !sp.Untimed && ctx.Value(untimedKey{}) == nil {
		timeout := n.HookTimeout
		if timeout == 0 {
			timeout = DefaultHookTimeout
		}
		stop := make(chan struct{})
		var watch sync.WaitGroup
		watch.Go(func() { n.watchdog(timeout, stop, cancel) })
		defer func() {
			close(stop)
			watch.Wait()
		}()
	}
	var out json.RawMessage
	_, err = p.conn.Call(ctx, string(method), raw, &out)
	if err != nil {
		if ctx.Err() != nil {
			// Tell the handler to give up (ctx.signal, a tool's signal).
			_ = p.conn.Notify(context.Background(), string(HostCancel), CancelParams{RID: rid})
			if cause := context.Cause(ctx); cause != nil {
				err = cause
			}
		}
		select {
		case <-p.exited:
			err = fmt.Errorf("the extension host stopped during %s", method)
		default:
		}
		return fmt.Errorf("extension %s: %w", method, err)
	}
	if result != nil && len(out) > 0 {
		if err := json.Unmarshal(out, result); err != nil {
			return fmt.Errorf("extension %s: reading its answer: %w", method, err)
		}
	}
	return nil
}

// watchdog cancels a hook call after timeout, not counting time during
// which a dialog is open.
func (n *NodeHost) watchdog(timeout time.Duration, stop <-chan struct{}, cancel context.CancelCauseFunc) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if n.dialogs.Load() > 0 {
				t.Reset(timeout)
				continue
			}
			cancel(fmt.Errorf("%w (%s)", ErrHookTimeout, timeout))
			return
		}
	}
}

// withRID adds "rid" to a JSON object: the id the host knows a call by
// when gopi cancels it.
func withRID(raw json.RawMessage, rid int64) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return raw
	}
	body := bytes.TrimSpace(raw[1:])
	head := `{"rid":` + strconv.FormatInt(rid, 10)
	if len(body) > 0 && body[0] != '}' {
		head += ","
	}
	return append([]byte(head), body...)
}

// ExecuteTool runs an extension tool; update receives its partial results.
func (n *NodeHost) ExecuteTool(ctx context.Context, params ExecuteToolParams, update func(json.RawMessage), result any) error {
	n.mu.Lock()
	n.updates[params.ToolCallID] = update
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.updates, params.ToolCallID)
		n.mu.Unlock()
	}()
	err := n.Call(ctx, HostExecuteTool, params, result)
	// The tool's last updates were read before its answer: deliver them
	// before the tool counts as finished.
	n.delivered(ctx)
	return err
}

// delivered waits until the queued notifications read so far (sendMessage,
// a tool's updates) have been delivered, or ctx ends.
func (n *NodeHost) delivered(ctx context.Context) {
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	if p != nil {
		p.queue.waitFor(ctx, p.queue.count())
	}
}

// Notify implements [Extension]; with no host running it is dropped.
func (n *NodeHost) Notify(method Method, params any) {
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	if p == nil {
		return
	}
	_ = p.conn.Notify(context.Background(), string(method), params)
}

// Close implements [Extension]: the host's pipe closes, which ends it;
// what is left of its process group after a grace period is killed.
// Close returns once every goroutine n started has ended.
func (n *NodeHost) Close() error {
	n.mu.Lock()
	n.closed = true
	p, early := n.proc, n.early
	n.proc, n.early = nil, nil
	n.mu.Unlock()
	for _, q := range []*hostProc{p, early} {
		if q != nil {
			n.kill(q)
		}
	}
	n.wg.Wait()
	return nil
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

// orderedQueue delivers notifications one at a time, in order, without
// ever blocking the one who pushes.
type orderedQueue struct {
	mu        sync.Mutex
	cond      *sync.Cond
	items     []queued
	closed    bool
	pushed    int // items ever pushed
	delivered int // items ever delivered
}

type queued struct {
	method Method
	params json.RawMessage
}

func newOrderedQueue() *orderedQueue {
	q := &orderedQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *orderedQueue) push(method Method, params json.RawMessage) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.items = append(q.items, queued{method, params})
	q.pushed++
	q.cond.Broadcast()
}

// count is how many items have been pushed.
func (q *orderedQueue) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pushed
}

// waitFor waits until the first n items have been delivered; false if
// the queue closed or ctx ended first.
func (q *orderedQueue) waitFor(ctx context.Context, n int) bool {
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		q.cond.Broadcast()
		q.mu.Unlock()
	})
	defer stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.delivered < n {
		if q.closed || ctx.Err() != nil {
			return false
		}
		q.cond.Wait()
	}
	return true
}

func (q *orderedQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// run delivers until the queue is closed and drained.
func (q *orderedQueue) run(deliver func(Method, json.RawMessage)) {
	for {
		q.mu.Lock()
		for len(q.items) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.items) == 0 {
			q.mu.Unlock()
			return
		}
		it := q.items[0]
		q.items[0] = queued{}
		q.items = q.items[1:]
		q.mu.Unlock()
		deliver(it.method, it.params)
		q.mu.Lock()
		q.delivered++
		q.cond.Broadcast()
		q.mu.Unlock()
	}
}

// lineWriter writes whole lines to w with a prefix.
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (l *lineWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, b...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		_, _ = fmt.Fprintf(l.w, "%s%s\n", l.prefix, l.buf[:i])
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 64<<10 { // a huge line without a newline
		_, _ = fmt.Fprintf(l.w, "%s%s\n", l.prefix, l.buf)
		l.buf = l.buf[:0]
	}
	return len(b), nil
}

// tailWriter keeps the last max bytes written.
type tailWriter struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(b), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := bytes.TrimSpace(t.b)
	// The last few lines are what says why.
	sc := bufio.NewScanner(bytes.NewReader(s))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > 6 {
		lines = lines[len(lines)-6:]
	}
	return string(bytes.Join(toBytes(lines), []byte(" | ")))
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
