package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gopi-dev/gopi/internal/testenv"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpDirs are a project and an agent dir for `gopi mcp` through the
// binary; trust saves the project as trusted.
func mcpDirs(t *testing.T) (cwd, agentDir string, trust func()) {
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	agentDir = t.TempDir()
	return cwd, agentDir, func() {
		require.NoError(t, os.WriteFile(filepath.Join(agentDir, "trust.json"), []byte(`{"`+cwd+`": true}`), 0o644))
	}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// Issue 29: gopi mcp add writes pi's mcp.json entries, in the user's file
// or with -l the project's, and list shows them without connecting.
func TestMCPAddRemoveList(t *testing.T) {
	t.Parallel()
	cwd, agentDir, trust := mcpDirs(t)
	global, project := filepath.Join(agentDir, "mcp.json"), filepath.Join(cwd, ".pi", "mcp.json")

	code, out, stderr := runBinaryOut(t, cwd, agentDir, "mcp", "add", "fs", "--env", "API_KEY=${FS_KEY}", "--cwd", "~/w",
		"--exposure", "direct", "--", "no-such-mcp-server", "-y", "@modelcontextprotocol/server-filesystem", "--flag", ".")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "Added global MCP server \"fs\" in "+global+".\nCheck it with: gopi mcp list\n", out)
	assert.Equal(t, map[string]any{"mcpServers": map[string]any{"fs": map[string]any{
		"command": "no-such-mcp-server", "args": []any{"-y", "@modelcontextprotocol/server-filesystem", "--flag", "."},
		"env": map[string]any{"API_KEY": "${FS_KEY}"}, "cwd": "~/w", "exposure": "direct",
	}}}, readJSON(t, global))
	fi, err := os.Stat(global)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "mcp.json may hold credentials")

	// The bearer token becomes pi's Authorization header; a command after
	// the name without -- is the command, its flags its own.
	code, _, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "add", "docs", "--url", "http://127.0.0.1:9/mcp?a=1&b=2",
		"--header", "X-Team=core", "--bearer-token-env-var", "DOCS_TOKEN", "--oauth-client-registration", "dcr",
		"--description", "Product docs")
	require.Equal(t, 0, code, stderr)
	code, _, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "add", "git", "--exposure", "codemode-deferred", "no-such-uvx", "mcp-server-git", "--repository", ".")
	require.Equal(t, 0, code, stderr)
	servers := readJSON(t, global)["mcpServers"].(map[string]any)
	assert.Equal(t, map[string]any{
		"url":         "http://127.0.0.1:9/mcp?a=1&b=2",
		"headers":     map[string]any{"X-Team": "core", "Authorization": "Bearer ${DOCS_TOKEN}"},
		"oauth":       map[string]any{"clientRegistration": "dcr"},
		"description": "Product docs",
	}, servers["docs"])
	assert.Equal(t, map[string]any{"command": "no-such-uvx", "args": []any{"mcp-server-git", "--repository", "."}, "exposure": "codemode"}, servers["git"],
		"the alias is written as its current name, as pi writes it")
	b, _ := os.ReadFile(global)
	assert.Contains(t, string(b), "?a=1&b=2", "no \\u0026 in the file")

	// -l writes the project's file; untrusted, it is said to be ignored.
	code, out, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "add", "-l", "docs", "--url", "http://127.0.0.1:9/mcp")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "Added project MCP server \"docs\" in "+project+".\n")
	assert.Contains(t, out, project+" is ignored because the project is not trusted")

	// list connects: none of these servers can start, so it exits 1 and
	// says why under each.
	code, out, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "list")
	require.Equal(t, 1, code, stderr)
	lines := strings.Split(out, "\n")
	require.GreaterOrEqual(t, len(lines), 9, out)
	assert.Equal(t, "fs: failed (direct, global)", lines[0])
	assert.Equal(t, "  no-such-mcp-server -y @modelcontextprotocol/server-filesystem --flag .", lines[1])
	assert.Contains(t, lines[2], `env "API_KEY" from environment variable: FS_KEY`, "the error is the connection's")
	assert.Contains(t, out, "docs: failed (codemode, global)\n  http://127.0.0.1:9/mcp?a=1&b=2\n  ")
	assert.Contains(t, out, "git: failed (codemode, global)\n  no-such-uvx mcp-server-git --repository .\n  ")
	assert.Contains(t, out, project+` is ignored because the project is not trusted: add it to `+filepath.Join(agentDir, "trust.json")+` or set defaultProjectTrust to "always" (docs/rpc.md, project trust).
`)
	assert.Contains(t, stderr, "a session reaches tools with codemode exposure (pi's default) from codemode scripts when codemode is on")

	// Trusted, the project's docs replaces the user's, and a bare entry
	// overrides the user's git.
	trust()
	require.NoError(t, os.WriteFile(project, []byte(`{"mcpServers": {
		"docs": {"url": "http://127.0.0.1:9/mcp", "exposure": "deferred"},
		"git": {"enabled": false, "toolExposure": {"git_log": "direct", "git_*": "hidden"}}
	}}`), 0o644))
	code, out, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "list", "--json")
	require.Equal(t, 1, code, stderr)
	var listed struct {
		Servers []map[string]any
		Errors  []string
	}
	require.NoError(t, json.Unmarshal([]byte(out), &listed), out)
	require.Len(t, listed.Servers, 3)
	docs := listed.Servers[1]
	assert.Contains(t, docs["error"], "127.0.0.1:9")
	delete(docs, "error")
	assert.Equal(t, map[string]any{
		"name": "docs", "scope": "project", "source": project, "enabled": true, "exposure": "deferred",
		"transport": "http://127.0.0.1:9/mcp", "state": "failed", "tools": []any{},
	}, docs)
	assert.Equal(t, map[string]any{
		"name": "git", "scope": "global", "source": global, "override": project, "enabled": false, "exposure": "codemode",
		"transport": "no-such-uvx mcp-server-git --repository .", "state": "disabled", "tools": []any{},
	}, listed.Servers[2])
	assert.Empty(t, listed.Errors)
	code, out, _ = runBinaryOut(t, cwd, agentDir, "mcp", "list")
	require.Equal(t, 1, code)
	assert.Contains(t, out, "git: disabled (codemode, global)\n  no-such-uvx mcp-server-git --repository .\n"+
		"  project override: "+project+"\n")

	// remove: from the file asked for; the other file is named when the
	// server is only there.
	code, out, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "remove", "fs", "-l")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, "gopi mcp: no project MCP server named \"fs\" in "+project+". It is defined in "+global+"; omit --local.\n", stderr)
	code, out, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "remove", "fs")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "Removed global MCP server \"fs\" from "+global+".\n", out)
	assert.NotContains(t, readJSON(t, global)["mcpServers"], "fs")
	code, _, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "remove", "fs")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `no global MCP server named "fs"`)
}

