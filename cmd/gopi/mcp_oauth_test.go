package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/mcp/testdata/oauthserver"
)

// login runs `gopi mcp login` with args and, as the user's browser,
// opens the authorization URL it prints (when browse is set) and follows
// the redirects back to gopi's loopback server. It returns the exit
// status and what gopi wrote.
func login(t *testing.T, cwd, agentDir string, browse bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(gopiBinary(t), append([]string{"mcp", "login"}, args...)...)
	cmd.Dir = cwd
	cmd.Env = append(binaryEnv(), "PI_CODING_AGENT_DIR="+agentDir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errBuf syncBuffer
	cmd.Stderr = &errBuf
	require.NoError(t, cmd.Start())
	var outBuf bytes.Buffer
	opened := make(chan error, 1)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		outBuf.WriteString(line + "\n")
		if browse && strings.HasPrefix(line, "http") {
			go func() {
				resp, err := http.Get(line)
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if !strings.Contains(string(b), "Signed in to the MCP server") {
						err = fmt.Errorf("the callback page says %q", b)
					}
				}
				opened <- err
			}()
		}
	}
	err = cmd.Wait()
	raceFree(t, errBuf.String())
	if browse {
		select {
		case err := <-opened:
			require.NoError(t, err, "the browser")
		default:
			t.Errorf("gopi printed no authorization URL: %s\n%s", outBuf.String(), errBuf.String())
		}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), outBuf.String(), errBuf.String()
	}
	require.NoError(t, err)
	return 0, outBuf.String(), errBuf.String()
}

// authState is the server's entry of mcp-auth.json.
func authState(t *testing.T, agentDir, name, url string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(agentDir, "mcp-auth.json"))
	require.NoError(t, err)
	var all map[string]map[string]any
	require.NoError(t, json.Unmarshal(b, &all))
	return all["mcp__"+name+"|"+url]
}

// Issue 29: OAuth through the binary. A server that answers 401 needs
// sign-in in `gopi mcp list`; `gopi mcp login` prints the authorization
// URL, takes the browser's answer on its loopback redirect, stores pi's
// state in mcp-auth.json (0600) and connects; list then connects with the
// token, refreshes an expired one (and stores it), and `gopi mcp logout`
// deletes it.
func TestMCPOAuthLoginListLogout(t *testing.T) {
	t.Parallel()
	as := oauthserver.New(t, oauthserver.Options{})
	cwd, agentDir, _ := mcpDirs(t)
	require.NoError(t, os.WriteFile(filepath.Join(agentDir, "mcp.json"), []byte(`{"mcpServers": {
		"docs": {"url": "`+as.MCPURL+`", "exposure": "deferred"}
	}}`), 0o644))
	authFile := filepath.Join(agentDir, "mcp-auth.json")

	code, out, stderr := runBinaryOut(t, cwd, agentDir, "mcp", "list")
	assert.Equal(t, 1, code, stderr)
	assert.Equal(t, "docs: needs sign-in (deferred, global)\n  "+as.MCPURL+"\n  sign in with: gopi mcp login docs\n", out)
	code, out, _ = runBinaryOut(t, cwd, agentDir, "mcp", "list", "--json")
	assert.Equal(t, 1, code)
	var listed struct{ Servers []map[string]any }
	require.NoError(t, json.Unmarshal([]byte(out), &listed), out)
	assert.Equal(t, "needs-auth", listed.Servers[0]["state"], "pi's value")
	assert.NotContains(t, listed.Servers[0], "error")

	code, out, stderr = login(t, cwd, agentDir, true, "docs")
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 3, out)
	assert.Equal(t, `Sign in to MCP server "docs" in your browser:`, lines[0])
	assert.True(t, strings.HasPrefix(lines[1], as.Issuer+"/authorize?"), lines[1])
	assert.Equal(t, `Signed in to MCP server "docs" (2 tools).`, lines[2])
	assert.Regexp(t, `waiting for the browser to come back to http://127\.0\.0\.1:\d+/callback \(at most 5m0s; Ctrl-C cancels\)`, stderr)
	assert.NotContains(t, stderr, "paste", "stdin is no terminal: nothing to paste into")

	fi, err := os.Stat(authFile)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "tokens are the owner's alone")
	state := authState(t, agentDir, "docs", as.MCPURL)
	require.NotNil(t, state, "pi's key, mcp__<server>|<url>")
	tokens := state["tokens"].(map[string]any)
	access := tokens["access_token"].(string)
	assert.True(t, as.Valid(access))
	assert.NotEmpty(t, tokens["refresh_token"])
	assert.Contains(t, state, "tokensExpireAt")
	assert.NotEmpty(t, state["clientInformation"].(map[string]any)["client_id"])

	code, out, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "list")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "docs: connected, 2 tools (deferred, global)\n  "+as.MCPURL+"\n  tools: echo, tool1\n", out)

	// A second login finds the token good.
	code, out, _ = login(t, cwd, agentDir, false, "docs")
	assert.Equal(t, 0, code)
	assert.Equal(t, "Already signed in to MCP server \"docs\" (2 tools).\n", out)

	// The token expired, by the server's clock and by the stored expiry:
	// list refreshes it and stores the new one.
	as.ExpireAccessTokens()
	b, err := os.ReadFile(authFile)
	require.NoError(t, err)
	var all map[string]map[string]any
	require.NoError(t, json.Unmarshal(b, &all))
	all["mcp__docs|"+as.MCPURL]["tokensExpireAt"] = time.Now().Add(-time.Hour).UnixMilli()
	b, err = json.Marshal(all)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(authFile, b, 0o600))
	code, out, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "list")
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
	assert.Contains(t, out, "docs: connected, 2 tools")
	assert.Equal(t, 1, as.Refreshes())
	refreshed := authState(t, agentDir, "docs", as.MCPURL)["tokens"].(map[string]any)["access_token"].(string)
	assert.NotEqual(t, access, refreshed)
	assert.True(t, as.Valid(refreshed), "the refreshed token was stored")
	fi, err = os.Stat(authFile)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	code, out, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "logout", "docs")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "Signed out of MCP server \"docs\".\n", out)
	assert.Nil(t, authState(t, agentDir, "docs", as.MCPURL))
	code, out, _ = runBinaryOut(t, cwd, agentDir, "mcp", "logout", "docs")
	assert.Equal(t, 0, code)
	assert.Equal(t, "No stored credentials for MCP server \"docs\".\n", out)
	code, out, _ = runBinaryOut(t, cwd, agentDir, "mcp", "list")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "docs: needs sign-in (deferred, global)")
}

