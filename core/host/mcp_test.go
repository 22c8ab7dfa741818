package host

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopi-dev/gopi/internal/testenv"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/faux"
	"github.com/gopi-dev/gopi/core/mcp"
	"github.com/gopi-dev/gopi/core/models"
	"github.com/gopi-dev/gopi/core/tools"
)

// buildMCPServer builds core/mcp's test server.
func buildMCPServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpserver")
	out, err := exec.Command("go", "build", "-o", bin, "../mcp/testdata/mcpserver").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// fauxFast is a registry of the built-in models with no credentials, and
// its faux-fast model.
func fauxFast(t *testing.T) (*models.Registry, *llm.Model) {
	t.Helper()
	reg, err := models.Load(models.Options{AgentDir: t.TempDir(), Getenv: func(string) string { return "" }, Builtin: faux.Models()})
	require.NoError(t, err)
	model, ok := reg.Find("faux", "faux-fast")
	require.True(t, ok)
	return reg, &model
}

// A server with direct exposure declares its tools to the model: the
// first prompt waits for it, the faux model calls a tool, and the result
// is the conversation's. A read-only tool is not asked about under
// approval "writes"; the server's other tools are. Close stops it.
func TestMCPDirectTools(t *testing.T) {
	bin := buildMCPServer(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	reg, model := fauxFast(t)
	builtins, err := tools.ByName(dir, []string{tools.NameRead, tools.NameBash})
	require.NoError(t, err)
	var mu sync.Mutex
	var reports []string
	h, err := New(Options{Cwd: dir, Registry: reg, Model: model, Thinking: llm.ThinkingOff, Tools: builtins,
		Approval: ApprovalWrites,
		MCPServers: []mcp.Entry{
			{Name: "t", Server: mcp.Server{Command: bin, Args: []string{"-pidfile", pidFile}, Exposure: mcp.ExposureDirect}},
			{Name: "def", Server: mcp.Server{Command: bin, Exposure: mcp.ExposureDeferred}},
		},
		Report: func(err error) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, err.Error())
		},
	})
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			_ = h.Close(context.Background())
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, h.PromptAndWait(ctx, `call: mcp__t__echo {"text": "hello"}`, nil))
	msgs := h.agent.Messages()
	var result *llm.ToolResultMessage
	for _, m := range msgs {
		if r, ok := m.(*llm.ToolResultMessage); ok {
			result = r
		}
	}
	require.NotNil(t, result, "no tool result among %d messages", len(msgs))
	assert.Equal(t, "mcp__t__echo", result.ToolName)
	assert.False(t, result.IsError)
	assert.Equal(t, "echo: hello", result.Content.Text())

	toolNames := func() []string {
		var names []string
		for _, tl := range h.agent.Tools() {
			names = append(names, tl.Spec().Name)
		}
		return names
	}
	// The prompt waited for the direct server only: the deferred one may
	// still be connecting, and tool_search joins once it has.
	require.Eventually(t, func() bool { return slices.Contains(toolNames(), "tool_search") }, 20*time.Second, 10*time.Millisecond,
		"tool_search is declared once the server with deferred tools connects: %v", toolNames())
	names := toolNames()
	assert.Subset(t, names, []string{"read", "bash", "mcp__t__echo", "mcp__t__slow"})
	assert.False(t, slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "mcp__def__") }),
		"deferred tools are not declared: %v", names)
	assert.Contains(t, names, "tool_search", "a server has deferred tools")
	assert.NotContains(t, h.agent.SystemPrompt(), "mcp__t__echo", "declared, not described in the prompt")

	assert.False(t, h.approval.Needs("mcp__t__echo"), "read-only")
	assert.True(t, h.approval.Needs("mcp__t__slow"))
	assert.True(t, h.approval.Needs(tools.NameBash))
	assert.False(t, h.approval.Needs(tools.NameRead))

	mu.Lock()
	assert.NotContains(t, strings.Join(reports, "\n"), `codemode`, "no server has codemode tools")
	mu.Unlock()

	pid := testenv.ReadPID(t, pidFile)
	require.NoError(t, h.Close(context.Background()))
	closed = true
	assert.False(t, testenv.Alive(pid), "the MCP server %d outlived the host", pid)
}

