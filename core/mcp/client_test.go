package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/gopi-dev/gopi/internal/testenv"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// serverBin is the test server (testdata/mcpserver), built once.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gopi-mcpserver-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "mcpserver")
	build := exec.Command("go", "build", "-o", serverBin, "./testdata/mcpserver")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the test server:", err)
		os.Exit(1)
	}
	stopGrace = 500 * time.Millisecond
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// recorder collects a manager's reports and the changes it announces.
type recorder struct {
	mu      sync.Mutex
	reports []error
	changes chan Status
}

func newRecorder() *recorder { return &recorder{changes: make(chan Status, 100)} }

func (r *recorder) report(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, err)
}

func (r *recorder) reported() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s []string
	for _, e := range r.reports {
		s = append(s, e.Error())
	}
	return strings.Join(s, "\n")
}

func (r *recorder) changed(st Status) {
	select {
	case r.changes <- st:
	default:
	}
}

// start connects a manager to servers and waits for their first attempt.
func start(t *testing.T, servers map[string]Server) (*Manager, *recorder) {
	t.Helper()
	rec := newRecorder()
	m := NewManager(Options{Servers: entries(servers), Cwd: t.TempDir(), TempDir: t.TempDir(), Version: "test",
		Report: rec.report})
	m.Subscribe(rec.changed)
	m.Start()
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, m.Wait(ctx, nil))
	return m, rec
}

// entries are servers in name order, as Load would give them.
func entries(servers map[string]Server) []Entry {
	var out []Entry
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		out = append(out, Entry{Name: name, Server: servers[name]})
	}
	return out
}

func stdio(args ...string) Server {
	return Server{Command: serverBin, Args: args, Exposure: ExposureDirect}
}

func tool(t *testing.T, m *Manager, name string) *Tool {
	t.Helper()
	for _, tl := range m.Tools() {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s among %v", name, m.Tools())
	return nil
}

func call(t *testing.T, ctx context.Context, tl *Tool, args any) agent.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	res, err := tl.Run(ctx, agent.Call{ID: "c1", Name: tl.Spec().Name, Args: raw}, nil)
	require.NoError(t, err)
	return res
}

func TestToolsAndResults(t *testing.T) {
	m, _ := start(t, map[string]Server{"test-srv": stdio()})
	echo := tool(t, m, "mcp__test_srv__echo")
	assert.Equal(t, "test-srv", echo.Server())
	assert.Equal(t, "echo", echo.RemoteName())
	assert.True(t, echo.ReadOnly())
	assert.Equal(t, ExposureDirect, echo.Exposure())
	assert.Contains(t, string(echo.Spec().Parameters), `"text"`)
	assert.False(t, tool(t, m, "mcp__test_srv__slow").ReadOnly())

	ctx := context.Background()
	res := call(t, ctx, echo, map[string]any{"text": "hi"})
	assert.False(t, res.IsError)
	assert.Equal(t, "echo: hi", res.Content.Text())

	res = call(t, ctx, tool(t, m, "mcp__test_srv__image"), map[string]any{})
	require.Len(t, res.Content, 2)
	img, ok := res.Content[1].(llm.ImageContent)
	require.True(t, ok, "%T", res.Content[1])
	assert.Equal(t, "image/png", img.MimeType)
	assert.True(t, strings.HasPrefix(img.Data, "iVBORw0KGgo"), img.Data)

	res = call(t, ctx, tool(t, m, "mcp__test_srv__fail"), map[string]any{})
	assert.True(t, res.IsError)
	assert.Equal(t, "it went wrong", res.Content.Text())

	whole, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	assert.JSONEq(t, `{"content":[{"type":"text","text":"it went wrong"}],"isError":true}`, string(whole),
		"the structured content is the whole CallToolResult, isError included (a codemode script's value)")

	res = call(t, ctx, tool(t, m, "mcp__test_srv__structured"), map[string]any{})
	assert.JSONEq(t, `{"answer":42}`, res.Content.Text())
	whole, err = json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	assert.Contains(t, string(whole), `"structuredContent":{"answer":42}`)
	assert.Contains(t, string(echo.OutputSchema()), `"required":["content"]`)

	// The server offers no resources: the link names no tool to read it.
	res = call(t, ctx, tool(t, m, "mcp__test_srv__link"), map[string]any{})
	assert.Equal(t, `[Resource test://notes/1 "notes" (text/plain)]`, res.Content.Text())
}