// Issue 29: list connects to each enabled server and shows pi's report:
// the tools of a connected one (with those whose exposure is not the
// server's), why another failed, a disabled one untouched; it exits 1
// while an enabled server does not connect, 0 once all do. No server
// outlives the command.
func TestMCPListConnects(t *testing.T) {
	t.Parallel()
	bin := mcpServerBinary(t)
	cwd, agentDir, _ := mcpDirs(t)
	global := filepath.Join(agentDir, "mcp.json")
	pidFile := filepath.Join(t.TempDir(), "pid")
	write := func(servers string) {
		require.NoError(t, os.WriteFile(global, []byte(`{"mcpServers": {`+servers+`}}`), 0o644))
	}
	test := `"test": {"command": "` + bin + `", "args": ["-pidfile", "` + pidFile + `"], "exposure": "direct",
		"toolExposure": {"echo": "direct", "b*": "hidden"}}`
	write(test + `,
		"broken": {"command": "sh", "args": ["-c", "echo cannot start >&2; exit 3"], "exposure": "direct"},
		"off": {"command": "no-such-server", "enabled": false}`)

	code, out, stderr := runBinaryOut(t, cwd, agentDir, "mcp", "list")
	assert.Equal(t, 1, code, stderr)
	assert.Regexp(t, `^test: connected, 11 tools \(direct, global\)
  `+regexp.QuoteMeta(bin)+` -pidfile .*
  tools: add_tool, big \[hidden\], crash, echo, fail, image, link, log, progress, slow, structured
broken: failed \(direct, global\)
  sh -c echo cannot start >&2; exit 3
  connecting: .*
  stderr:
  cannot start
off: disabled \(codemode, global\)
  no-such-server
$`, out)
	assert.False(t, testenv.Alive(testenv.ReadPID(t, pidFile)), "the server was stopped")

	write(test + `, "notes": {"command": "` + bin + `", "args": ["-resources-only"]}`)
	code, out, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "list")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "notes: connected, 0 tools (codemode, global)\n  "+bin+" -resources-only\n  offers resources\n")
	code, out, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "list", "--json")
	require.Equal(t, 0, code, stderr)
	var listed struct {
		Servers []map[string]any
		Errors  []string
	}
	require.NoError(t, json.Unmarshal([]byte(out), &listed), out)
	require.Len(t, listed.Servers, 2)
	assert.Equal(t, true, listed.Servers[1]["resources"])
	s := listed.Servers[0]
	assert.Equal(t, "connected", s["state"])
	assert.Len(t, s["tools"], 11)
	assert.Equal(t, map[string]any{"big": "hidden"}, s["toolExposure"])
	assert.NotContains(t, s, "error")
	assert.False(t, testenv.Alive(testenv.ReadPID(t, pidFile)), "the server was stopped")
}