// Issue 29: a deferred tool is not declared; tool_search loads it, and
// from then on it is declared and callable; the search result records it,
// so a host that reads the branch again still declares it. A hidden tool
// is never found nor callable.
func TestMCPDeferredTools(t *testing.T) {
	bin := buildMCPServer(t)
	dir := t.TempDir()
	reg, model := fauxFast(t)
	h, err := New(Options{Cwd: dir, Registry: reg, Model: model, Thinking: llm.ThinkingOff,
		MCPServers: []mcp.Entry{
			{Name: "d", Server: mcp.Server{Command: bin, Exposure: mcp.ExposureDeferred, Description: "A test server.",
				ToolExposure: map[string]mcp.Exposure{"fail": mcp.ExposureHidden}}},
			{Name: "h", Server: mcp.Server{Command: bin, Exposure: mcp.ExposureHidden}},
		},
		Report: func(error) {},
	})
	require.NoError(t, err)
	defer func() { _ = h.Close(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	lastResult := func() *llm.ToolResultMessage {
		var result *llm.ToolResultMessage
		for _, m := range h.agent.Messages() {
			if r, ok := m.(*llm.ToolResultMessage); ok {
				result = r
			}
		}
		require.NotNil(t, result)
		return result
	}
	names := func(ts []agent.Tool) []string {
		var out []string
		for _, tl := range ts {
			out = append(out, tl.Spec().Name)
		}
		return out
	}

	// Before the search: the server connects in the background (a prompt
	// does not wait for it), then tool_search appears.
	require.Eventually(t, func() bool { return slices.Contains(names(h.agent.Tools()), "tool_search") },
		10*time.Second, 10*time.Millisecond)
	assert.NotContains(t, names(h.agent.Tools()), "mcp__d__echo")
	assert.Empty(t, h.mcp.RequestTools(ctx, h.agent.Messages(), nil))
	// The system prompt lists the server with deferred tools, not the
	// hidden one.
	require.Eventually(t, func() bool {
		return strings.Contains(h.agent.SystemPrompt(), "<mcp_servers>")
	}, 10*time.Second, 10*time.Millisecond)
	assert.Contains(t, h.agent.SystemPrompt(), "\n- d: A test server.\n</mcp_servers>")

	require.NoError(t, h.PromptAndWait(ctx, `call: mcp__d__echo {"text": "early"}`, nil))
	assert.Empty(t, slices.DeleteFunc(h.agent.Messages(), func(m llm.Message) bool {
		_, ok := m.(*llm.ToolResultMessage)
		return !ok
	}), "an undeclared tool is not called")

	require.NoError(t, h.PromptAndWait(ctx, `call: tool_search {"query": "echo"}`, nil))
	res := lastResult()
	assert.Equal(t, "tool_search", res.ToolName)
	assert.False(t, res.IsError)
	assert.Contains(t, res.Content.Text(), "mcp__d__echo")
	assert.JSONEq(t, `{"query": "echo", "loadedTools": ["mcp__d__echo"]}`, string(res.Details))
	assert.Contains(t, names(h.mcp.RequestTools(ctx, h.agent.Messages(), nil)), "mcp__d__echo")

	require.NoError(t, h.PromptAndWait(ctx, `call: mcp__d__echo {"text": "hello"}`, nil))
	res = lastResult()
	assert.Equal(t, "mcp__d__echo", res.ToolName)
	assert.Equal(t, "echo: hello", res.Content.Text())

	// Hidden: not found, not declared.
	require.NoError(t, h.PromptAndWait(ctx, `call: tool_search {"query": "fail"}`, nil))
	res = lastResult()
	assert.JSONEq(t, `{"query": "fail", "loadedTools": []}`, string(res.Details))
	assert.NotContains(t, names(h.mcp.RequestTools(ctx, h.agent.Messages(), nil)), "mcp__d__fail")

	// Without the search in the transcript (another branch), the tool is
	// not declared.
	assert.Empty(t, h.mcp.RequestTools(ctx, nil, nil))
}

// Issue 29, resources: a direct server with resources gets the resource
// tools declared beside its own; they are read-only for the approval
// gate, and the model reads a resource with them. A deferred server's
// resources are reached through tool_search, which finds the tools by
// the server's name, and a resources-only server is listed in the
// system prompt. The tool selection removes them like any MCP tool.
func TestMCPResourceTools(t *testing.T) {
	bin := buildMCPServer(t)
	reg, model := fauxFast(t)
	newHost := func(t *testing.T, sel tools.Selection, servers ...mcp.Entry) *Host {
		h, err := New(Options{Cwd: t.TempDir(), Registry: reg, Model: model, Thinking: llm.ThinkingOff,
			Approval: ApprovalWrites, ToolSelection: sel, MCPServers: servers, Report: func(error) {}})
		require.NoError(t, err)
		t.Cleanup(func() { _ = h.Close(context.Background()) })
		return h
	}
	names := func(ts []agent.Tool) []string {
		var out []string
		for _, tl := range ts {
			out = append(out, tl.Spec().Name)
		}
		return out
	}
	lastResult := func(h *Host) *llm.ToolResultMessage {
		var result *llm.ToolResultMessage
		for _, m := range h.agent.Messages() {
			if r, ok := m.(*llm.ToolResultMessage); ok {
				result = r
			}
		}
		require.NotNil(t, result)
		return result
	}
	resourceTools := []string{"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"}

	t.Run("direct", func(t *testing.T) {
		h := newHost(t, tools.Selection{}, mcp.Entry{Name: "r", Server: mcp.Server{Command: bin, Args: []string{"-resources"}, Exposure: mcp.ExposureDirect}})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, h.PromptAndWait(ctx, `call: read_mcp_resource {"server": "r", "uri": "test://notes/1"}`, nil))
		res := lastResult(h)
		assert.Equal(t, "read_mcp_resource", res.ToolName)
		assert.False(t, res.IsError)
		assert.Equal(t, "a note", res.Content.Text())
		got := names(h.agent.Tools())
		assert.Subset(t, got, append([]string{"mcp__r__echo"}, resourceTools...))
		assert.NotContains(t, got, "tool_search")
		for _, n := range resourceTools {
			assert.False(t, h.approval.Needs(n), "%s only reads", n)
		}
		assert.NotContains(t, h.agent.SystemPrompt(), "list_mcp_resources", "declared, not described in the prompt")

		require.NoError(t, h.PromptAndWait(ctx, `call: mcp__r__link {}`, nil))
		assert.Equal(t, `[Resource test://notes/1 "notes" (text/plain). Read it with read_mcp_resource (server "r")]`, lastResult(h).Content.Text())
	})

	t.Run("deferred", func(t *testing.T) {
		h := newHost(t, tools.Selection{},
			mcp.Entry{Name: "notes", Server: mcp.Server{Command: bin, Args: []string{"-resources-only"}, Exposure: mcp.ExposureDeferred}})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.Eventually(t, func() bool { return slices.Contains(names(h.agent.Tools()), "tool_search") },
			10*time.Second, 10*time.Millisecond, "a server has resources reached through tool_search")
		for _, n := range resourceTools {
			assert.NotContains(t, names(h.agent.Tools()), n)
		}
		require.Eventually(t, func() bool { return strings.Contains(h.agent.SystemPrompt(), "\n- notes\n</mcp_servers>") },
			10*time.Second, 10*time.Millisecond, "the resources-only server is listed: %s", h.agent.SystemPrompt())

		require.NoError(t, h.PromptAndWait(ctx, `call: tool_search {"query": "notes"}`, nil))
		res := lastResult(h)
		assert.JSONEq(t, `{"query": "notes", "loadedTools": ["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"]}`,
			string(res.Details), "found by their server's name")
		require.NoError(t, h.PromptAndWait(ctx, `call: read_mcp_resource {"server": "notes", "uri": "test://notes/1"}`, nil))
		res = lastResult(h)
		assert.Equal(t, "read_mcp_resource", res.ToolName)
		assert.Equal(t, "a note", res.Content.Text())
	})

	t.Run("excluded", func(t *testing.T) {
		h := newHost(t, tools.Select(tools.SelectOptions{Exclude: []string{"read_mcp_resource"}}),
			mcp.Entry{Name: "r", Server: mcp.Server{Command: bin, Args: []string{"-resources"}, Exposure: mcp.ExposureDirect}})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, h.PromptAndWait(ctx, `call: mcp__r__link {}`, nil))
		assert.Equal(t, `[Resource test://notes/1 "notes" (text/plain)]`, lastResult(h).Content.Text(), "no tool to read it with")
		got := names(h.agent.Tools())
		assert.Subset(t, got, resourceTools[:2])
		assert.NotContains(t, got, "read_mcp_resource")
	})
}

