package ext

// This file holds the NodeHost type and its life as an [Extension]: the
// first start (or the adoption of the process ProjectTrust started),
// reload, the generation count and Close. One run of the Node process is
// in nodehost_proc.go, its crash restart in nodehost_restart.go, the calls
// to it in nodehost_calls.go and its requests to gopi in nodehost_serve.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// NodeHost runs pi extensions in a Node process (nodehost/host.mjs and
// the modules it imports) and talks to it over a private pair of pipes
// (fds 3 and 4 of the child), never gopi's stdout; a second pair (fds 5
// and 6) carries the host's [MethodSpec.Sync] requests. The host's own stdout and stderr go to Log.
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

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
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
