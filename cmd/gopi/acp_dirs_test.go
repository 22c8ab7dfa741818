package main

import (
	"os"
	"path/filepath"
	"regexp"
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
	t.Parallel()
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
	t.Parallel()
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

// Checkpoints record the additional directories as the session's own:
// one in the same repository as cwd by a snapshot, one outside git by
// the journal, one inside cwd as part of cwd (once). A /rewind puts back
// every root its checkpoint recorded, names their files, and is undone
// the same way; a directory added after the checkpoint is left alone.
// Deleting the session prunes its refs in every repository.
func TestACPAdditionalDirectoriesCheckpointed(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	gitIn(t, base, "init", "-q")
	cwd, shared, plain, late := filepath.Join(base, "app"), filepath.Join(base, "lib"), filepath.Join(t.TempDir(), "notes"), filepath.Join(t.TempDir(), "late")
	nested := filepath.Join(cwd, "sub")
	for _, f := range []string{filepath.Join(cwd, "a.txt"), filepath.Join(shared, "b.txt"), filepath.Join(plain, "c.txt"), filepath.Join(late, "e.txt"), filepath.Join(nested, "keep.txt")} {
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
		require.NoError(t, os.WriteFile(f, []byte("one"), 0o644))
	}
	read := func(name string) string {
		t.Helper()
		data, err := os.ReadFile(name)
		if err != nil {
			return "(none)"
		}
		return string(data)
	}
	gitIn(t, late, "init", "-q")
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast")
	p.initialized()
	dirs := []any{shared, plain, nested}
	_, res := p.result(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "additionalDirectories": dirs}))
	s := res.str("sessionId")
	p.commandsOf(s)
	run := func(text string) string {
		t.Helper()
		ups, res := p.result(p.prompt(s, text))
		require.Equal(t, "end_turn", res.str("stopReason"))
		return agentText(ups)
	}

	run("write: " + filepath.Join(shared, "b.txt") + " :: two")
	m := regexp.MustCompile("`([0-9a-f]{12})`").FindStringSubmatch(run("/rewind"))
	require.NotNil(t, m)
	first := m[1]
	run("write: " + filepath.Join(plain, "c.txt") + " :: two")
	run("write: " + filepath.Join(nested, "d.txt") + " :: two")
	_, _ = p.result(p.request("session/resume", map[string]any{"sessionId": s, "cwd": cwd, "additionalDirectories": append(dirs, late)}))
	run("write: " + filepath.Join(late, "e.txt") + " :: two")
	require.Equal(t, "two", read(filepath.Join(shared, "b.txt")))

	said := run("/rewind " + first + " code")
	assert.Contains(t, said, "Restored 3 file(s):")
	assert.Contains(t, said, "- "+filepath.Join(shared, "b.txt")+" (restored)")
	assert.Contains(t, said, "- "+filepath.Join(plain, "c.txt")+" (restored)")
	assert.Contains(t, said, "- sub/d.txt (removed)", "a directory inside cwd is cwd's")
	assert.Equal(t, "one", read(filepath.Join(shared, "b.txt")), "a snapshot in cwd's repository")
	assert.Equal(t, "one", read(filepath.Join(plain, "c.txt")), "the journal outside git")
	assert.Equal(t, "(none)", read(filepath.Join(nested, "d.txt")))
	assert.Equal(t, "two", read(filepath.Join(late, "e.txt")), "a directory added after the checkpoint is not touched")

	undo := regexp.MustCompile("`/rewind ([0-9a-f]{12}) code`").FindStringSubmatch(said)
	require.NotNil(t, undo, said)
	run("/rewind " + undo[1] + " code")
	for _, f := range []string{filepath.Join(shared, "b.txt"), filepath.Join(plain, "c.txt"), filepath.Join(nested, "d.txt"), filepath.Join(late, "e.txt")} {
		assert.Equal(t, "two", read(f), "the rewind is undone: %s", f)
	}

	// Deleting the session removes its refs from every repository.
	require.NotEmpty(t, strings.TrimSpace(gitIn(t, late, "for-each-ref", "refs/gopi/")))
	_, _ = p.result(p.request("session/delete", map[string]any{"sessionId": s}))
	assert.Empty(t, strings.TrimSpace(gitIn(t, base, "for-each-ref", "refs/gopi/")))
	assert.Empty(t, strings.TrimSpace(gitIn(t, late, "for-each-ref", "refs/gopi/")))
	assert.Equal(t, 0, p.exit())
}