// A sign-in that nobody finishes ends at --timeout, and Ctrl-C ends it
// at once; both say so and exit 1. What is not an OAuth server is told.
func TestMCPOAuthLoginEnds(t *testing.T) {
	as := oauthserver.New(t, oauthserver.Options{})
	cwd, agentDir, _ := mcpDirs(t)
	require.NoError(t, os.WriteFile(filepath.Join(agentDir, "mcp.json"), []byte(`{"mcpServers": {
		"docs": {"url": "`+as.MCPURL+`"},
		"keyed": {"url": "`+as.MCPURL+`", "headers": {"Authorization": "Bearer x"}},
		"local": {"command": "srv"}
	}}`), 0o644))

	gopiBinary(t) // built before the clock starts: the first test to need it builds it
	start := time.Now()
	code, out, stderr := login(t, cwd, agentDir, false, "docs", "--timeout", "1")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, as.Issuer+"/authorize?")
	assert.Contains(t, stderr, `gopi mcp: sign-in to MCP server "docs" was cancelled or not completed within 1s.`)
	assert.Less(t, time.Since(start), 15*time.Second)

	cmd := exec.Command(gopiBinary(t), "mcp", "login", "docs")
	cmd.Dir = cwd
	cmd.Env = append(binaryEnv(), "PI_CODING_AGENT_DIR="+agentDir)
	pipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errBuf syncBuffer
	cmd.Stderr = &errBuf
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "http") {
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, errBuf.String(), "was cancelled or not completed within 5m0s")

	for name, want := range map[string]string{
		"keyed":   `MCP server "keyed" does not use OAuth. Only HTTP servers without an Authorization header do.`,
		"local":   `MCP server "local" does not use OAuth.`,
		"nothere": `no MCP server named "nothere". Configured: docs, keyed, local.`,
	} {
		code, out, stderr := runBinaryOut(t, cwd, agentDir, "mcp", "login", name)
		assert.Equal(t, 1, code, name)
		assert.Empty(t, out)
		assert.Contains(t, stderr, want, name)
		code, _, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "logout", name)
		assert.Equal(t, 1, code, name)
		assert.Contains(t, stderr, want, name)
	}
	code, _, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "login", "docs", "-l")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `MCP server "docs" is defined in `+filepath.Join(agentDir, "mcp.json")+`, not in the project; omit --local.`)
	_, err = os.Stat(filepath.Join(agentDir, "mcp-auth.json"))
	assert.True(t, os.IsNotExist(err), "nothing was stored")
}

