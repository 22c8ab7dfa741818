package ext

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The test binary stands in for node when fakeHostEnv is set: it speaks
// the pipe's JSON-RPC on fds 3 and 4, answers initialize with nothing
// registered and every other call with null (an emit after sending a
// sendMessage), and exits when gopi closes the pipe, or at once on
// "drain" (a crash). projectTrust, command and registrations make a sync
// request on fds 5 and 6 and answer with what gopi answered it.
const fakeHostEnv = "GOPI_TEST_FAKE_EXTENSION_HOST"

func TestMain(m *testing.M) {
	if os.Getenv(fakeHostEnv) != "" {
		fakeHost()
		return
	}
	os.Exit(m.Run())
}

func fakeHost() {
	in, out := os.NewFile(3, "from gopi"), os.NewFile(4, "to gopi")
	enc := json.NewEncoder(out)
	_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "method": PeerReady, "params": ReadyParams{PID: os.Getpid()}})
	syncOut, syncIn := os.NewFile(5, "sync requests"), bufio.NewReader(os.NewFile(6, "sync answers"))
	syncCall := func(method Method, params any) json.RawMessage {
		_ = json.NewEncoder(syncOut).Encode(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
		line, _ := syncIn.ReadBytes('\n')
		return line
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var msg struct {
			ID     *int64 `json:"id"`
			Method Method `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil {
			continue
		}
		var result any
		switch msg.Method {
		case HostInitialize:
			result = Registrations{}
		case HostDrain:
			os.Exit(3)
		case HostEmit:
			_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "method": PeerSendMessage, "params": SendMessageParams{}})
		case HostProjectTrust:
			ans := syncCall(PeerValidateMCPServer, MCPServer{Name: "early"})
			result = TrustAnswer{Trusted: "undecided", Errors: []ErrorEvent{{Error: string(ans)}}}
		case HostCommand:
			result = syncCall(PeerValidateMCPServer, MCPServer{Name: "s", Config: json.RawMessage(`{"command":"x"}`)})
		case HostRegistrations:
			result = syncCall(PeerSetModel, ModelParams{})
		}
		_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": *msg.ID, "result": result})
	}
}

// notes records what the NodeHost tells gopi; a sendMessage takes a
// while, as one that starts a run does.
type notes struct {
	mu      sync.Mutex
	methods []Method
}

// Request answers with what it was asked.
func (*notes) Request(_ context.Context, method Method, params json.RawMessage) (any, error) {
	return map[string]any{"method": method, "params": params}, nil
}

func (n *notes) Notification(method Method, _ json.RawMessage) {
	if method == PeerSendMessage {
		time.Sleep(200 * time.Millisecond)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.methods = append(n.methods, method)
}

func (n *notes) saw(method Method) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, m := range n.methods {
		if m == method {
			return true
		}
	}
	return false
}

// Close waits for every goroutine the NodeHost started: each process's
// wait and notification queue, a reloaded process's stop and a crashed
// one's restart.
func TestNodeHostCloseWaitsForItsGoroutines(t *testing.T) {
	if err := hostUnsupported(); err != nil {
		t.Skip(err)
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	t.Setenv(fakeHostEnv, "1")
	exe, err := os.Executable()
	require.NoError(t, err)
	n := &NodeHost{Runtime: Runtime{Node: exe, PiPackage: "pi"}, ScriptDir: t.TempDir(), Cwd: t.TempDir()}
	peer := &notes{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	_, err = n.Start(ctx, peer)
	require.NoError(t, err)
	_, err = n.Reload(ctx)
	require.NoError(t, err, "a second process takes over; the first is stopped")
	require.NoError(t, n.Call(ctx, HostEmit, EventParams[Event]{AgentBeforeSettleEvent{Outcome: "completed"}}, nil))

	// A crash: the host restarts, and says so.
	err = n.Call(ctx, HostDrain, Empty{}, nil)
	require.Error(t, err)
	assert.Eventually(t, func() bool { return peer.saw(PeerRestarted) }, 20*time.Second, 10*time.Millisecond, "the host restarts after its crash")
	require.NoError(t, n.Call(ctx, HostEmit, EventParams[Event]{AgentBeforeSettleEvent{Outcome: "completed"}}, nil))

	require.NoError(t, n.Close())
	// At once, not eventually: Close has waited.
	assert.Empty(t, goroutinesIn("core/ext.(*NodeHost)", "core/ext.(*orderedQueue)"), "goroutines of the NodeHost left after Close")
	assert.ErrorIs(t, n.Call(ctx, HostEmit, Empty{}, nil), ErrStopped)
}

// goroutinesIn are the stacks of the goroutines running any of funcs now.
func goroutinesIn(funcs ...string) []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, f := range funcs {
			if strings.Contains(g, f) && !strings.Contains(g, "goroutinesIn") {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// The host's sync requests (fds 5 and 6) reach the peer and come back
// answered, in JSON-RPC; before Start, and for a method that is not a
// sync one, the answer is an error that says so.
func TestNodeHostSyncRequests(t *testing.T) {
	if err := hostUnsupported(); err != nil {
		t.Skip(err)
	}
	t.Setenv(fakeHostEnv, "1")
	exe, err := os.Executable()
	require.NoError(t, err)
	n := &NodeHost{Runtime: Runtime{Node: exe, PiPackage: "pi"}, ScriptDir: t.TempDir(), Cwd: t.TempDir()}
	defer func() { _ = n.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	trust, err := n.ProjectTrust(ctx, n.Cwd)
	require.NoError(t, err)
	require.Len(t, trust.Errors, 1)
	assert.JSONEq(t, `{"jsonrpc": "2.0", "id": 7, "error": {"code": -32603,
		"message": "gopi is still deciding whether the project is trusted: validateMcpServer is not available yet"}}`, trust.Errors[0].Error)

	_, err = n.Start(ctx, &notes{})
	require.NoError(t, err)
	var ans json.RawMessage
	require.NoError(t, n.Call(ctx, HostCommand, CommandParams{Name: "x"}, &ans))
	assert.JSONEq(t, `{"jsonrpc": "2.0", "id": 7, "result": {"method": "validateMcpServer",
		"params": {"name": "s", "config": {"command": "x"}, "extensionPath": ""}}}`, string(ans))
	require.NoError(t, n.Call(ctx, HostRegistrations, Empty{}, &ans))
	assert.JSONEq(t, `{"jsonrpc": "2.0", "id": 7, "error": {"code": -32601,
		"message": "extension has no such method: \"setModel\" is not a sync request"}}`, string(ans))
}