func TestBigTextIsCutInTheMiddle(t *testing.T) {
	m, _ := start(t, map[string]Server{"s": stdio()})
	res := call(t, context.Background(), tool(t, m, "mcp__s__big"), map[string]any{"size": 50000})
	text := res.Content.Text()
	assert.True(t, strings.HasPrefix(text, "line 0\nline 1\n"))
	assert.Contains(t, text, fmt.Sprintf("…%d chars truncated…", 50000-TextLimit))
	d := res.Details.(ResultDetails)
	require.Len(t, d.FullOutputPaths, 1)
	assert.Contains(t, text, d.FullOutputPaths[0])
	full, err := os.ReadFile(d.FullOutputPaths[0])
	require.NoError(t, err)
	assert.Len(t, full, 50000)
	assert.True(t, strings.HasSuffix(string(full), text[strings.Index(text, "truncated…\n\n")+len("truncated…\n\n"):strings.Index(text, "\n\n[Full text")]))
}

func TestAbortEndsTheCallAtOnce(t *testing.T) {
	m, _ := start(t, map[string]Server{"s": stdio()})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	began := time.Now()
	res := call(t, ctx, tool(t, m, "mcp__s__slow"), map[string]any{})
	assert.Less(t, time.Since(began), 5*time.Second)
	assert.True(t, res.IsError)
	assert.Equal(t, "Operation aborted", res.Content.Text())
	// The server is still there for the next call.
	res = call(t, context.Background(), tool(t, m, "mcp__s__echo"), map[string]any{"text": "after"})
	assert.Equal(t, "echo: after", res.Content.Text())
}

func TestTimeout(t *testing.T) {
	srv := stdio()
	// The timeout bounds the connection too: long enough for the server to
	// start on a loaded machine; the slow tool never answers at all.
	srv.Timeout = 2
	m, _ := start(t, map[string]Server{"s": srv})
	res := call(t, context.Background(), tool(t, m, "mcp__s__slow"), map[string]any{})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content.Text(), "timed out")
}

// Progress notifications start the timeout again: a call that reports
// progress more often than its timeout outlives the timeout.
func TestProgressResetsTheTimeout(t *testing.T) {
	srv := stdio()
	srv.Timeout = 0.5
	m, _ := start(t, map[string]Server{"s": srv})
	res := call(t, context.Background(), tool(t, m, "mcp__s__progress"), map[string]any{"count": 8, "interval": 150})
	assert.False(t, res.IsError, res.Content.Text())
	assert.Equal(t, "finished", res.Content.Text())
	res = call(t, context.Background(), tool(t, m, "mcp__s__progress"), map[string]any{"count": 2, "interval": 900})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content.Text(), "timed out after 500ms")
}

func TestCrashReconnectsOnTheNextCall(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	m, rec := start(t, map[string]Server{"s": stdio("-pidfile", pidFile)})
	first := testenv.WaitPID(t, pidFile, 10*time.Second)
	res := call(t, context.Background(), tool(t, m, "mcp__s__crash"), map[string]any{})
	assert.True(t, res.IsError, res.Content.Text())
	assert.Contains(t, res.Content.Text(), "not retried")
	require.Eventually(t, func() bool { return m.Statuses()[0].State == StateDisconnected }, 10*time.Second, 10*time.Millisecond)
	assert.Contains(t, rec.reported(), `mcp server "s": the connection ended`)
	// No retry: the crash call failed; the next one starts the server again.
	res = call(t, context.Background(), tool(t, m, "mcp__s__echo"), map[string]any{"text": "back"})
	assert.Equal(t, "echo: back", res.Content.Text())
	second := testenv.WaitPID(t, pidFile, 10*time.Second)
	assert.NotEqual(t, first, second)
	assert.Equal(t, StateConnected, m.Statuses()[0].State)

	// A server killed between calls is noticed, and the next call starts
	// it again.
	require.NoError(t, syscall.Kill(second, syscall.SIGKILL))
	require.Eventually(t, func() bool { return m.Statuses()[0].State == StateDisconnected }, 10*time.Second, 5*time.Millisecond)
	res = call(t, context.Background(), tool(t, m, "mcp__s__echo"), map[string]any{"text": "third"})
	assert.Equal(t, "echo: third", res.Content.Text())
}