// Issue 29: an invalid entry is reported, the others still listed, and
// list exits 1, as pi's does.
func TestMCPListReportsInvalidEntries(t *testing.T) {
	t.Parallel()
	cwd, agentDir, _ := mcpDirs(t)
	global := filepath.Join(agentDir, "mcp.json")
	require.NoError(t, os.WriteFile(global, []byte(`{"mcpServers": {
		"legacy": {"type": "sse", "url": "https://example.com/sse"},
		"ok": {"command": "srv", "exposure": "hidden"},
		"my_ok": {"command": "srv2"},
		"bad name": {"command": "x"}
	}}`), 0o644))
	code, out, _ := runBinaryOut(t, cwd, agentDir, "mcp", "list")
	assert.Equal(t, 1, code)
	assert.Equal(t, `ok: failed (hidden, global)
  srv
  connecting: exec: "srv": executable file not found in $PATH
my_ok: failed (codemode, global)
  srv2
  connecting: exec: "srv2": executable file not found in $PATH
config error: `+global+`: server "legacy": legacy SSE transport is not supported; use the streamable HTTP URL (servers that document an SSE endpoint often serve streamable HTTP at /mcp instead of /sse)
config error: `+global+`: invalid server name "bad name" (use letters, digits, "_" and "-")
`, out)

	// An empty configuration says where servers go.
	code, out, _ = runBinaryOut(t, cwd, t.TempDir(), "mcp", "list")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "No MCP servers configured.")
}

