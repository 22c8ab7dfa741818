package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/mcp/testdata/oauthserver"
)

// oauthManager connects one OAuth server named "docs" with tokens from
// store and waits for its first attempt.
func oauthManager(t *testing.T, store *AuthStore, s Server) (*Manager, *recorder) {
	t.Helper()
	rec := newRecorder()
	m := NewManager(Options{Servers: []Entry{{Name: "docs", Server: s}}, Cwd: t.TempDir(), TempDir: t.TempDir(),
		Version: "test", Auth: store, Report: rec.report})
	m.Subscribe(rec.changed)
	m.Start()
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, m.Wait(ctx, nil))
	return m, rec
}

// browse is the browser: it opens the authorization URL and follows the
// redirects back to gopi's loopback server.
func browse(t *testing.T) func(authURL, redirect string) {
	return func(authURL, _ string) {
		go func() {
			resp, err := http.Get(authURL)
			if err != nil {
				t.Errorf("browser: %v", err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
}

// browseExpecting is browse for a sign-in that gets an answer: the page
// the loopback server writes must reach the browser whole, though the
// sign-in ends (and closes the server) as soon as it has the answer.
func browseExpecting(t *testing.T, page string) func(authURL, redirect string) {
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	return func(authURL, _ string) {
		wg.Go(func() {
			resp, err := http.Get(authURL)
			if err != nil {
				t.Errorf("browser: %v", err)
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Errorf("browser: reading the page: %v", err)
				return
			}
			assert.Contains(t, string(body), page)
		})
	}
}

func signIn(t *testing.T, store *AuthStore, s Server, prompt func(string, string)) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return SignIn(ctx, SignInOptions{Name: "docs", Server: s, Store: store, Version: "test", Prompt: prompt})
}

// storedState is the server's entry of mcp-auth.json as JSON.
func storedState(t *testing.T, store *AuthStore, url string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(store.Path())
	require.NoError(t, err)
	var all map[string]map[string]any
	require.NoError(t, json.Unmarshal(b, &all))
	return all["mcp__docs|"+url]
}

// Issue 29: a server that answers 401 needs sign-in; SignIn registers a
// client, sends the browser to the authorization server, exchanges the
// code and stores pi's state; then sessions connect with the token,
// refresh it when it expires (before sending it, or after a 401), and
// need sign-in again once the refresh token is void.
func TestOAuthSignInAndSessions(t *testing.T) {
	as := oauthserver.New(t, oauthserver.Options{Tools: 3})
	store := NewAuthStore(t.TempDir())
	srv := Server{URL: as.MCPURL, Exposure: ExposureDirect}

	m, rec := oauthManager(t, store, srv)
	st := m.Statuses()[0]
	assert.Equal(t, StateNeedsAuth, st.State)
	require.ErrorIs(t, st.Err, ErrSignInRequired)
	assert.Equal(t, "mcp server \"docs\": needs sign-in: run `gopi mcp login docs`", st.Err.Error())
	assert.Contains(t, rec.reported(), "needs sign-in")

	var shown, redirect string
	n, err := signIn(t, store, srv, func(u, r string) {
		shown, redirect = u, r
		browse(t)(u, r)
	})
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+/callback$`, redirect, "an ephemeral loopback port")
	assert.Contains(t, shown, as.Issuer+"/authorize?")
	q := as.LastAuthorize()
	assert.Equal(t, "S256", q.Get("code_challenge_method"))
	assert.NotEmpty(t, q.Get("state"))
	assert.Equal(t, as.MCPURL, q.Get("resource"))
	regs := as.Registrations()
	require.Len(t, regs, 1)
	assert.Equal(t, "gopi", regs[0]["client_name"])
	assert.Equal(t, []any{redirect}, regs[0]["redirect_uris"])

	fi, err := os.Stat(store.Path())
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	state := storedState(t, store, as.MCPURL)
	require.NotNil(t, state, "pi's key: namespace and URL")
	assert.Equal(t, as.MCPURL, state["serverUrl"])
	tokens := state["tokens"].(map[string]any)
	assert.Equal(t, "Bearer", tokens["token_type"])
	assert.Equal(t, float64(3600), tokens["expires_in"])
	assert.NotEmpty(t, tokens["refresh_token"])
	access := tokens["access_token"].(string)
	assert.True(t, as.Valid(access))
	assert.InDelta(t, float64(time.Now().Add(time.Hour).UnixMilli()), state["tokensExpireAt"], 60000)
	client := state["clientInformation"].(map[string]any)
	assert.Equal(t, []any{redirect}, client["redirect_uris"])
	assert.Equal(t, "none", client["token_endpoint_auth_method"])
	disc := state["discovery"].(map[string]any)
	assert.Equal(t, as.Issuer, disc["authorizationServerUrl"])
	assert.Equal(t, as.Issuer+"/token", disc["authorizationServerMetadata"].(map[string]any)["token_endpoint"])
	assert.Equal(t, as.MCPURL, disc["resourceMetadata"].(map[string]any)["resource"])

	// A session connects with the stored token.
	m2, _ := oauthManager(t, store, srv)
	require.Equal(t, StateConnected, m2.Statuses()[0].State, "%v", m2.Statuses()[0].Err)
	assert.Len(t, m2.Tools(), 3)

	// The server voids the token: the 401 is answered by a refresh, the
	// new token is stored and the request goes again.
	as.ExpireAccessTokens()
	res := call(t, context.Background(), tool(t, m2, "mcp__docs__echo"), map[string]any{"text": "after expiry"})
	assert.False(t, res.IsError, "%v", res)
	assert.Equal(t, 1, as.Refreshes())
	refreshed := storedState(t, store, as.MCPURL)["tokens"].(map[string]any)["access_token"].(string)
	assert.NotEqual(t, access, refreshed)
	assert.True(t, as.Valid(refreshed))

	// A token that expires by its own clock is refreshed before it goes
	// out: no 401 at all.
	require.NoError(t, store.update("docs", as.MCPURL, func(s *authState) bool {
		s.put("tokensExpireAt", time.Now().Add(-time.Minute).UnixMilli())
		return true
	}))
	as.ExpireAccessTokens()
	m3, _ := oauthManager(t, store, srv)
	require.Equal(t, StateConnected, m3.Statuses()[0].State, "%v", m3.Statuses()[0].Err)
	assert.Equal(t, 2, as.Refreshes())

	// The refresh token is void too: the session needs sign-in, and the
	// tokens that no longer work are forgotten.
	as.ExpireAccessTokens()
	as.RevokeRefreshTokens()
	m4, _ := oauthManager(t, store, srv)
	st = m4.Statuses()[0]
	assert.Equal(t, StateNeedsAuth, st.State, "%v", st.Err)
	assert.NotContains(t, storedState(t, store, as.MCPURL), "tokens")
	assert.Contains(t, storedState(t, store, as.MCPURL), "clientInformation", "the registration stays")

	// A call on a connected session whose token dies for good: the
	// server needs sign-in, and the result says how.
	res = call(t, context.Background(), tool(t, m3, "mcp__docs__echo"), map[string]any{"text": "x"})
	assert.True(t, res.IsError)
	assert.Contains(t, fmt.Sprint(res.Content), "requires sign-in: run `gopi mcp login docs`")
	assert.Equal(t, StateNeedsAuth, m3.Statuses()[0].State)

	// Signing in again keeps the registered client: its redirect URI's
	// port is preferred.
	_, err = signIn(t, store, srv, browse(t))
	require.NoError(t, err)
	assert.Len(t, as.Registrations(), 1, "the stored client was used again")

	// The session that needed sign-in connects at its next prompt.
	m4.RetrySignedIn(context.Background())
	assert.Equal(t, StateConnected, m4.Statuses()[0].State, "%v", m4.Statuses()[0].Err)

	removed, err := store.Remove("docs", as.MCPURL)
	require.NoError(t, err)
	assert.True(t, removed)
	assert.Nil(t, storedState(t, store, as.MCPURL))
	removed, err = store.Remove("docs", as.MCPURL)
	require.NoError(t, err)
	assert.False(t, removed)
}

// A client registered beforehand (clientId, its secret from the
// environment) on a fixed callback port: no registration, the redirect
// is the configured one, the secret authenticates the code exchange.
func TestOAuthPreregisteredClient(t *testing.T) {
	as := oauthserver.New(t, oauthserver.Options{ClientID: "my-client", ClientSecret: "s3cret", NoRegistration: true})
	store := NewAuthStore(t.TempDir())
	port := freePort(t)
	t.Setenv("DOCS_SECRET", "s3cret")
	srv := Server{URL: as.MCPURL, OAuth: &OAuth{ClientID: "my-client", ClientSecret: "${DOCS_SECRET}", CallbackPort: port}}
	var redirect string
	_, err := signIn(t, store, srv, func(u, r string) { redirect = r; browse(t)(u, r) })
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:"+strconv.Itoa(port)+"/callback", redirect)
	assert.Empty(t, as.Registrations())
	assert.Equal(t, "my-client", as.LastAuthorize().Get("client_id"))
	assert.NotContains(t, storedState(t, store, as.MCPURL), "clientInformation", "a configured client is not stored")

	// Refreshes authenticate as the configured client.
	as.ExpireAccessTokens()
	m, _ := oauthManager(t, store, srv)
	require.Equal(t, StateConnected, m.Statuses()[0].State, "%v", m.Statuses()[0].Err)
	assert.Equal(t, 1, as.Refreshes())

	// callbackUrl on localhost with its own path, sent as written.
	as.ExpireAccessTokens()
	srv.OAuth = &OAuth{ClientID: "my-client", ClientSecret: "s3cret", CallbackURL: fmt.Sprintf("http://localhost:%d/oauth/done", port)}
	_, err = signIn(t, store, srv, func(u, r string) { redirect = r; browse(t)(u, r) })
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("http://localhost:%d/oauth/done", port), redirect)
}

// A server that asks for more scope (403 insufficient_scope) needs
// sign-in, not a refresh; the sign-in asks for the new scopes and the
// ones granted so far, with the configured scope.
func TestOAuthStepUp(t *testing.T) {
	as := oauthserver.New(t, oauthserver.Options{Scopes: []string{"read"}})
	store := NewAuthStore(t.TempDir())
	srv := Server{URL: as.MCPURL, OAuth: &OAuth{Scope: "profile"}}
	_, err := signIn(t, store, srv, browse(t))
	require.NoError(t, err)
	// (The SDK merges scopes through a map: their order is random.)
	assert.ElementsMatch(t, []string{"profile", "read"}, strings.Fields(as.LastAuthorize().Get("scope")),
		"the configured scope with the challenged one")
	assert.ElementsMatch(t, []string{"profile", "read"},
		strings.Fields(storedState(t, store, as.MCPURL)["tokens"].(map[string]any)["scope"].(string)))

	as.RequireScopes("write") // the challenge names only the missing scope
	m, _ := oauthManager(t, store, srv)
	st := m.Statuses()[0]
	require.Equal(t, StateNeedsAuth, st.State, "%v", st.Err)
	assert.ErrorContains(t, st.Err, "asks for more scope")
	assert.Equal(t, 0, as.Refreshes(), "a refresh keeps the scope: none is tried")

	_, err = signIn(t, store, srv, browse(t))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"profile", "read", "write"}, strings.Fields(as.LastAuthorize().Get("scope")))
	m2, _ := oauthManager(t, store, srv)
	assert.Equal(t, StateConnected, m2.Statuses()[0].State, "%v", m2.Statuses()[0].Err)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// What a sign-in cannot do is said plainly: the authorization server's
// refusal, a wait that ends, settings gopi does not support, a client
// the authorization server forgot (dropped, so the next sign-in
// registers anew).
func TestOAuthSignInFailures(t *testing.T) {
	as := oauthserver.New(t, oauthserver.Options{})
	store := NewAuthStore(t.TempDir())
	srv := Server{URL: as.MCPURL}

	as.FailAuthorization("access_denied")
	_, err := signIn(t, store, srv, browseExpecting(t, "Authorization failed. You may close this window."))
	assert.ErrorContains(t, err, "the test server says access_denied")
	as.FailAuthorization("")

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = SignIn(ctx, SignInOptions{Name: "docs", Server: srv, Store: store, Prompt: func(string, string) {}})
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	for _, o := range []*OAuth{{ClientRegistration: "cimd"}, {AuthServerMetadataURL: "https://example.com/md"}} {
		_, err = signIn(t, store, Server{URL: as.MCPURL, OAuth: o}, browse(t))
		assert.Error(t, err)
	}
	_, err = signIn(t, store, Server{URL: as.MCPURL, Headers: map[string]string{"authorization": "Bearer x"}}, browse(t))
	assert.ErrorContains(t, err, "does not use OAuth")

	_, err = signIn(t, store, srv, browseExpecting(t, "Signed in to the MCP server."))
	require.NoError(t, err)
	registered := len(as.Registrations())
	as.ForgetClients()
	as.ExpireAccessTokens()
	_, err = signIn(t, store, srv, browse(t))
	require.Error(t, err)
	assert.NotContains(t, storedState(t, store, as.MCPURL), "clientInformation")
	_, err = signIn(t, store, srv, browse(t))
	require.NoError(t, err, "registered anew")
	assert.Len(t, as.Registrations(), registered+1)
}

// A browser that cannot reach this machine: the user pastes the URL it
// was redirected to. One that is not the answer is reported and the wait
// goes on.
func TestOAuthSignInWithPastedURL(t *testing.T) {
	as := oauthserver.New(t, oauthserver.Options{})
	store := NewAuthStore(t.TempDir())
	pasted := make(chan string)
	var problems []error
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := SignIn(ctx, SignInOptions{Name: "docs", Server: Server{URL: as.MCPURL}, Store: store, Pasted: pasted,
		Problem: func(err error) { problems = append(problems, err) },
		Prompt: func(authURL, _ string) {
			go func() {
				// The browser elsewhere: it follows the authorization
				// server to the redirect and stops there.
				c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
				resp, err := c.Get(authURL)
				if err != nil {
					t.Errorf("browser: %v", err)
					return
				}
				resp.Body.Close()
				pasted <- "not a url"
				pasted <- resp.Header.Get("Location")
			}()
		}})
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	require.Len(t, problems, 1)
	assert.ErrorContains(t, problems[0], "full redirect URL")
	assert.NotNil(t, storedState(t, store, as.MCPURL)["tokens"])
}

func TestPastedAnswer(t *testing.T) {
	const redirect = "http://127.0.0.1:8765/callback"
	res, err := pastedAnswer(" http://127.0.0.1:8765/callback?code=c1&state=s1&iss=https%3A%2F%2Fas \n", redirect, "s1")
	require.NoError(t, err)
	assert.Equal(t, "c1", res.Code)
	assert.Equal(t, "https://as", res.Iss)
	for pasted, want := range map[string]string{
		"c1": "full redirect URL",
		"http://127.0.0.1:9999/callback?code=c&state=s1":  "not on this sign-in's redirect URI",
		"http://127.0.0.1:8765/callback?code=c&state=s2":  "different sign-in",
		"http://127.0.0.1:8765/callback?state=s1":         "no authorization code",
		"http://127.0.0.1:8765/callback?error=nope&state": "nope",
	} {
		_, err := pastedAnswer(pasted, redirect, "s1")
		assert.ErrorContains(t, err, want, pasted)
	}
}

func TestServerHref(t *testing.T) {
	for in, want := range map[string]string{
		"https://MCP.Example.com":           "https://mcp.example.com/",
		"https://mcp.example.com:443/mcp":   "https://mcp.example.com/mcp",
		"http://127.0.0.1:80/mcp?x=1":       "http://127.0.0.1/mcp?x=1",
		"http://localhost:8080/a/b":         "http://localhost:8080/a/b",
		"HTTP://[::1]:9000":                 "http://[::1]:9000/",
		"https://mcp.sentry.dev/mcp#anchor": "https://mcp.sentry.dev/mcp#anchor",
	} {
		got, err := serverHref(in)
		require.NoError(t, err)
		assert.Equal(t, want, got, in)
	}
	key, legacy, _, err := authKeys("my-docs", "https://mcp.example.com")
	require.NoError(t, err)
	assert.Equal(t, "mcp__my_docs|https://mcp.example.com/", key)
	assert.Equal(t, "https://mcp.example.com/", legacy)
}

// pi's file: other servers' state and fields gopi does not know survive
// gopi's writes; state under the legacy key (URL alone) is taken over;
// state for another URL is not used.
func TestAuthStoreKeepsPiState(t *testing.T) {
	dir := t.TempDir()
	store := NewAuthStore(dir)
	require.NoError(t, os.WriteFile(store.Path(), []byte(`{
  "mcp__other|https://o.example/": {"serverUrl": "https://o.example/", "tokens": {"access_token": "o", "token_type": "Bearer"}},
  "https://d.example/mcp": {"serverUrl": "https://d.example/mcp", "codeVerifier": "v", "tokens": {"access_token": "d", "token_type": "Bearer"}}
}`), 0o644))
	st, err := store.load("docs", "https://d.example/mcp")
	require.NoError(t, err)
	require.NotNil(t, st.tokens())
	assert.Equal(t, "d", st.tokens().AccessToken)
	require.NoError(t, store.update("docs", "https://d.example/mcp", func(s *authState) bool {
		s.setTokens(storedTokens{AccessToken: "d2", TokenType: "Bearer"}, time.Now())
		return true
	}))
	b, err := os.ReadFile(store.Path())
	require.NoError(t, err)
	assert.Equal(t, `{
  "mcp__other|https://o.example/": {
    "serverUrl": "https://o.example/",
    "tokens": {
      "access_token": "o",
      "token_type": "Bearer"
    }
  },
  "mcp__docs|https://d.example/mcp": {
    "serverUrl": "https://d.example/mcp",
    "codeVerifier": "v",
    "tokens": {
      "access_token": "d2",
      "token_type": "Bearer"
    }
  }
}
`, string(b))
	fi, err := os.Stat(store.Path())
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "a file others could read is made the owner's")

	st, err = store.load("docs", "https://d.example/other")
	require.NoError(t, err)
	assert.Nil(t, st.tokens())
	_, err = os.Stat(store.Path() + ".lock")
	assert.True(t, os.IsNotExist(err), "the lock is released")

	require.NoError(t, os.WriteFile(store.Path(), []byte(`{"broken`), 0o600))
	_, err = store.load("docs", "https://d.example/mcp")
	assert.ErrorContains(t, err, AuthFileName)
	b, _ = os.ReadFile(store.Path())
	assert.Equal(t, `{"broken`, string(b), "a file gopi cannot read is left alone")
	assert.False(t, strings.Contains(string(b), "d2"))
}
