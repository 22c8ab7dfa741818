package lspbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/internal/rpccodec"
	"github.com/gopi-dev/gopi/rpc"
)

// Runtime is the session runtime as the bridge drives it: the commands,
// plus where its events and dialogs go.
type Runtime interface {
	api.Server
	// Bind makes c the client for dialogs (nil detaches).
	Bind(c api.Client)
	// Subscribe delivers every event to f until unsubscribe is called.
	Subscribe(f func(api.Event)) (unsubscribe func())
}

// Reconfigure builds the runtime a client asked for in initialize: cwd is
// the workspace folder ("" keeps the current one), opts the
// initializationOptions. It replaces (and closes) the runtime served so far.
type Reconfigure func(ctx context.Context, cwd string, opts InitOptions) (Runtime, error)

// Options configure a [Bridge].
type Options struct {
	// Runtime serves commands until initialize asks for another.
	Runtime Runtime
	// Reconfigure, when set, lets initialize choose the workspace, model
	// and session; without it such requests fail with -32602.
	Reconfigure Reconfigure
	// Version is reported as serverInfo.version.
	Version string
	// Report receives problems nobody else hears about (a notification
	// that failed, a client that left); nil drops them.
	Report func(error)
}

// Bridge is one JSON-RPC 2.0 client connection. It implements [api.Client]
// for the runtime it serves.
type Bridge struct {
	opts Options

	// Set once by Serve before the connection starts.
	stream *stream
	jc     jsonrpc2.Conn
	ctx    context.Context // the connection's; ends with it
	cancel context.CancelCauseFunc
	prog   *progress
	sched  *api.Scheduler // runs the pi/ commands, in order
	// serving is sched once Serve has made it, for Drain.
	serving atomic.Pointer[api.Scheduler]

	mu          sync.Mutex // guards the fields below
	rt          Runtime
	unsubscribe func()
	caps        clientCaps
	fullUpdates bool
	// coalesce merges streamed deltas (initializationOptions.coalesceDeltasMs).
	coalesce    *coalescer
	initialized bool // initialize was answered
	// holding keeps events from the client until its first message, and
	// while initialize is answered (LSP has the server send nothing before
	// its response, and vscode-languageclient drops what comes earlier);
	// held are those events, sent in order once they may go (holdEvents).
	holding     bool
	held        []api.Event
	seenCommand bool // a pi/ request was handled
	shutdown    bool // shutdown was answered
	exited      bool // exit arrived
	inflight    map[jsonrpc2.ID]context.CancelFunc
	// open are the ids of requests whose response is not written yet. A
	// request that reuses one (or the id of the prompt whose run is
	// going) is refused: JSON-RPC ids must be unique among a client's
	// pending requests, and the bridge keys cancellation and a command's
	// after-response hook by them. An id is let go only once its
	// response is out (see wrote), not when its handler returns: jsonrpc2
	// writes the response after that, and a request read in between was
	// sent before the client could know the id was free.
	open map[jsonrpc2.ID]bool
	// awaiting is len(open), read without the lock on every write.
	awaiting atomic.Int32
	// runPrompt is the latest pi/prompt that started a run. It is kept
	// past agent_end on purpose: a retry or compaction may continue that
	// run, and cancelling it then must still abort; with nothing running,
	// an abort is harmless.
	runPrompt jsonrpc2.ID

	running atomic.Bool // between agent_start and agent_end

	afterMu sync.Mutex // guards after
	after   map[jsonrpc2.ID]func()

	heard sync.Once // the client's first message (handle)
}

var _ api.Client = (*Bridge)(nil)

// New returns a bridge serving opts.Runtime.
func New(opts Options) *Bridge {
	if opts.Report == nil {
		opts.Report = func(error) {}
	}
	return &Bridge{
		opts:     opts,
		holding:  true, // until the client's first message
		rt:       opts.Runtime,
		inflight: map[jsonrpc2.ID]context.CancelFunc{},
		open:     map[jsonrpc2.ID]bool{},
		after:    map[jsonrpc2.ID]func(){},
	}
}

// errExit is the connection's cancel cause after the exit notification.
var errExit = errors.New("the client sent exit")

// Drain returns once every request read so far has had its turn: its
// response written, a long one past its first step (api.Scheduler.Drain).
// Before Serve, and once the connection ends, it returns at once.
func (b *Bridge) Drain() {
	if s := b.serving.Load(); s != nil {
		s.Drain()
	}
}

