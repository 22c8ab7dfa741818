package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// additionalDirectories are more roots of the project: the approval
// gate does not call their files outside the project, bad entries are
// refused naming their place, and the capability is advertised.
func TestACPAdditionalDirectoriesApproval(t *testing.T) {
	base := t.TempDir()
	cwd, lib, other := filepath.Join(base, "app"), filepath.Join(base, "lib"), filepath.Join(base, "other")
	for _, d := range []string{cwd, lib, other} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(base, "file"), nil, 0o644))
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session", "--approval", "writes")
	caps := p.initialized()
	assert.NotNil(t, caps.obj("sessionCapabilities")["additionalDirectories"])

	for _, tc := range []struct {
		dirs []any
		want string
	}{
		{[]any{"lib"}, `"additionalDirectories[0]" must be an absolute path`},
		{[]any{lib, filepath.Join(base, "missing")}, `"additionalDirectories[1]"`},
		{[]any{filepath.Join(base, "file")}, "is not a directory"},
	} {
		e := p.failure(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "additionalDirectories": tc.dirs}))
		assert.EqualValues(t, -32602, e["code"])
		assert.Contains(t, e.str("message"), tc.want)
	}
	e := p.failure(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "additionalDirectories": "lib"}))
	assert.EqualValues(t, -32602, e["code"])
	assert.Contains(t, e.str("message"), `"additionalDirectories"`)

	_, res := p.result(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "additionalDirectories": []any{lib}}))
	s := res.str("sessionId")
	p.commandsOf(s)
	title := func(path string) string {
		t.Helper()
		id := p.prompt(s, "write: "+path+" :: x")
		_, req := p.asked()
		require.Equal(t, "session/request_permission", req.str("method"))
		p.choose(req, "reject_once")
		_, _ = p.result(id)
		return req.obj("params").obj("toolCall").str("title")
	}
	assert.NotContains(t, title(filepath.Join(lib, "a.txt")), "outside the project", "an additional directory is the project's")
	assert.NotContains(t, title("in.txt"), "outside the project")
	assert.Contains(t, title(filepath.Join(other, "a.txt")), "outside the project: "+filepath.Join(other, "a.txt"))
	assert.Equal(t, 0, p.exit())
}

// The model is told of the additional directories; session/resume of an
// open session and session/load in another gopi make the request's list
// the session's, none when it has none.
func TestACPAdditionalDirectoriesReachTheModel(t *testing.T) {
	w := newWorld(t, llmtest.Text("one"), llmtest.Text("two"), llmtest.Text("three"))
	lib, docs := filepath.Join(t.TempDir(), "lib"), filepath.Join(t.TempDir(), "docs")
	require.NoError(t, os.MkdirAll(lib, 0o755))
	require.NoError(t, os.MkdirAll(docs, 0o755))
	const line = "Also part of the project (use absolute paths): "
	system := func(i int) string {
		t.Helper()
		reqs := w.srv.Requests()
		require.Greater(t, len(reqs), i)
		body := string(reqs[i].Body)
		if j := strings.Index(body, line); j >= 0 {
			rest := body[j+len(line):]
			return rest[:strings.IndexAny(rest, `"\`)]
		}
		return ""
	}

	p := startACP(t, w.cwd, w.agentDir, "--model", "scripted/scripted-2")
	p.initialized()
	_, res := p.result(p.request("session/new", map[string]any{"cwd": w.cwd, "mcpServers": []any{}, "additionalDirectories": []any{lib, lib + "/"}}))
	s := res.str("sessionId")
	p.commandsOf(s)
	_, _ = p.result(p.prompt(s, "hello"))
	assert.Equal(t, lib, system(0), "named once")

	_, _ = p.result(p.request("session/resume", map[string]any{"sessionId": s, "cwd": w.cwd}))
	_, _ = p.result(p.prompt(s, "again"))
	assert.Empty(t, system(1), "resumed without additionalDirectories, the session has none")
	assert.Equal(t, 0, p.exit())

	q := startACP(t, w.cwd, w.agentDir, "--model", "scripted/scripted-2")
	q.initialized()
	_, _ = q.result(q.request("session/load", map[string]any{"sessionId": s, "cwd": w.cwd, "mcpServers": []any{}, "additionalDirectories": []any{docs, lib}}))
	_, _ = q.result(q.prompt(s, "and again"))
	assert.Equal(t, docs+", "+lib, system(2))
	assert.Equal(t, 0, q.exit())
}