// Issue 29: in a session, a server that needs sign-in says so in
// get_mcp_servers; once `gopi mcp login` stored a token (another
// process), the session's next prompt connects it.
func TestRPCMCPOAuthSession(t *testing.T) {
	t.Parallel()
	as := oauthserver.New(t, oauthserver.Options{})
	w := newWorld(t)
	w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"docs": map[string]any{"url": as.MCPURL, "exposure": "direct"},
	}})
	p := startProc(t, w.cwd, w.agentDir, "--mode", "rpc", "--model", "faux/faux-fast", "--no-session")
	n := 0
	get := func() any { n++; return p.ok(fmt.Sprint(n), map[string]any{"type": "get_mcp_servers"}) }
	docs := mcpServersByName(t, get)["docs"]
	assert.Equal(t, "needs-auth", docs["state"])
	assert.Equal(t, "needs sign-in: run `gopi mcp login docs`", docs["error"])
	assert.Equal(t, []any{}, docs["tools"])
	require.Eventually(t, func() bool {
		return strings.Contains(p.stderr.String(), "mcp server \"docs\": needs sign-in: run `gopi mcp login docs`")
	}, waitLimit, 10*time.Millisecond, "reported once the session started")

	code, out, stderr := login(t, w.cwd, w.agentDir, true, "docs")
	require.Equal(t, 0, code, "%s\n%s", out, stderr)

	p.ok("p1", map[string]any{"type": "prompt", "message": "reply: hello"})
	p.idle()
	docs = mcpServersByName(t, get)["docs"]
	assert.Equal(t, "connected", docs["state"], "%v", docs)
	assert.Len(t, docs["tools"], 2)
	assert.Equal(t, 0, p.exit())
}

// Issue 29: gopi and pi 1.6.0 share sign-ins through mcp-auth.json: pi
// connects with the token gopi stored and refreshes it as the client gopi
// registered; gopi then uses and refreshes what pi stored; pi's logout
// leaves gopi's session needing sign-in. (Runs with pi: make test-node.)
func TestMCPOAuthSharedWithPi(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	as := oauthserver.New(t, oauthserver.Options{})
	cwd, agentDir, _ := mcpDirs(t)
	require.NoError(t, os.WriteFile(filepath.Join(agentDir, "mcp.json"), []byte(`{"mcpServers": {
		"docs": {"url": "`+as.MCPURL+`", "exposure": "deferred"}
	}}`), 0o644))
	pi := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(e.node, append([]string{filepath.Join(e.piPackage, "dist", "bundle", "cli.js"), "mcp"}, args...)...)
		cmd.Dir = cwd
		cmd.Env = append(os.Environ(), "PI_CODING_AGENT_DIR="+agentDir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "pi mcp %v: %s", args, out)
		return string(out)
	}
	expire := func() {
		t.Helper()
		as.ExpireAccessTokens()
		authFile := filepath.Join(agentDir, "mcp-auth.json")
		b, err := os.ReadFile(authFile)
		require.NoError(t, err)
		var all map[string]map[string]any
		require.NoError(t, json.Unmarshal(b, &all))
		all["mcp__docs|"+as.MCPURL]["tokensExpireAt"] = time.Now().Add(-time.Hour).UnixMilli()
		b, err = json.Marshal(all)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(authFile, b, 0o600))
	}

	code, out, stderr := login(t, cwd, agentDir, true, "docs")
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
	assert.Contains(t, pi("list"), "docs: connected, 2 tools", "pi uses gopi's token")
	expire()
	assert.Contains(t, pi("list"), "docs: connected, 2 tools", "pi refreshes it as gopi's client")
	assert.Equal(t, 1, as.Refreshes())
	expire()
	code, out, stderr = runBinaryOut(t, cwd, agentDir, "mcp", "list")
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
	assert.Equal(t, 2, as.Refreshes(), "gopi refreshes what pi stored")
	assert.Contains(t, pi("logout", "docs"), `Signed out of MCP server "docs".`)
	code, out, _ = runBinaryOut(t, cwd, agentDir, "mcp", "list")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "docs: needs sign-in")
}
