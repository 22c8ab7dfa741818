package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/internal/testenv"
)

// resourceTool is the manager's resource tool called name.
func resourceTool(t *testing.T, m *Manager, name string) *ResourceTool {
	t.Helper()
	for _, rt := range m.ResourceTools() {
		if rt.Spec().Name == name {
			return rt
		}
	}
	t.Fatalf("no resource tool %s", name)
	return nil
}

func runResource(t *testing.T, ctx context.Context, rt *ResourceTool, args any) agent.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	res, err := rt.Run(ctx, agent.Call{ID: "r1", Name: rt.Spec().Name, Args: raw}, nil)
	require.NoError(t, err)
	return res
}

// listing is a listing tool's JSON.
type listing struct {
	Server            string           `json:"server"`
	Resources         []map[string]any `json:"resources"`
	ResourceTemplates []map[string]any `json:"resourceTemplates"`
	NextCursor        string           `json:"nextCursor"`
	Errors            []map[string]any `json:"errors"`
}

func parseListing(t *testing.T, res agent.Result) listing {
	t.Helper()
	require.False(t, res.IsError, res.Content.Text())
	var l listing
	require.NoError(t, json.Unmarshal([]byte(res.Content.Text()), &l), res.Content.Text())
	return l
}

func uris(items []map[string]any, key string) []string {
	var out []string
	for _, it := range items {
		out = append(out, it[key].(string))
	}
	return out
}

// The test server's resources that listings show (its MCP App is left
// out), in its order.
var testResources = []string{"test://big", "test://dir/", "test://empty", "test://files/config.json",
	"test://files/data.bin", "test://images/pixel.png", "test://notes/1", "test://notes/2", "test://slow"}

// Issue 29, resources: a server with resources gets pi's three tools,
// read-only, with pi's descriptions and parameters; listings are pi's
// JSON (every server, or one page of one), without MCP Apps, _meta and
// icons; reads give text, images, and blobs saved to files.
func TestResourceTools(t *testing.T) {
	m, _ := start(t, map[string]Server{"res": stdio("-resources")})
	tools := m.ResourceTools()
	require.Len(t, tools, 3)
	for i, name := range []string{"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"} {
		assert.Equal(t, name, tools[i].Spec().Name)
		assert.True(t, tools[i].ReadOnly())
		assert.Equal(t, ExposureDirect, tools[i].Exposure())
		assert.True(t, json.Valid(tools[i].Spec().Parameters))
	}
	assert.True(t, strings.HasPrefix(tools[0].Spec().Description, "Lists resources provided by MCP servers."))
	assert.Equal(t, "Read a specific resource from an MCP server given the server name and resource URI.", tools[2].Spec().Description)
	assert.Contains(t, string(tools[2].Spec().Parameters), `"required":["server","uri"]`)
	assert.Equal(t, []string{"res"}, tools[0].Servers())

	ctx := context.Background()
	list := resourceTool(t, m, ListResourcesTool)
	res := runResource(t, ctx, list, map[string]any{})
	assert.Equal(t, ResultDetails{Server: "", Tool: ListResourcesTool}, res.Details)
	all := parseListing(t, res)
	assert.Empty(t, all.Server)
	assert.Empty(t, all.NextCursor)
	assert.Empty(t, all.Errors)
	assert.ElementsMatch(t, testResources, uris(all.Resources, "uri"))
	for _, r := range all.Resources {
		if r["uri"] == "test://notes/2" {
			assert.Equal(t, map[string]any{"server": "res", "uri": "test://notes/2", "name": "second", "title": "The second note",
				"description": "Another note.", "mimeType": "text/plain", "size": float64(13)}, r, "no _meta, no icons")
		}
	}
	assert.NotContains(t, res.Content.Text(), "\\u003c", "written as JSON.stringify writes it")

	one := parseListing(t, runResource(t, ctx, list, map[string]any{"server": " res "}))
	assert.Equal(t, "res", one.Server)
	assert.ElementsMatch(t, testResources, uris(one.Resources, "uri"))

	templates := parseListing(t, runResource(t, ctx, resourceTool(t, m, ListResourceTemplatesTool), map[string]any{}))
	require.Len(t, templates.ResourceTemplates, 1, "the MCP App's template is left out")
	assert.Equal(t, map[string]any{"server": "res", "uriTemplate": "test://notes/{id}", "name": "note",
		"description": "A note by its id.", "mimeType": "text/plain"}, templates.ResourceTemplates[0])

	read := resourceTool(t, m, ReadResourceTool)
	readURI := func(uri string) agent.Result {
		return runResource(t, ctx, read, map[string]any{"server": "res", "uri": uri})
	}
	res = readURI("test://notes/1")
	assert.False(t, res.IsError)
	assert.Equal(t, "a note", res.Content.Text())
	assert.Equal(t, ResultDetails{Server: "res", Tool: ReadResourceTool}, res.Details)
	assert.Equal(t, "note 42", readURI("test://notes/42").Content.Text(), "through the template")

	res = readURI("test://images/pixel.png")
	require.Len(t, res.Content, 1)
	img, ok := res.Content[0].(llm.ImageContent)
	require.True(t, ok, "%T", res.Content[0])
	assert.Equal(t, "image/png", img.MimeType)
	assert.True(t, strings.HasPrefix(img.Data, "iVBORw0KGgo"), img.Data)

	assert.Equal(t, `{"ok":true}`, readURI("test://files/config.json").Content.Text(), "a JSON blob is text")

	res = readURI("test://files/data.bin")
	text := res.Content.Text()
	require.True(t, strings.HasPrefix(text, "[Binary resource test://files/data.bin (application/octet-stream, 5B) saved to "), text)
	path := strings.TrimSuffix(strings.TrimPrefix(text, "[Binary resource test://files/data.bin (application/octet-stream, 5B) saved to "), "]")
	assert.Equal(t, ".bin", filepath.Ext(path))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 1, 2, 3, 0xff}, data)

	res = readURI("test://dir/")
	var blocks []string
	for _, c := range res.Content {
		blocks = append(blocks, c.(llm.TextContent).Text)
	}
	assert.Equal(t, []string{"test://dir/a.txt:", "note a", "test://dir/b.txt:", "note b"}, blocks)

	assert.Equal(t, "Resource test://empty is empty.", readURI("test://empty").Content.Text())

	res = readURI("test://big")
	assert.Contains(t, res.Content.Text(), fmt.Sprintf("…%d chars truncated…", 50000-TextLimit))
	require.Len(t, res.Details.(ResultDetails).FullOutputPaths, 1)

	res = readURI("test://nothing")
	assert.True(t, res.IsError)
	assert.Equal(t, `MCP server "res": calling "resources/read": Resource not found`, res.Content.Text())

	// pi's errors.
	for _, tc := range []struct {
		tool *ResourceTool
		args map[string]any
		want string
	}{
		{read, map[string]any{"server": "", "uri": "test://notes/1"}, "server must be provided"},
		{read, map[string]any{"server": "res", "uri": "  "}, "uri must be provided"},
		{read, map[string]any{"server": "nope", "uri": "test://notes/1"}, `MCP server "nope" has no resources. Servers with resources: res`},
		{list, map[string]any{"server": "nope"}, `MCP server "nope" has no resources. Servers with resources: res`},
		{list, map[string]any{"cursor": "abc"}, "cursor can only be used when a server is specified"},
	} {
		res := runResource(t, ctx, tc.tool, tc.args)
		assert.True(t, res.IsError, "%v", tc.args)
		assert.Equal(t, tc.want, res.Content.Text())
	}

	// A link in a tool's result names read_mcp_resource now that the
	// server's resources can be read.
	res = call(t, ctx, tool(t, m, "mcp__res__link"), map[string]any{})
	assert.Equal(t, `[Resource test://notes/1 "notes" (text/plain). Read it with read_mcp_resource (server "res")]`, res.Content.Text())
}

