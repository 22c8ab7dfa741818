package mcp

// This file holds the Manager: its options, the servers it keeps, their
// start and Close, waiting for them, and the statuses it reports. One
// server is in server.go, connecting it in connect.go, its transport in
// transport.go, its tools' listing and naming in toollist.go.

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gopi-dev/gopi/internal/fanout"
)

// Options configure a [Manager].
type Options struct {
	// Servers are the configured servers (Load's), in order; their
	// values are expanded by Expander when each starts.
	Servers []Entry
	// Expander expands ${VAR}, !command and ~/ in a server's values; the
	// zero value reads gopi's environment.
	Expander Expander
	// Cwd is the session's directory: a server's relative cwd is resolved
	// against it, and a server without one runs there.
	Cwd string
	// Env is the environment stdio servers start with (their own env
	// entries added); nil means gopi's.
	Env []string
	// TempDir receives the full text of results cut for the model; ""
	// means the system's.
	TempDir string
	// Version is gopi's, sent to servers as the client's.
	Version string
	// Log receives the servers' log messages (notifications/message);
	// nil drops them.
	Log *ServerLog
	// Auth is where OAuth tokens of HTTP servers are stored
	// (<agentDir>/mcp-auth.json): an HTTP server without an Authorization
	// header sends its stored token and refreshes it (oauth.go). nil: no
	// server uses OAuth.
	Auth *AuthStore
	// Report receives what went wrong with a server (a failed start, a
	// dropped connection); nil drops it.
	Report func(error)
	// ToolAllowed reports whether the tool selection leaves the MCP tool
	// called name: a resource link names read_mcp_resource only when it
	// does. nil leaves every tool.
	ToolAllowed func(name string) bool
}

// Manager connects to the configured MCP servers and offers their tools
// as agent tools. Call [Manager.Subscribe] to hear of each server's
// changes, [Manager.Start] once, read [Manager.Tools] and
// [Manager.Statuses] when a change is announced, and [Manager.Close] at
// the end; [Manager.Add] and [Manager.Remove] change the servers
// meanwhile.
type Manager struct {
	opts    Options
	changes fanout.Fanout[Status] // Subscribe's subscribers

	serversMu sync.Mutex // guards the three fields below
	servers   []*server  // in Options.Servers' order, then as added
	started   bool       // Start has run: a server added now starts at once
	closed    bool       // Close has run: nothing is added

	ctx    context.Context // ends at Close; connections and calls derive from it
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the manager and its transports start

	// progress are the progress tokens of the calls under way.
	progress progressTokens

	// toolsGen counts the changes that may change a tool's name: a
	// server's tool list, the servers, the reserved names. Each change
	// adds one after it is made.
	toolsGen atomic.Uint64

	namesMu  sync.Mutex // guards the four fields below; taken before serversMu and a server's mu
	reserved map[string]bool
	named    []*Tool // Tools' answer when toolsGen was namedGen
	namedGen uint64
	namedOK  bool // named is set
}

// NewManager prepares the servers; nothing connects before Start.
func NewManager(opts Options) *Manager {
	if opts.Report == nil {
		opts.Report = func(error) {}
	}
	m := &Manager{opts: opts}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for _, e := range opts.Servers {
		m.servers = append(m.servers, m.newServer(e))
	}
	return m
}

// newServer is e before it connects.
func (m *Manager) newServer(e Entry) *server {
	s := &server{m: m, name: e.Name, cfg: e.Server, settled: make(chan struct{})}
	s.state = StateConnecting
	if !s.cfg.IsEnabled() {
		s.state = StateDisabled
		close(s.settled)
	}
	return s
}

// list is a copy of the servers, for a loop that must not hold serversMu.
func (m *Manager) list() []*server {
	m.serversMu.Lock()
	defer m.serversMu.Unlock()
	return slices.Clone(m.servers)
}

// Empty reports whether there is no server at all.
func (m *Manager) Empty() bool { return m == nil || len(m.list()) == 0 }