// Under approval "writes", a deferred tool that tool_search loaded is
// asked about unless it is read-only, as a direct one is: the gate looks
// among the tools a request may add, not only the run's.
func TestMCPDeferredToolsAreAskedAbout(t *testing.T) {
	bin := buildMCPServer(t)
	reg, model := fauxFast(t)
	h, err := New(Options{Cwd: t.TempDir(), Registry: reg, Model: model, Thinking: llm.ThinkingOff, Approval: ApprovalWrites,
		MCPServers: []mcp.Entry{{Name: "d", Server: mcp.Server{Command: bin, Args: []string{"-resources"}, Exposure: mcp.ExposureDeferred}}},
		Report:     func(error) {}})
	require.NoError(t, err)
	defer func() { _ = h.Close(context.Background()) }()
	mcpServerStates(t, h)
	assert.True(t, h.approval.Needs("mcp__d__slow"))
	assert.False(t, h.approval.Needs("mcp__d__echo"), "read-only")
	assert.False(t, h.approval.Needs("read_mcp_resource"), "read-only")
}

// Issue 29: a compaction that summarizes the tool_search result keeps the
// tool it loaded: the tool set is recorded in a system message before the
// compaction, whose checkpoint carries it, and read back from there.
func TestMCPLoadedToolsSurviveCompaction(t *testing.T) {
	bin := buildMCPServer(t)
	reg, model := fauxFast(t)
	h, err := New(Options{Cwd: t.TempDir(), Registry: reg, Model: model, Thinking: llm.ThinkingOff,
		MCPServers: []mcp.Entry{{Name: "d", Server: mcp.Server{Command: bin, Exposure: mcp.ExposureDeferred}}},
		Settings:   Settings{Compaction: &compaction.Settings{Enabled: false, ReserveTokens: 16384, KeepRecentTokens: 1}},
		Report:     func(error) {},
	})
	require.NoError(t, err)
	defer func() { _ = h.Close(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	declared := func() []string {
		var out []string
		for _, tl := range h.mcp.RequestTools(ctx, h.agent.Messages(), nil) {
			out = append(out, tl.Spec().Name)
		}
		return out
	}
	require.Eventually(t, func() bool {
		return slices.ContainsFunc(h.agent.Tools(), func(tl agent.Tool) bool { return tl.Spec().Name == "tool_search" })
	}, 10*time.Second, 10*time.Millisecond, "the server connects")
	require.NoError(t, h.PromptAndWait(ctx, `call: tool_search {"query": "echo"}`, nil))
	require.Contains(t, declared(), "mcp__d__echo")
	require.NoError(t, h.PromptAndWait(ctx, "and now something else", nil))

	_, err = h.Compact(ctx, api.CompactParams{})
	require.NoError(t, err)
	for _, m := range h.agent.Messages() {
		if tr, ok := m.(*llm.ToolResultMessage); ok {
			require.NotEqual(t, "tool_search", tr.ToolName, "the compaction summarized the search")
		}
	}
	assert.Contains(t, declared(), "mcp__d__echo", "the loaded tool is still declared")

	require.NoError(t, h.PromptAndWait(ctx, `call: mcp__d__echo {"text": "after"}`, nil))
	var last *llm.ToolResultMessage
	for _, m := range h.agent.Messages() {
		if r, ok := m.(*llm.ToolResultMessage); ok {
			last = r
		}
	}
	require.NotNil(t, last)
	assert.Equal(t, "echo: after", last.Content.Text())
}

// Issue 29, reports to clients: mcp_server_state carries a server as
// get_mcp_servers lists it each time it changes. What happened before
// anyone subscribed reaches the first subscriber at once; later changes
// (a tool list that changed) follow as they come; closing says nothing.
func TestMCPServerStateEvents(t *testing.T) {
	bin := buildMCPServer(t)
	dir := t.TempDir()
	reg, model := fauxFast(t)
	h, err := New(Options{Cwd: dir, Registry: reg, Model: model, Thinking: llm.ThinkingOff,
		MCPServers: []mcp.Entry{
			{Name: "broken", Server: mcp.Server{Command: "sh", Args: []string{"-c", "echo cannot start >&2; exit 3"}}},
			{Name: "t", Server: mcp.Server{Command: bin, Exposure: mcp.ExposureDirect}},
			{Name: "off", Server: mcp.Server{Command: bin, Enabled: new(false)}},
		},
		Report: func(error) {},
	})
	require.NoError(t, err)
	defer func() { _ = h.Close(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mcpServerStates(t, h)

	events := make(chan api.MCPServerState, 100)
	defer h.Subscribe(func(ev api.Event) {
		if e, ok := ev.(api.MCPServerState); ok {
			events <- e
		}
	})()
	next := func() api.MCPServer {
		t.Helper()
		select {
		case e := <-events:
			return e.Server
		case <-ctx.Done():
			t.Fatal("no mcp_server_state")
			return api.MCPServer{}
		}
	}
	listed := func(name string) api.MCPServer {
		res, err := h.GetMCPServers(ctx)
		require.NoError(t, err)
		for _, s := range res.Servers {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("no server %s", name)
		return api.MCPServer{}
	}
	// Both settled before the subscription: each is heard of once, as
	// get_mcp_servers lists it; the disabled one never changed.
	broken := next()
	assert.Equal(t, api.MCPFailed, broken.State)
	assert.Contains(t, broken.Error, "cannot start")
	assert.Equal(t, listed("broken"), broken)
	srv := next()
	assert.Equal(t, api.MCPConnected, srv.State)
	assert.Equal(t, listed("t"), srv)
	require.Empty(t, events)

	require.NoError(t, h.PromptAndWait(ctx, `call: mcp__t__add_tool {"name": "late"}`, nil))
	srv = next()
	assert.Equal(t, "t", srv.Name)
	assert.Len(t, srv.Tools, len(listed("t").Tools))
	assert.True(t, slices.ContainsFunc(srv.Tools, func(tl api.MCPTool) bool { return tl.Name == "mcp__t__late" }), "%v", srv.Tools)

	require.NoError(t, h.Close(context.Background()))
	assert.Empty(t, events, "closing is no change")
}
