package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gopi-dev/gopi/internal/fanout"
)

// DefaultTimeout is a request's timeout when a server sets none (pi's 60 s).
const DefaultTimeout = 60 * time.Second

// State is where a server's connection stands.
type State string

const (
	StateConnecting   State = "connecting"
	StateConnected    State = "connected"
	StateFailed       State = "failed"       // the last attempt to connect failed
	StateDisconnected State = "disconnected" // the connection dropped; the next call reconnects
	StateDisabled     State = "disabled"     // enabled: false
	StateClosed       State = "closed"
	// StateNeedsAuth: the server answered 401 and no stored token could
	// answer it; the user has to sign in (pi's "needs-auth", shown as
	// "needs sign-in"; oauth.go).
	StateNeedsAuth State = "needs-auth"
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

	progressMu sync.Mutex // guards the two fields below
	progress   map[string]func()
	lastToken  int

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

// watchProgress gives a call its progress token: each progress
// notification that names it calls f.
func (m *Manager) watchProgress(f func()) string {
	m.progressMu.Lock()
	defer m.progressMu.Unlock()
	m.lastToken++
	token := fmt.Sprintf("gopi-%d", m.lastToken)
	if m.progress == nil {
		m.progress = map[string]func(){}
	}
	m.progress[token] = f
	return token
}

func (m *Manager) unwatchProgress(token string) {
	m.progressMu.Lock()
	defer m.progressMu.Unlock()
	delete(m.progress, token)
}

// progressed is a progress notification's arrival.
func (m *Manager) progressed(token any) {
	t, ok := token.(string)
	if !ok {
		return
	}
	m.progressMu.Lock()
	f := m.progress[t]
	m.progressMu.Unlock()
	if f != nil {
		f()
	}
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

// Tools are the tools of every connected server, in the servers' order
// and then each server's, whatever their exposure, each under its name
// for the model (nameTools: no two share one, and none is reserved).
func (m *Manager) Tools() []*Tool {
	if m.Empty() {
		return nil
	}
	m.namesMu.Lock()
	defer m.namesMu.Unlock()
	gen := m.toolsGen.Load()
	if m.namedOK && m.namedGen == gen {
		return slices.Clone(m.named)
	}
	servers := m.list()
	listed := make([]serverTools, len(servers))
	raw := make([][]*Tool, len(servers))
	for i, s := range servers {
		s.mu.Lock()
		raw[i] = s.tools
		s.mu.Unlock()
		listed[i].server = s.name
		for _, t := range raw[i] {
			listed[i].tools = append(listed[i].tools, t.remote)
		}
	}
	names := nameTools(listed, func(n string) bool { return m.reserved[n] })
	// A tool keeps its value while its name does not change.
	before := map[*server]map[string]*Tool{}
	for _, t := range m.named {
		if before[t.s] == nil {
			before[t.s] = map[string]*Tool{}
		}
		before[t.s][t.remote] = t
	}
	var out []*Tool
	for i, ts := range raw {
		for k, t := range ts {
			if old := before[t.s][t.remote]; old != nil && old.name == names[i][k] && old.source == t {
				out = append(out, old)
				continue
			}
			named := *t
			named.name, named.source = names[i][k], t
			out = append(out, &named)
		}
	}
	m.named, m.namedGen, m.namedOK = out, gen, true
	return slices.Clone(out)
}

// Reserve gives the names of the tools that are not MCP's (built-ins,
// extensions' tools): no MCP tool is named so; one whose name would be
// gets the hash suffix (see nameTools). It reports whether the names
// changed, and with them, perhaps, some tools' names.
func (m *Manager) Reserve(names []string) bool {
	if m == nil {
		return false
	}
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	m.namesMu.Lock()
	defer m.namesMu.Unlock()
	if maps.Equal(set, m.reserved) {
		return false
	}
	m.reserved = set
	m.toolsGen.Add(1)
	return true
}

// Status is one server's state for a report or a listing.
type Status struct {
	Name  string
	State State
	Tools int
	// Resources reports whether the connected server offers resources.
	Resources bool
	// Err is why it failed or dropped, with the end of a stdio server's
	// stderr.
	Err error
	// Summary says what the server offers in one line: its configured
	// description, else the first line of the instructions it sent when
	// it connected; empty when neither is known.
	Summary string
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

// server is one configured server and its connection.
type server struct {
	m    *Manager
	name string
	cfg  Server
	// settled closes when the first attempt to connect has ended.
	settled chan struct{}

	announceMu sync.Mutex // serializes announce; guards announced
	announced  uint64     // the last gen announced

	mu    sync.Mutex // guards the fields below
	state State
	// gen counts the changes of state and tools that announce tells
	// Subscribe's subscribers of.
	gen   uint64
	sess  *sdk.ClientSession // nil unless connected
	tools []*Tool
	// resources reports whether the server declared the resources
	// capability when it last connected.
	resources bool
	err       error
	// instructions are the ones the server sent when it last connected.
	instructions string
	// connecting is non-nil while an attempt is under way and closes when
	// it ends; callers wait on it rather than connecting twice.
	connecting chan struct{}
	// auth is the OAuth side of the connection sess, nil for a server
	// without OAuth.
	auth *oauthSession
	// signedOut is the stored tokens (as text) when the server came to
	// need a sign-in: RetrySignedIn reconnects once they change.
	signedOut string
	stderr    *tailBuffer
	closed    bool
}

// status is the server's Status: s.mu is held.
func (s *server) status() Status {
	return Status{Name: s.name, State: s.state, Tools: len(s.tools), Resources: s.resources, Err: s.err,
		Summary: s.summary()}
}

// announce tells Subscribe's subscribers of the changes counted in gen
// since the last announcement, with the status as it is now; every change
// (s.gen++ under s.mu) calls it once s.mu is released. Announcements of
// one server are serialized and each reads the status anew, so the last
// one holds the current status; one that finds nothing new since the last
// says nothing. A closing manager announces nothing.
func (s *server) announce() {
	s.announceMu.Lock()
	defer s.announceMu.Unlock()
	if s.m.ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	st, gen := s.status(), s.gen
	s.mu.Unlock()
	if gen == s.announced {
		return
	}
	s.announced = gen
	s.m.changes.Emit(st)
}

// summary is Status.Summary: s.mu is held.
func (s *server) summary() string {
	if d := strings.TrimSpace(s.cfg.Description); d != "" {
		return d
	}
	for line := range strings.Lines(s.instructions) {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

func (s *server) timeout() time.Duration {
	if s.cfg.Timeout > 0 {
		return time.Duration(s.cfg.Timeout * float64(time.Second))
	}
	return DefaultTimeout
}

// session returns the connected session, connecting first when there is
// none: at start, and on the first call after the connection dropped. The
// attempt runs in a goroutine of the manager, so a caller that gives up
// (an abort) returns at once and the attempt still ends cleanly.
func (s *server) session(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("mcp server %q: closed", s.name)
	}
	if s.sess != nil {
		sess := s.sess
		s.mu.Unlock()
		return sess, nil
	}
	wait := s.connecting
	again := false // a new attempt after a drop or a failure: announced
	if wait == nil {
		done := make(chan struct{})
		again = s.state != StateConnecting
		s.connecting, s.state, wait = done, StateConnecting, done
		if again {
			s.gen++
		}
		s.m.wg.Go(func() {
			// connect announces a success; a failure is announced here,
			// before the callers waiting for the attempt hear of it.
			_, err := s.connect()
			snapshot := ""
			if errors.Is(err, ErrSignInRequired) {
				snapshot = s.m.opts.Auth.tokensSnapshot(s.name, s.cfg.URL)
			}
			s.mu.Lock()
			s.connecting = nil
			if err != nil {
				s.state, s.err = StateFailed, err
				if errors.Is(err, ErrSignInRequired) {
					s.state, s.signedOut = StateNeedsAuth, snapshot
				}
				s.gen++
			}
			s.mu.Unlock()
			if err != nil {
				s.announce()
			}
			close(done)
		})
	}
	s.mu.Unlock()
	if again {
		s.announce()
	}
	select {
	case <-wait:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.sess != nil {
			return s.sess, nil
		}
		if s.err == nil {
			return nil, fmt.Errorf("mcp server %q: the connection ended", s.name)
		}
		return nil, s.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// connect starts the server (or reaches it), initializes the session and
// lists its tools; a goroutine then watches for the connection's end. An
// HTTP server that fails for a transient reason is tried twice more
// after connectRetryDelays, as pi does.
func (s *server) connect() (*sdk.ClientSession, error) {
	for attempt := 0; ; attempt++ {
		var outcome *httpOutcome
		if !s.cfg.isStdio() {
			outcome = &httpOutcome{}
		}
		sess, err := s.connectOnce(outcome)
		if err == nil || attempt >= len(connectRetryDelays) || !outcome.transient() {
			return sess, err
		}
		select {
		case <-time.After(connectRetryDelays[attempt]):
		case <-s.m.ctx.Done():
			return nil, err
		}
	}
}

// connectOnce is one attempt of connect; outcome, for an HTTP server,
// records its exchanges.
func (s *server) connectOnce(outcome *httpOutcome) (*sdk.ClientSession, error) {
	ctx, cancel := context.WithTimeout(s.m.ctx, s.timeout())
	defer cancel()
	t, stderr, oauth, err := s.transport(ctx, outcome)
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: %w", s.name, err)
	}
	var sess *sdk.ClientSession
	client := sdk.NewClient(&sdk.Implementation{Name: "gopi", Version: s.m.opts.Version}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			// Not on the session's goroutine: listing is a request, and
			// its answer is read there.
			s.m.wg.Go(func() { s.refresh(sess) })
		},
		// Logging is deprecated from protocol 2026-07-28 on, but servers
		// of the earlier versions still log, and pi keeps mcp.log.
		//lint:ignore SA1019 servers of protocols before 2026-07-28 log this way
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			if req.Params != nil {
				s.m.opts.Log.Write(s.name, string(req.Params.Level), req.Params.Logger, req.Params.Data)
			}
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			if req.Params != nil {
				s.m.progressed(req.Params.ProgressToken)
			}
		},
	})
	sess, err = client.Connect(ctx, t, nil)
	if err != nil {
		if signIn := oauth.signInNeededOrNil(); signIn != nil && s.m.ctx.Err() == nil {
			return nil, fmt.Errorf("mcp server %q: %w", s.name, signIn)
		}
		return nil, s.failure("connecting", s.timedOut(ctx, err), stderr)
	}
	// A server without the tools capability (resources or prompts only)
	// is not asked for tools: it need not answer tools/list.
	var tools []*Tool
	var caps *sdk.ServerCapabilities
	var instructions string
	if init := sess.InitializeResult(); init != nil {
		caps, instructions = init.Capabilities, init.Instructions
	}
	if caps == nil || caps.Tools != nil {
		if tools, err = s.listTools(ctx, sess); err != nil {
			_ = sess.Close()
			if signIn := oauth.signInNeededOrNil(); signIn != nil && s.m.ctx.Err() == nil {
				return nil, fmt.Errorf("mcp server %q: %w", s.name, signIn)
			}
			return nil, s.failure("listing tools", s.timedOut(ctx, err), stderr)
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = sess.Close()
		return nil, fmt.Errorf("mcp server %q: closed", s.name)
	}
	s.sess, s.tools, s.state, s.err, s.stderr, s.auth = sess, tools, StateConnected, nil, stderr, oauth
	s.resources = caps != nil && caps.Resources != nil
	s.instructions = instructions
	s.gen++
	s.mu.Unlock()
	s.m.toolsGen.Add(1)
	s.announce()
	s.m.wg.Go(func() { s.watch(sess) })
	return sess, nil
}

// timedOut says that the server did not answer in time when ctx, a
// connection's, ended at the server's timeout.
func (s *server) timedOut(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && s.m.ctx.Err() == nil {
		return fmt.Errorf("no answer within %v (the server's timeout): %w", s.timeout(), err)
	}
	return err
}

// failure words a failed start, with the end of the server's stderr.
func (s *server) failure(doing string, err error, stderr *tailBuffer) error {
	if s.m.ctx.Err() != nil {
		return fmt.Errorf("mcp server %q: closed", s.name)
	}
	err = fmt.Errorf("mcp server %q: %s: %w", s.name, doing, err)
	if stderr != nil {
		if tail := strings.TrimSpace(stderr.String()); tail != "" {
			err = fmt.Errorf("%w\nstderr:\n%s", err, tail)
		}
	}
	return err
}

// watch waits for the session to end. A session the server ended (it
// crashed, the network dropped) leaves the server disconnected: its tools
// stay known and the next call reconnects.
func (s *server) watch(sess *sdk.ClientSession) {
	_ = sess.Wait()
	s.mu.Lock()
	if s.sess != sess {
		s.mu.Unlock()
		return
	}
	s.sess = nil
	closed := s.closed
	if !closed {
		s.state = StateDisconnected
		s.err = fmt.Errorf("mcp server %q: the connection ended", s.name)
		if s.stderr != nil {
			if tail := strings.TrimSpace(s.stderr.String()); tail != "" {
				s.err = fmt.Errorf("%w\nstderr:\n%s", s.err, tail)
			}
		}
		s.gen++
	}
	err := s.err
	s.mu.Unlock()
	// Closing our side stops what is left of a stdio server.
	_ = sess.Close()
	if !closed {
		s.m.opts.Report(err)
		s.announce()
	}
}

// refresh lists the tools again after notifications/tools/list_changed.
func (s *server) refresh(sess *sdk.ClientSession) {
	if sess == nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.m.ctx, s.timeout())
	defer cancel()
	tools, err := s.listTools(ctx, sess)
	if err != nil {
		if s.m.ctx.Err() == nil {
			s.m.opts.Report(fmt.Errorf("mcp server %q: listing changed tools: %w", s.name, err))
		}
		return
	}
	s.mu.Lock()
	if s.sess != sess {
		s.mu.Unlock()
		return
	}
	s.tools = tools
	s.gen++
	s.mu.Unlock()
	s.m.toolsGen.Add(1)
	s.announce()
}

func (s *server) listTools(ctx context.Context, sess *sdk.ClientSession) ([]*Tool, error) {
	var listed []*sdk.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		listed = append(listed, t)
	}
	// Named by Manager.Tools, which knows the other servers.
	tools := make([]*Tool, len(listed))
	for i, t := range listed {
		tools[i] = newTool(s, t)
	}
	return tools, nil
}

// transport builds the connection's transport from the configuration,
// its values expanded now, as the server starts; for an HTTP server that
// signs in with OAuth, with the OAuth side of the connection. outcome
// records an HTTP server's exchanges.
func (s *server) transport(ctx context.Context, outcome *httpOutcome) (sdk.Transport, *tailBuffer, *oauthSession, error) {
	c := s.cfg
	switch c.Type {
	case "", TypeStdio, TypeHTTP, TypeStreamableHTTP:
	case TypeSSE:
		return nil, nil, nil, errors.New(`the SSE transport is not supported; servers that offer SSE often serve streamable HTTP too, commonly at /mcp instead of /sse`)
	default:
		return nil, nil, nil, fmt.Errorf("unknown type %q", c.Type)
	}
	if !c.isStdio() {
		if c.URL == "" {
			return nil, nil, nil, errors.New("neither command nor url is set")
		}
		headers, err := s.m.opts.Expander.Headers(ctx, s.name, c)
		if err != nil {
			return nil, nil, nil, err
		}
		var rt http.RoundTripper = headerTransport{headers: headers, base: outcomeTransport{o: outcome, base: http.DefaultTransport}}
		// Two retries of a dropped stream, as pi retries HTTP errors twice.
		t := &sdk.StreamableClientTransport{Endpoint: c.URL, MaxRetries: 2}
		var oauth *oauthSession
		if s.m.opts.Auth != nil && c.UsesOAuth() {
			oauth = newOAuthSession(s.m.opts.Auth, s.name, c, s.m.opts.Expander)
			rt = oauth.roundTripper(rt)
			t.OAuthHandler = oauth
		}
		t.HTTPClient = &http.Client{Transport: rt}
		return t, nil, oauth, nil
	}
	if c.Command == "" {
		return nil, nil, nil, errors.New("a stdio server needs a command")
	}
	l, err := s.m.opts.Expander.Stdio(ctx, s.name, c, s.m.opts.Cwd)
	if err != nil {
		return nil, nil, nil, err
	}
	cmd := exec.Command(l.Command, l.Args...)
	cmd.Dir = l.Dir
	env := s.m.opts.Env
	if env == nil {
		env = os.Environ()
	}
	env = slices.Clone(env)
	for _, k := range slices.Sorted(maps.Keys(l.Env)) {
		env = append(env, k+"="+l.Env[k])
	}
	cmd.Env = env
	stderr := &tailBuffer{}
	return &stdioTransport{cmd: cmd, stderr: stderr, wg: &s.m.wg}, stderr, nil, nil
}

// close ends the server's connection and waits for a stdio server to exit.
func (s *server) close() error {
	s.mu.Lock()
	s.closed = true
	s.state = StateClosed
	sess := s.sess
	s.sess = nil
	s.mu.Unlock()
	if sess == nil {
		return nil
	}
	if err := sess.Close(); err != nil && !errors.Is(err, sdk.ErrConnectionClosed) {
		return fmt.Errorf("mcp server %q: closing: %w", s.name, err)
	}
	return nil
}

// signedOutOf reports, after a call on sess failed, whether the server
// turned down its OAuth token for good (a 401 no refresh could answer):
// the server then needs a sign-in, sess is dropped, and the next call
// connects again with whatever is stored by then.
func (s *server) signedOutOf(sess *sdk.ClientSession) error {
	s.mu.Lock()
	if s.sess != sess || s.auth == nil {
		s.mu.Unlock()
		return nil
	}
	err := s.auth.signInNeededOrNil()
	if err == nil {
		s.mu.Unlock()
		return nil
	}
	err = fmt.Errorf("mcp server %q: %w", s.name, err)
	s.sess, s.auth, s.state, s.err = nil, nil, StateNeedsAuth, err
	s.mu.Unlock()
	snapshot := s.m.opts.Auth.tokensSnapshot(s.name, s.cfg.URL)
	s.mu.Lock()
	s.signedOut = snapshot
	s.mu.Unlock()
	_ = sess.Close()
	s.m.opts.Report(err)
	return err
}

// dropped marks sess as gone after a call found the connection closed, so
// that the next call reconnects.
func (s *server) dropped(sess *sdk.ClientSession) {
	s.mu.Lock()
	if s.sess != sess {
		s.mu.Unlock()
		return
	}
	s.sess, s.auth, s.state = nil, nil, StateDisconnected
	s.gen++
	s.mu.Unlock()
	_ = sess.Close()
	s.announce()
}

// headerTransport adds a server's configured headers to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}