// Serve answers the client on in and out until it sends exit, its input
// ends, or ctx is cancelled. It returns the process exit code LSP asks
// for: 1 for an exit that was not preceded by shutdown, 0 otherwise. When
// Serve returns, every request handler has returned, dialogs are resolved
// and the runtime is detached; the caller closes the runtime.
func (b *Bridge) Serve(ctx context.Context, in rpc.RecordReader, out *rpc.Writer) int {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(api.ErrShutdown)
	b.ctx, b.cancel = ctx, cancel
	// Commands run under the connection's context: its end cancels them.
	b.sched = api.NewScheduler(ctx, 0)
	b.serving.Store(b.sched)

	// Handler contexts derive from ctx, and the input's end cancels it:
	// jsonrpc2 itself leaves running handlers alone when the peer goes.
	s := newStream(in, out, func(err error) { cancel(fmt.Errorf("%w: input ended: %w", api.ErrShutdown, err)) }, b.wrote)
	b.stream = s
	b.jc = jsonrpc2.NewConn(s, jsonrpc2.WithCodec(rpccodec.Std{}), jsonrpc2.WithPreempter(preempter{b}))
	b.prog = newProgress(b)
	b.attach(b.opts.Runtime)
	b.jc.Go(ctx, b.guard(b.handle))

	select {
	case <-ctx.Done():
	case <-b.jc.Done():
	}
	cancel(api.ErrShutdown)
	b.mu.Lock()
	rt := b.rt
	b.mu.Unlock()
	// Stop the runtime's work so handlers waiting on it return.
	if rt != nil {
		_ = rt.Abort(context.Background())
	}
	b.detach()
	b.mu.Lock()
	co := b.coalesce
	b.mu.Unlock()
	if co != nil {
		co.stop()
	}
	b.prog.stop()
	_ = s.Close()
	if err := b.jc.Close(); err != nil {
		b.opts.Report(fmt.Errorf("closing the connection: %w", err))
	}
	// Every handler has returned, so every command has been answered;
	// this waits for the scheduler's goroutines to end.
	b.sched.Close()
	if err := b.jc.Err(); err != nil {
		b.opts.Report(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.exited && !b.shutdown {
		return 1
	}
	return 0
}

// attach serves rt: its events and dialogs come here.
func (b *Bridge) attach(rt Runtime) {
	if rt == nil {
		return
	}
	rt.Bind(b)
	unsub := rt.Subscribe(b.Emit)
	b.mu.Lock()
	b.rt, b.unsubscribe = rt, unsub
	b.mu.Unlock()
}

// detach stops listening to the current runtime.
func (b *Bridge) detach() {
	b.mu.Lock()
	rt, unsub := b.rt, b.unsubscribe
	b.unsubscribe = nil
	b.mu.Unlock()
	if unsub != nil {
		unsub()
	}
	if rt != nil {
		rt.Bind(nil)
	}
}

func (b *Bridge) runtime() Runtime {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rt
}

// guard keeps one handler's failure from ending the connection, which is
// what jsonrpc2 does with a panic or with an error returned for a
// notification: a panic becomes an internal-error response, and a
// notification's error is reported instead of returned.
func (b *Bridge) guard(h jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, req *jsonrpc2.Request) (result any, err error) {
		isCall := req.IsCall()
		if isCall {
			if !b.claim(req.ID()) {
				return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, duplicateIDMessage)
			}
		}
		defer func() {
			// Read the method only now: before jsonrpc2.Async it borrows
			// the frame, which the read loop reuses once Async lets it go
			// on; Async gives the request its own copy.
			method := req.Method()
			if r := recover(); r != nil {
				err = jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error in %s: %v", api.Clip(method, api.ClipName), r)
				result = nil
			}
			if !isCall {
				if err != nil {
					b.opts.Report(fmt.Errorf("notification %s: %w", api.Clip(method, api.ClipName), bounded(err)))
				}
				result, err = nil, nil
			}
			if err != nil {
				err = bounded(err)
			}
		}()
		return h(ctx, req)
	}
}

// bounded is err as jsonrpc2 would send it, its message at most
// api.ClipMessage bytes and its data left out past that: whatever a
// handler's error quotes of the request (a path, a name), the answer
// stays small. Code and data are kept as jsonrpc2 keeps them.
func bounded(err error) error {
	var wire *jsonrpc2.Error
	isWire := errors.As(err, &wire)
	msg := err.Error()
	if len(msg) <= api.ClipMessage && (!isWire || len(wire.Data) <= api.ClipMessage) {
		return err
	}
	out := &jsonrpc2.Error{Message: api.Clip(msg, api.ClipMessage)}
	if isWire {
		out.Code = wire.Code
		if len(wire.Data) <= api.ClipMessage {
			out.Data = wire.Data
		}
	}
	return out
}

// LSP methods the bridge answers besides pi/*.
const (
	methodInitialize     = "initialize"
	methodInitialized    = "initialized"
	methodShutdown       = "shutdown"
	methodExit           = "exit"
	methodCancelRequest  = "$/cancelRequest"
	methodProgressCancel = "window/workDoneProgress/cancel"
	methodPrefix         = "pi/"
)