// Start connects every enabled server in the background.
func (m *Manager) Start() {
	if m == nil {
		return
	}
	m.serversMu.Lock()
	defer m.serversMu.Unlock()
	m.started = true
	for _, s := range m.servers {
		m.start(s)
	}
}

// start connects s in the background unless it is disabled; serversMu is
// held, so that Close cannot be waiting for the goroutines meanwhile.
func (m *Manager) start(s *server) {
	if !s.cfg.IsEnabled() {
		return
	}
	m.wg.Go(func() {
		defer close(s.settled)
		if _, err := s.session(m.ctx); err != nil && m.ctx.Err() == nil {
			m.opts.Report(err)
		}
	})
}

// Subscribe calls f with a server's [Status] each time its state or its
// tools change: it connected, failed to, dropped, is connecting again (a
// call after a drop or a failure starts it), or listed changed tools
// (notifications/tools/list_changed). Closing the manager is no change.
//
// The changes of one server reach f one at a time and in order, each with
// the server's status when f is called, so the last call for a server
// holds its current status, and no status is announced twice. f runs on
// the goroutine that made the change (the manager's, or that of a tool
// call that reconnects), which waits for it: f may read [Manager.Tools]
// and [Manager.Statuses] but must not call a server's tools. Subscribe
// before [Manager.Start] to hear every change; the returned func removes
// f.
func (m *Manager) Subscribe(f func(Status)) (unsubscribe func()) {
	return m.changes.Subscribe(f)
}

// Wait returns once every server that want accepts has made its first
// attempt to connect (or ctx ends, or the manager closes). nil want means
// every server.
func (m *Manager) Wait(ctx context.Context, want func(name string, s Server) bool) error {
	if m.Empty() {
		return nil
	}
	for _, s := range m.list() {
		if want != nil && !want(s.name, s.cfg) {
			continue
		}
		select {
		case <-s.settled:
		case <-ctx.Done():
			return ctx.Err()
		case <-m.ctx.Done():
			return nil
		}
	}
	return nil
}

// RetrySignedIn connects again the servers that need a sign-in and whose
// stored tokens changed since (`gopi mcp login`, or pi's sign-in, in
// another process), and waits for them while ctx allows: as in pi, a
// running session uses new credentials from its next prompt on.
func (m *Manager) RetrySignedIn(ctx context.Context) {
	if m.Empty() || m.opts.Auth == nil {
		return
	}
	var waits []chan struct{}
	for _, s := range m.list() {
		s.mu.Lock()
		waiting := s.state == StateNeedsAuth && s.sess == nil && s.connecting == nil && !s.closed
		before := s.signedOut
		s.mu.Unlock()
		if !waiting || m.opts.Auth.tokensSnapshot(s.name, s.cfg.URL) == before {
			continue
		}
		done := make(chan struct{})
		waits = append(waits, done)
		m.wg.Go(func() {
			defer close(done)
			if _, err := s.session(m.ctx); err != nil && m.ctx.Err() == nil {
				m.opts.Report(err)
			}
		})
	}
	for _, done := range waits {
		select {
		case <-done:
		case <-ctx.Done():
			return
		case <-m.ctx.Done():
			return
		}
	}
}

// Statuses are every server's, in order.
func (m *Manager) Statuses() []Status {
	if m.Empty() {
		return nil
	}
	servers := m.list()
	out := make([]Status, 0, len(servers))
	for _, s := range servers {
		s.mu.Lock()
		out = append(out, s.status())
		s.mu.Unlock()
	}
	return out
}

// Close ends every call and connection and stops the stdio servers (stdin
// closed, SIGTERM, SIGKILL to the process group); it returns once they
// have exited and every goroutine of the manager has ended.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	m.serversMu.Lock()
	m.closed = true
	servers := m.servers
	m.serversMu.Unlock()
	m.cancel()
	var errs []error
	for _, s := range servers {
		if err := s.close(); err != nil {
			errs = append(errs, err)
		}
	}
	m.wg.Wait()
	return errors.Join(errs...)
}