func TestMCPCommandErrors(t *testing.T) {
	t.Parallel()
	cwd, agentDir, _ := mcpDirs(t)
	global := filepath.Join(agentDir, "mcp.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"add"}, "add needs a server name and either --url URL or -- COMMAND [ARGS...]"},
		{[]string{"add", "x"}, "add needs a server name and either --url URL or -- COMMAND [ARGS...]"},
		{[]string{"add", "x", "--url", "https://x", "--", "cmd"}, "add needs a server name and either --url URL or -- COMMAND [ARGS...]"},
		{[]string{"add", "x", "--url"}, "--url needs a value"},
		{[]string{"add", "x", "--bogus", "1", "--", "cmd"}, "unknown option --bogus"},
		{[]string{"add", "x", "--header", "A=b", "--", "cmd"}, "--header only applies to HTTP servers (--url)"},
		{[]string{"add", "x", "--url", "https://x", "--env", "A=b"}, "--env only applies to stdio servers"},
		{[]string{"add", "x", "--env", "novalue", "--", "cmd"}, `--env expects KEY=VALUE, got "novalue"`},
		{[]string{"add", "bad name", "--", "cmd"}, `invalid server name "bad name" (use letters, digits, "_" and "-")`},
		{[]string{"add", "x", "--url", "ftp://x"}, `server "x": url must be an http or https URL`},
		{[]string{"add", "x", "--exposure", "sometimes", "--", "cmd"}, `server "x": exposure must be one of "codemode", "deferred", "direct", "hidden"`},
		{[]string{"add", "x", "--url", "https://x", "--oauth-callback-port", "http"}, `server "x": oauth.callbackPort must be a port number`},
		{[]string{"add", "x", "--url", "https://x", "--oauth-client-registration", "maybe"}, `server "x": oauth.clientRegistration must be "auto", "dcr", or "cimd"`},
		{[]string{"remove"}, "remove needs one server name"},
		{[]string{"list", "x"}, "list takes no server name"},
		{[]string{"list", "--all"}, "unknown option --all"},
		{[]string{"login", "x"}, `no MCP server named "x". Configured: none.`},
		{[]string{"login"}, "login needs one server name"},
		{[]string{"logout", "x", "--timeout", "3"}, "unknown option --timeout"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	} {
		code, out, stderr := runBinaryOut(t, cwd, agentDir, append([]string{"mcp"}, tc.args...)...)
		assert.Equal(t, 1, code, "%v", tc.args)
		assert.Empty(t, out, "%v", tc.args)
		assert.True(t, strings.HasPrefix(stderr, "gopi mcp: "), stderr)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
	}
	_, err := os.Stat(global)
	assert.ErrorIs(t, err, os.ErrNotExist, "no failed add wrote the file")

	// A second name that differs only in - and _ is one server.
	code, _, stderr := runBinaryOut(t, cwd, agentDir, "mcp", "add", "my-srv", "--", "a")
	require.Equal(t, 0, code, stderr)
	code, _, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "add", "my_srv", "--", "b")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `server "my_srv" conflicts with "my-srv" in `+global)

	// A broken file is left alone.
	require.NoError(t, os.WriteFile(global, []byte(`{"mcpServers": [`), 0o644))
	code, _, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "add", "x", "--", "a")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "could not update "+global)
	b, _ := os.ReadFile(global)
	assert.Equal(t, `{"mcpServers": [`, string(b))

	code, out, _ := runBinaryOut(t, cwd, agentDir, "mcp", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "gopi mcp add NAME [options] -- COMMAND [ARGS...]")
	assert.Contains(t, out, "--bearer-token-env-var NAME")
	assert.Contains(t, out, "gopi mcp login NAME [-l] [--timeout SECONDS]")
	assert.Contains(t, out, "gopi prints the\n                  authorization URL (it opens no browser)")
}

// Issue 29: list reaches a streamable HTTP server too, with its headers
// expanded from the environment.
func TestMCPListConnectsOverHTTP(t *testing.T) {
	t.Parallel()
	url := mcpHTTPServer(t)
	cwd, agentDir, _ := mcpDirs(t)
	require.NoError(t, os.WriteFile(filepath.Join(agentDir, "mcp.json"), []byte(`{"mcpServers": {
		"web": {"url": "`+url+`", "exposure": "deferred", "headers": {"X-Team": "${HOME}"}}
	}}`), 0o644))
	code, out, stderr := runBinaryOut(t, cwd, agentDir, "mcp", "list")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "web: connected, 12 tools (deferred, global)\n  "+url+
		"\n  tools: add_tool, big, crash, echo, fail, header, image, link, log, progress, slow, structured\n", out)
}

// mcpHTTPServer starts the test MCP server over streamable HTTP for the
// test's time and returns its URL.
func mcpHTTPServer(t *testing.T) string {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	srv := exec.Command(mcpServerBinary(t), "-http", "127.0.0.1:0", "-addrfile", addrFile)
	require.NoError(t, srv.Start())
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
	})
	var url string
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(addrFile)
		url = strings.TrimSpace(string(b))
		return err == nil && url != ""
	}, 10*time.Second, 10*time.Millisecond)
	return url
}