// handle routes one request; it runs on the read loop, so requests are
// started in arrival order.
func (b *Bridge) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	method := req.Method()
	// The events emitted so far go once the client has spoken: at once,
	// or, when it began with initialize, after its response.
	b.heard.Do(func() {
		if method != methodInitialize || !req.IsCall() {
			b.releaseEvents()
		}
	})
	if method == methodExit {
		b.exit()
		return nil, nil
	}
	// After shutdown only exit is served (LSP): requests fail, other
	// notifications are dropped.
	if b.isShutdown() {
		if req.IsCall() {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shutting down: only exit is accepted after shutdown")
		}
		return nil, nil
	}
	switch method {
	case methodInitialize:
		return b.initialize(ctx, req)
	case methodInitialized:
		return nil, nil
	case methodShutdown:
		return b.doShutdown(ctx)
	case methodCancelRequest, methodProgressCancel:
		b.cancelFrom(ctx, method, req.Params())
		return nil, nil
	}
	if name, ok := strings.CutPrefix(method, methodPrefix); ok && api.Known(name) {
		// name borrows the frame, which the read loop reuses once the
		// command calls Async: it gets its own copy.
		return b.command(ctx, req, strings.Clone(name))
	}
	if !req.IsCall() {
		return nil, nil // unknown notifications ($/setTrace, didOpen, ...) are ignored
	}
	return nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, "Unknown method: "+api.Clip(method, api.ClipName))
}

// exit ends Serve; the exit code depends on whether shutdown came first.
func (b *Bridge) exit() {
	b.mu.Lock()
	b.exited = true
	b.mu.Unlock()
	b.cancel(errExit)
}

func (b *Bridge) isShutdown() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.shutdown
}

// preempter sees cancellations on the read loop before any request queued
// behind them.
type preempter struct{ b *Bridge }

func (p preempter) Preempt(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	switch m := req.Method(); m {
	case methodCancelRequest, methodProgressCancel:
		if !req.IsCall() {
			p.b.cancelFrom(ctx, m, req.Params())
			return true, nil
		}
	}
	return nil, jsonrpc2.ErrNotHandled
}

// claim takes id for a new request until its response is written; it
// reports false when the id is in use (by a request not answered yet, or
// by the prompt whose run is going).
func (b *Bridge) claim(id jsonrpc2.ID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open[id] || (b.running.Load() && b.runPrompt.IsValid() && b.runPrompt == id) {
		return false
	}
	b.open[id] = true
	b.awaiting.Add(1)
	return true
}

// duplicateIDMessage is the text of the -32600 refusal of a request
// whose id is in use; wrote tells that refusal from the answer to the
// request that holds the id by it.
const duplicateIDMessage = "duplicate request id: a request with this id is still in progress"

// wrote runs after every message the stream wrote. A response lets its
// id go, and fires the hook a command registered for it (pi/prompt starts
// its run only once its answer is out, as in the native dialect). The
// refusal of a duplicate carries the same id but answers the other
// request, so it does neither. Messages are recognised by decoding them
// with jsonrpc2's public decoder, so neither the library's field order
// nor the path it writes through (Write or WriteFrame) matters; only
// while a request waits for its answer, so events written otherwise cost
// nothing extra.
func (b *Bridge) wrote(msg []byte) {
	if b.awaiting.Load() == 0 {
		return
	}
	if t := bytes.TrimSpace(msg); len(t) > 0 && t[0] == '[' {
		// A batch's answers, written as one array.
		var members []json.RawMessage
		if json.Unmarshal(t, &members) != nil {
			return
		}
		for _, m := range members {
			b.wroteOne(m)
		}
		return
	}
	b.wroteOne(msg)
}

func (b *Bridge) wroteOne(msg []byte) {
	m, err := jsonrpc2.DecodeMessage(msg)
	if err != nil {
		return
	}
	resp, ok := m.(*jsonrpc2.Response)
	if !ok || !resp.ID().IsValid() {
		return
	}
	var rpcErr *jsonrpc2.Error
	if errors.As(resp.Err(), &rpcErr) && rpcErr.Code == jsonrpc2.InvalidRequest && rpcErr.Message == duplicateIDMessage {
		return
	}
	id := resp.ID()
	b.mu.Lock()
	if b.open[id] {
		delete(b.open, id)
		b.awaiting.Add(-1)
	}
	b.mu.Unlock()
	b.fireAfter(id)
}

// afterResponse registers f to run once the response to id is written.
func (b *Bridge) afterResponse(id jsonrpc2.ID, f func()) {
	b.afterMu.Lock()
	b.after[id] = f
	b.afterMu.Unlock()
}

// fireAfter runs (and forgets) the hook registered for id, if any.
func (b *Bridge) fireAfter(id jsonrpc2.ID) {
	b.afterMu.Lock()
	f, ok := b.after[id]
	delete(b.after, id)
	b.afterMu.Unlock()
	if ok {
		f()
	}
}