// With -page-size, a server's list comes in pages: with server, one page
// and its nextCursor, which the next call continues; without, every page.
func TestResourcePagination(t *testing.T) {
	m, _ := start(t, map[string]Server{"p": stdio("-resources", "-page-size", "4")})
	list := resourceTool(t, m, ListResourcesTool)
	ctx := context.Background()
	var got []string
	cursor := ""
	for range 10 {
		args := map[string]any{"server": "p"}
		if cursor != "" {
			args["cursor"] = cursor
		}
		page := parseListing(t, runResource(t, ctx, list, args))
		assert.LessOrEqual(t, len(page.Resources), 4)
		got = append(got, uris(page.Resources, "uri")...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	assert.Empty(t, cursor, "the pages end")
	assert.ElementsMatch(t, testResources, got)
	assert.ElementsMatch(t, testResources, uris(parseListing(t, runResource(t, ctx, list, map[string]any{})).Resources, "uri"))
}

// The resource tools reach enabled servers with resources whose own
// exposure is not hidden; their exposure is the widest of those servers'.
// Without such a server there are none, and links name no tool.
func TestResourceToolsReachAndExposure(t *testing.T) {
	withResources := func(e Exposure) Server {
		s := stdio("-resources")
		s.Exposure = e
		return s
	}
	for _, tc := range []struct {
		name     string
		servers  map[string]Server
		exposure Exposure
		reached  []string
	}{
		{"none", map[string]Server{"plain": stdio()}, "", nil},
		{"hidden", map[string]Server{"h": withResources(ExposureHidden)}, "", nil},
		{"deferred", map[string]Server{"d": withResources(ExposureDeferred), "plain": stdio()}, ExposureDeferred, []string{"d"}},
		{"codemode", map[string]Server{"c": withResources(""), "d": withResources(ExposureDeferred)}, ExposureCodemode, []string{"c", "d"}},
		{"direct", map[string]Server{"c": withResources(ExposureCodemode), "x": withResources(ExposureDirect),
			"h": withResources(ExposureHidden), "notes": stdio("-resources-only")}, ExposureDirect, []string{"c", "notes", "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := start(t, tc.servers)
			assert.Equal(t, tc.reached, m.ResourceServers())
			tools := m.ResourceTools()
			if tc.exposure == "" {
				assert.Nil(t, tools)
				return
			}
			require.Len(t, tools, 3)
			for _, rt := range tools {
				assert.Equal(t, tc.exposure, rt.Exposure())
			}
			if _, ok := tc.servers["h"]; !ok {
				return
			}
			res := runResource(t, context.Background(), resourceTool(t, m, ReadResourceTool), map[string]any{"server": "h", "uri": "test://notes/1"})
			assert.Equal(t, `MCP server "h" has no resources. Servers with resources: c, notes, x`, res.Content.Text())
			res = call(t, context.Background(), tool(t, m, "mcp__h__link"), map[string]any{})
			assert.NotContains(t, res.Content.Text(), "read_mcp_resource", "a hidden server's resources are not read")
		})
	}
}

// A link names read_mcp_resource only when the tool selection leaves it.
func TestResourceLinkFollowsTheToolSelection(t *testing.T) {
	rec := newRecorder()
	m := NewManager(Options{Servers: entries(map[string]Server{"res": stdio("-resources")}), Cwd: t.TempDir(), TempDir: t.TempDir(),
		Report: rec.report, ToolAllowed: func(name string) bool { return name != ReadResourceTool }})
	m.Subscribe(rec.changed)
	m.Start()
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	require.NoError(t, m.Wait(context.Background(), nil))
	res := call(t, context.Background(), tool(t, m, "mcp__res__link"), map[string]any{})
	assert.Equal(t, `[Resource test://notes/1 "notes" (text/plain)]`, res.Content.Text())
}

// An abort ends a read at once and tells the server; the server's timeout
// ends one too; the server answers the next request.
func TestResourceReadAbortAndTimeout(t *testing.T) {
	srv := stdio("-resources")
	srv.Timeout = 1
	m, _ := start(t, map[string]Server{"s": srv})
	read := resourceTool(t, m, ReadResourceTool)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	began := time.Now()
	res := runResource(t, ctx, read, map[string]any{"server": "s", "uri": "test://slow"})
	assert.Less(t, time.Since(began), 900*time.Millisecond, "ended by the abort, not the timeout")
	assert.True(t, res.IsError)
	assert.Equal(t, "Operation aborted", res.Content.Text())

	res = runResource(t, context.Background(), read, map[string]any{"server": "s", "uri": "test://slow"})
	assert.True(t, res.IsError)
	assert.Equal(t, `MCP server "s" did not answer resources/read within 1s (its timeout)`, res.Content.Text())

	res = runResource(t, context.Background(), read, map[string]any{"server": "s", "uri": "test://notes/1"})
	assert.Equal(t, "a note", res.Content.Text())
}

// A server that dropped is started again by the next request; one that
// cannot be reached is an errors entry of a listing of every server, and
// the other servers are still listed.
func TestResourceListingAcrossServers(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	marker := filepath.Join(dir, "started")
	// Starts the server the first time only.
	once := Server{Command: "sh", Args: []string{"-c", fmt.Sprintf(
		`if [ -e %q ]; then echo gone for good >&2; exit 1; fi; touch %q; exec %q -resources -pidfile %q`,
		marker, marker, serverBin, pidFile)}, Exposure: ExposureDirect}
	again := filepath.Join(dir, "again")
	m, _ := start(t, map[string]Server{"once": once, "again": stdio("-resources", "-pidfile", again)})
	assert.Equal(t, []string{"again", "once"}, m.ResourceServers())
	list := resourceTool(t, m, ListResourcesTool)

	first := testenv.WaitPID(t, again, 10*time.Second)
	require.NoError(t, syscall.Kill(first, syscall.SIGKILL))
	require.NoError(t, syscall.Kill(testenv.WaitPID(t, pidFile, 10*time.Second), syscall.SIGKILL))
	require.Eventually(t, func() bool {
		for _, st := range m.Statuses() {
			if st.State != StateDisconnected {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond)

	l := parseListing(t, runResource(t, context.Background(), list, map[string]any{}))
	assert.ElementsMatch(t, testResources, uris(l.Resources, "uri"), "the dropped server started again")
	require.Len(t, l.Errors, 1)
	assert.Equal(t, "once", l.Errors[0]["server"])
	assert.Contains(t, l.Errors[0]["error"], "connecting: ")
	assert.Contains(t, l.Errors[0]["error"], "gone for good")
	assert.NotContains(t, l.Errors[0]["error"], `"once"`, "the entry names the server")
	assert.NotEqual(t, first, testenv.ReadPID(t, again))
}