func TestListChanged(t *testing.T) {
	m, rec := start(t, map[string]Server{"s": stdio()})
	drain(rec)
	res := call(t, context.Background(), tool(t, m, "mcp__s__add_tool"), map[string]any{"name": "late-one"})
	assert.Equal(t, "added late-one", res.Content.Text())
	select {
	case <-rec.changes:
	case <-time.After(10 * time.Second):
		t.Fatal("no change after list_changed")
	}
	require.Eventually(t, func() bool {
		for _, tl := range m.Tools() {
			if tl.Spec().Name == "mcp__s__late_one" {
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond)
	res = call(t, context.Background(), tool(t, m, "mcp__s__late_one"), map[string]any{})
	assert.Equal(t, "I am late-one", res.Content.Text())
}

func drain(r *recorder) {
	for {
		select {
		case <-r.changes:
		default:
			return
		}
	}
}

func TestFailedStartIsReportedAndOthersConnect(t *testing.T) {
	m, rec := start(t, map[string]Server{
		"bad":  {Command: filepath.Join(t.TempDir(), "no-such-server")},
		"sse":  {Type: TypeSSE, URL: "http://127.0.0.1:1/sse"},
		"good": stdio(),
		"off":  {Command: serverBin, Enabled: new(false)},
		"dies": {Command: "sh", Args: []string{"-c", "echo broken >&2; exit 1"}},
	})
	got := map[string]State{}
	for _, s := range m.Statuses() {
		got[s.Name] = s.State
	}
	assert.Equal(t, map[string]State{"bad": StateFailed, "sse": StateFailed, "good": StateConnected,
		"off": StateDisabled, "dies": StateFailed}, got)
	reports := rec.reported()
	assert.Contains(t, reports, `mcp server "bad"`)
	assert.Contains(t, reports, "SSE transport is not supported")
	assert.Contains(t, reports, "broken")
	for _, tl := range m.Tools() {
		assert.Equal(t, "good", tl.Server())
	}
}

func TestCloseStopsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// A wrapper that leaves a child behind in the group, as npx may: the
	// server exits when its stdin closes, and its child must go too.
	script := fmt.Sprintf(`sleep 300 & echo $! > %q; exec %q`, pidFile, serverBin)
	rec := newRecorder()
	m := NewManager(Options{Servers: []Entry{{Name: "w", Server: Server{Command: "sh", Args: []string{"-c", script}, Exposure: ExposureDirect}}},
		Cwd: dir, Report: rec.report})
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, m.Wait(ctx, nil))
	require.Equal(t, StateConnected, m.Statuses()[0].State, rec.reported())
	pid := testenv.WaitPID(t, pidFile, 10*time.Second)
	require.NoError(t, m.Close())
	// SIGKILL went to the group before Close returned; its delivery to a
	// process that is not gopi's child is not waited for.
	assert.Eventually(t, func() bool { return !testenv.Alive(pid) }, 5*time.Second, 5*time.Millisecond,
		"the server's child %d outlived Close", pid)
}

func TestHTTP(t *testing.T) {
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "addr")
	srv := exec.Command(serverBin, "-http", "127.0.0.1:0", "-addrfile", addrFile)
	require.NoError(t, srv.Start())
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
	})
	var url string
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(addrFile)
		url = string(b)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	// Header values are expanded as the server starts.
	t.Setenv("GOPI_MCP_TEST_HEADER", "yes")
	m, rec := start(t, map[string]Server{"web": {URL: url, Headers: map[string]string{"X-Test": "${GOPI_MCP_TEST_HEADER}"}, Exposure: ExposureDirect}})
	require.Equal(t, StateConnected, m.Statuses()[0].State, rec.reported())
	res := call(t, context.Background(), tool(t, m, "mcp__web__echo"), map[string]any{"text": "over http"})
	assert.Equal(t, "echo: over http", res.Content.Text())
	res = call(t, context.Background(), tool(t, m, "mcp__web__header"), map[string]any{"name": "X-Test"})
	assert.Equal(t, "yes", res.Content.Text())

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	res = call(t, ctx, tool(t, m, "mcp__web__slow"), map[string]any{})
	assert.Equal(t, "Operation aborted", res.Content.Text())

	drain(rec)
	call(t, context.Background(), tool(t, m, "mcp__web__add_tool"), map[string]any{"name": "more"})
	require.Eventually(t, func() bool {
		for _, tl := range m.Tools() {
			if tl.Spec().Name == "mcp__web__more" {
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond)
}

// Tool names and exposures are the configuration's (ToolNames,
// Server.ToolExposureOf): a tool's own entry wins over the server's.
func TestToolNamesAndExposure(t *testing.T) {
	srv := stdio()
	srv.Exposure = ExposureHidden
	srv.ToolExposure = map[string]Exposure{"echo": ExposureDirect, "add_*": ExposureCodemodeDeferred}
	m, _ := start(t, map[string]Server{"my-srv": srv})
	assert.Equal(t, ExposureDirect, tool(t, m, "mcp__my_srv__echo").Exposure())
	assert.Equal(t, ExposureCodemode, tool(t, m, "mcp__my_srv__add_tool").Exposure())
	assert.Equal(t, ExposureHidden, tool(t, m, "mcp__my_srv__slow").Exposure())
}

// A server without the tools capability is not asked for tools (it need
// not answer tools/list, as pi's connection does not ask), and one with
// resources says so in its status.
func TestServerWithoutTools(t *testing.T) {
	m, _ := start(t, map[string]Server{"notes": stdio("-resources-only"), "test": stdio()})
	st := m.Statuses()
	require.Len(t, st, 2)
	assert.Equal(t, Status{Name: "notes", State: StateConnected, Resources: true}, st[0])
	assert.Equal(t, StateConnected, st[1].State)
	assert.False(t, st[1].Resources)
	assert.NotZero(t, st[1].Tools)
}

// A server that never answers initialize fails at its timeout, and the
// error says so.
func TestConnectTimesOut(t *testing.T) {
	m, rec := start(t, map[string]Server{"mute": {Command: "sleep", Args: []string{"30"}, Timeout: 0.3}})
	st := m.Statuses()
	require.Len(t, st, 1)
	assert.Equal(t, StateFailed, st[0].State)
	require.Error(t, st[0].Err)
	assert.Contains(t, st[0].Err.Error(), `mcp server "mute": connecting: no answer within 300ms (the server's timeout)`)
	assert.Contains(t, rec.reported(), "no answer within 300ms")
}

// nextChange waits for the next status the manager announces.
func nextChange(t *testing.T, rec *recorder) Status {
	t.Helper()
	select {
	case st := <-rec.changes:
		return st
	case <-time.After(10 * time.Second):
		t.Fatalf("no change announced; reports:\n%s", rec.reported())
		return Status{}
	}
}

// Issue 29, reports to clients: Subscribe hears each server's changes,
// in order and with its status then: connected with its tools, failed
// (a server that cannot start, one that answers garbage), dropped, connecting
// again and connected on the next call, its tools listed again; a
// disabled server and closing say nothing.
func TestSubscribeHearsEachChange(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	m, rec := start(t, map[string]Server{
		"s":       stdio("-pidfile", pidFile),
		"missing": {Command: filepath.Join(t.TempDir(), "no-such-server")},
		"garbage": {Command: "sh", Args: []string{"-c", "echo this is not JSON-RPC; sleep 30"}, Timeout: 5},
		"off":     {Command: serverBin, Enabled: new(false)},
	})
	// The first attempts, in whatever order the servers settled.
	first := map[string]Status{}
	for range 3 {
		st := nextChange(t, rec)
		require.NotContains(t, first, st.Name, "announced twice: %+v", st)
		first[st.Name] = st
	}
	assert.Equal(t, StateConnected, first["s"].State)
	assert.NotZero(t, first["s"].Tools)
	assert.Nil(t, first["s"].Err)
	assert.Equal(t, "A server for gopi's tests.", first["s"].Summary)
	assert.Equal(t, StateFailed, first["missing"].State)
	require.Error(t, first["missing"].Err)
	assert.Contains(t, first["missing"].Err.Error(), "no-such-server")
	assert.Equal(t, StateFailed, first["garbage"].State)
	require.Error(t, first["garbage"].Err)
	assert.Contains(t, first["garbage"].Err.Error(), `mcp server "garbage": connecting`)
	tools := first["s"].Tools

	// It crashes: dropped. The next call starts it again.
	res := call(t, context.Background(), tool(t, m, "mcp__s__crash"), map[string]any{})
	assert.True(t, res.IsError)
	st := nextChange(t, rec)
	assert.Equal(t, "s", st.Name)
	assert.Equal(t, StateDisconnected, st.State)
	assert.Equal(t, tools, st.Tools, "a dropped server keeps its tools")
	res = call(t, context.Background(), tool(t, m, "mcp__s__echo"), map[string]any{"text": "back"})
	assert.Equal(t, "echo: back", res.Content.Text())
	assert.Equal(t, StateConnecting, nextChange(t, rec).State)
	st = nextChange(t, rec)
	assert.Equal(t, StateConnected, st.State)
	assert.Nil(t, st.Err)

	// Its tool list changes.
	call(t, context.Background(), tool(t, m, "mcp__s__add_tool"), map[string]any{"name": "late"})
	st = nextChange(t, rec)
	assert.Equal(t, Status{Name: "s", State: StateConnected, Tools: tools + 1, Summary: "A server for gopi's tests."}, st)

	require.NoError(t, m.Close())
	select {
	case st := <-rec.changes:
		t.Fatalf("announced after close: %+v", st)
	default:
	}
}

// Issue 37: server "a" offers "b__c" and server "a__b" offers "c", both
// pi's mcp__a__b__c. Each gets its own name and each name calls its own
// tool; the names hold across a reconnection and a changed tool list,
// whichever server connected first. A name reserved for another tool (an
// extension's) is never an MCP tool's.
func TestToolNamesOfTwoServersNeverCollide(t *testing.T) {
	m, rec := start(t, map[string]Server{
		"a":    stdio("-id", "a", "-tool", "b__c", "-tool", "plain"),
		"a__b": stdio("-id", "a__b", "-tool", "c"),
	})
	byRemote := map[string]string{}
	seen := map[string]bool{}
	for _, tl := range m.Tools() {
		n := tl.Spec().Name
		assert.False(t, seen[n], "%s is two tools' name", n)
		seen[n] = true
		byRemote[tl.Server()+"/"+tl.RemoteName()] = n
	}
	ac, abc := byRemote["a/b__c"], byRemote["a__b/c"]
	assert.Regexp(t, `^mcp__a__b__c_[0-9a-f]{8}$`, ac)
	assert.Regexp(t, `^mcp__a__b__c_[0-9a-f]{8}$`, abc)
	assert.Equal(t, "mcp__a__plain", byRemote["a/plain"])
	// Every name a__b's tools make could be one of a's ("mcp__a__" +
	// "b__crash"...): they all take the suffix.
	assert.Regexp(t, `^mcp__a__b__crash_[0-9a-f]{8}$`, byRemote["a__b/crash"])
	assert.Equal(t, "b__c of a", call(t, context.Background(), tool(t, m, ac), map[string]any{}).Content.Text())
	assert.Equal(t, "c of a__b", call(t, context.Background(), tool(t, m, abc), map[string]any{}).Content.Text())

	// a__b crashes and comes back; a lists a new tool: nothing is renamed.
	drain(rec)
	call(t, context.Background(), tool(t, m, byRemote["a__b/crash"]), map[string]any{})
	assert.Equal(t, "c of a__b", call(t, context.Background(), tool(t, m, abc), map[string]any{}).Content.Text())
	call(t, context.Background(), tool(t, m, "mcp__a__add_tool"), map[string]any{"name": "late"})
	require.Eventually(t, func() bool {
		return slices.ContainsFunc(m.Tools(), func(tl *Tool) bool { return tl.Spec().Name == "mcp__a__late" })
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, ac, tool(t, m, ac).Spec().Name)
	assert.Equal(t, "c of a__b", call(t, context.Background(), tool(t, m, abc), map[string]any{}).Content.Text())

	// An extension registers a tool named mcp__a__plain: a's plain takes
	// the suffix; the reservation gone, it has its name back.
	assert.True(t, m.Reserve([]string{"read", "mcp__a__plain"}))
	assert.False(t, m.Reserve([]string{"mcp__a__plain", "read"}), "the same names")
	var renamed string
	for _, tl := range m.Tools() {
		assert.NotEqual(t, "mcp__a__plain", tl.Spec().Name)
		if tl.RemoteName() == "plain" {
			renamed = tl.Spec().Name
		}
	}
	assert.Regexp(t, `^mcp__a__plain_[0-9a-f]{8}$`, renamed)
	assert.Equal(t, "plain of a", call(t, context.Background(), tool(t, m, renamed), map[string]any{}).Content.Text())
	assert.True(t, m.Reserve(nil))
	assert.Equal(t, "plain of a", call(t, context.Background(), tool(t, m, "mcp__a__plain"), map[string]any{}).Content.Text())
}

// A tool of a server keeps its value from one Tools call to the next
// while nothing changes, and a reserved name changes only the tools it
// renames.
func TestToolsAreStableBetweenChanges(t *testing.T) {
	m, _ := start(t, map[string]Server{"s": stdio()})
	first, second := m.Tools(), m.Tools()
	require.NotEmpty(t, first)
	assert.Equal(t, first, second)
	echo := tool(t, m, "mcp__s__echo")
	m.Reserve([]string{"mcp__s__slow"})
	assert.Same(t, echo, tool(t, m, "mcp__s__echo"))
}
