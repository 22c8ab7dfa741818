package mcpstate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/mcp"
)

// server is core/mcp's test server, built once for the package's tests
// (buildServer) into a directory TestMain removes.
var server struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if server.dir != "" {
		_ = os.RemoveAll(server.dir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// buildServer is core/mcp's test server.
func buildServer(t *testing.T) string {
	t.Helper()
	server.once.Do(func() {
		server.dir, server.err = os.MkdirTemp("", "mcpstate")
		if server.err != nil {
			return
		}
		server.bin = filepath.Join(server.dir, "mcpserver")
		out, err := exec.Command("go", "build", "-o", server.bin, "../../mcp/testdata/mcpserver").CombinedOutput()
		if err != nil {
			server.err = fmt.Errorf("building the test server: %w: %s", err, out)
		}
	})
	require.NoError(t, server.err)
	return server.bin
}

// heard is what a state told the host: its reports, events, extension
// errors and how often its tools changed.
type heard struct {
	mu        sync.Mutex
	reports   []string
	events    []api.Event
	extErrors []string
	changes   int
}

func (h *heard) report(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reports = append(h.reports, err.Error())
}

func (h *heard) Reports() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.reports, "\n")
}

func (h *heard) ExtErrors() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.extErrors...)
}

// extensions is a session's extensions as the state sees them: there are
// some, and they handle the events named.
type extensions []string

func (e extensions) Empty() bool { return false }

func (e extensions) Handles(event string) bool {
	for _, h := range e {
		if h == event {
			return true
		}
	}
	return false
}

// newState is a started state of cfg, closed when the test ends, and
// what it tells the host (Report, Emit, ExtError and Changed are
// replaced; Emit also sends to events when that is not nil).
func newState(t *testing.T, cfg Config, events chan<- api.MCPServerState) (*State, *heard) {
	t.Helper()
	h := &heard{}
	cfg.Cwd = t.TempDir()
	cfg.Report = h.report
	cfg.Emit = func(ev api.Event) {
		h.mu.Lock()
		h.events = append(h.events, ev)
		h.mu.Unlock()
		if e, ok := ev.(api.MCPServerState); ok && events != nil {
			events <- e
		}
	}
	cfg.ExtError = func(e ext.ErrorEvent) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.extErrors = append(h.extErrors, e.ExtensionPath+" "+e.Event+": "+e.Error)
	}
	cfg.Changed = func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.changes++
	}
	s := New(context.Background(), cfg)
	s.Start()
	t.Cleanup(s.Close)
	return s, h
}

// settled waits until no server is connecting, and fails the test if
// that takes too long.
func settled(t *testing.T, s *State) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, s.mgr.Wait(ctx, nil))
}

// named is the tool of ts named name, or nil.
func named(ts []agent.Tool, name string) agent.Tool {
	for _, t := range ts {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}

func names(ts []agent.Tool) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Spec().Name)
	}
	return out
}

// run calls t with args (JSON) and fails the test on a Go error.
func run(t *testing.T, tool agent.Tool, args string) agent.Result {
	t.Helper()
	require.NotNil(t, tool)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := tool.Run(ctx, agent.Call{ID: "1", Name: tool.Spec().Name, Args: json.RawMessage(args)}, func(agent.Result) {})
	require.NoError(t, err)
	return res
}

// entry is a stdio server of bin.
func entry(name, bin string, exposure mcp.Exposure, args ...string) mcp.Entry {
	return mcp.Entry{Name: name, Server: mcp.Server{Command: bin, Args: args, Exposure: exposure}}
}
