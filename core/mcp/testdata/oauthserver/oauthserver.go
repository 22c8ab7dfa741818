// Package oauthserver is an OAuth-protected MCP server for the tests of
// core/mcp and cmd/gopi, never a part of gopi: the Go SDK's streamable
// HTTP handler behind its RequireBearerToken middleware, with its
// ProtectedResourceMetadataHandler (RFC 9728), and beside it a tiny
// authorization server on the same origin: metadata (RFC 8414), dynamic
// client registration (RFC 7591), an authorize endpoint that redirects
// straight back with a code (nobody has to approve anything), and a token
// endpoint for the authorization code (PKCE S256 checked) and refresh
// token grants.
package oauthserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Options shape a Server.
type Options struct {
	// TokenTTL is how long an access token lives (default an hour).
	TokenTTL time.Duration
	// ClientID and ClientSecret, when set, are a client registered
	// beforehand (any loopback redirect URI is accepted for it).
	ClientID, ClientSecret string
	// NoRegistration leaves the registration endpoint out of the metadata.
	NoRegistration bool
	// RotateRefreshTokens gives a new refresh token with each refresh and
	// voids the old one.
	RotateRefreshTokens bool
	// Scopes are the scopes the MCP endpoint requires (and advertises).
	Scopes []string
	// Tools is how many tools the server offers (default 2).
	Tools int
}

// Server is a running OAuth-protected MCP server.
type Server struct {
	*httptest.Server
	// URL is the MCP endpoint; Issuer the authorization server's.
	MCPURL, Issuer string

	opts Options

	mu            sync.Mutex
	clients       map[string]client
	codes         map[string]grant
	access        map[string]token
	refresh       map[string]grant
	registrations []map[string]any
	refreshes     int
	exchanges     int
	authorizeErr  string
	lastAuthorize url.Values
	required      []string // scopes the MCP endpoint asks for beyond Options.Scopes
}

type client struct {
	secret    string
	redirects []string // empty: any loopback URI
	forgotten bool     // the token endpoint no longer knows it
}

type grant struct {
	client, redirect, challenge, scope string
}

type token struct {
	expires time.Time
	scopes  []string
}

// New starts a server; it stops when the test ends.
func New(t interface{ Cleanup(func()) }, opts Options) *Server {
	if opts.TokenTTL == 0 {
		opts.TokenTTL = time.Hour
	}
	if opts.Tools == 0 {
		opts.Tools = 2
	}
	s := &Server{opts: opts, clients: map[string]client{}, codes: map[string]grant{}, access: map[string]token{},
		refresh: map[string]grant{}}
	if opts.ClientID != "" {
		s.clients[opts.ClientID] = client{secret: opts.ClientSecret}
	}
	mux := http.NewServeMux()
	s.Server = httptest.NewServer(mux)
	s.Issuer = s.Server.URL
	s.MCPURL = s.Server.URL + "/mcp"

	srv := mcp.NewServer(&mcp.Implementation{Name: "oauth-test", Version: "1"}, nil)
	t.Cleanup(func() {
		s.Close()
		// Sessions whose client left without a word (its token no longer
		// valid for the DELETE) end with the server.
		var sessions []*mcp.ServerSession
		for ss := range srv.Sessions() {
			sessions = append(sessions, ss)
		}
		for _, ss := range sessions {
			_ = ss.Close()
		}
	})
	for i := range opts.Tools {
		name := "echo"
		if i > 0 {
			name = fmt.Sprintf("tool%d", i)
		}
		mcp.AddTool(srv, &mcp.Tool{Name: name, Description: "Says what it got"},
			func(_ context.Context, _ *mcp.CallToolRequest, in struct {
				Text string `json:"text"`
			}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
			})
	}
	prm := s.Server.URL + "/.well-known/oauth-protected-resource/mcp"
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	protected := auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: prm, Scopes: opts.Scopes,
	})(mcpHandler)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		// A step-up: a valid token without the scopes asked for now gets
		// RFC 6750's insufficient_scope (the middleware's 403 names no
		// error).
		s.mu.Lock()
		required := s.required
		s.mu.Unlock()
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if info, err := s.verify(r.Context(), tok, r); err == nil && len(required) > 0 {
			for _, sc := range required {
				if !slices.Contains(info.Scopes, sc) {
					w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`,
						strings.Join(required, " "), prm))
					http.Error(w, "insufficient scope", http.StatusForbidden)
					return
				}
			}
		}
		protected.ServeHTTP(w, r)
	})
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:             s.MCPURL,
		AuthorizationServers: []string{s.Issuer},
		ScopesSupported:      opts.Scopes,
	}))
	mux.HandleFunc("/.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("/register", s.register)
	mux.HandleFunc("/authorize", s.authorize)
	mux.HandleFunc("/token", s.token)
	return s
}

func (s *Server) verify(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.access[tok]
	if !ok || time.Now().After(t.expires) {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: t.scopes, Expiration: t.expires}, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, code, desc string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": desc})
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	md := map[string]any{
		"issuer":                                s.Issuer,
		"authorization_endpoint":                s.Issuer + "/authorize",
		"token_endpoint":                        s.Issuer + "/token",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_post", "client_secret_basic"},
		"scopes_supported":                      s.opts.Scopes,
	}
	if !s.opts.NoRegistration {
		md["registration_endpoint"] = s.Issuer + "/register"
	}
	writeJSON(w, http.StatusOK, md)
}

func random() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var md map[string]any
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&md) != nil {
		oauthError(w, "invalid_client_metadata", "expected a JSON object")
		return
	}
	var redirects []string
	if list, ok := md["redirect_uris"].([]any); ok {
		for _, u := range list {
			if s, ok := u.(string); ok {
				redirects = append(redirects, s)
			}
		}
	}
	if len(redirects) == 0 {
		oauthError(w, "invalid_redirect_uri", "redirect_uris is required")
		return
	}
	id := "dyn-" + random()
	s.mu.Lock()
	s.clients[id] = client{redirects: redirects}
	s.registrations = append(s.registrations, md)
	s.mu.Unlock()
	out := map[string]any{}
	for k, v := range md {
		out[k] = v
	}
	out["client_id"] = id
	out["token_endpoint_auth_method"] = "none"
	writeJSON(w, http.StatusCreated, out)
}

// loopbackURI reports whether u is an http URI on a loopback host.
func loopbackURI(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "http" {
		return false
	}
	h := p.Hostname()
	return h == "127.0.0.1" || h == "localhost" || h == "::1"
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	s.lastAuthorize = q
	c, known := s.clients[q.Get("client_id")]
	failWith := s.authorizeErr
	s.mu.Unlock()
	redirect := q.Get("redirect_uri")
	switch {
	case !known:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case len(c.redirects) > 0 && !slices.Contains(c.redirects, redirect), len(c.redirects) == 0 && !loopbackURI(redirect):
		http.Error(w, "redirect_uri not registered", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "PKCE S256 is required", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(redirect)
	v := back.Query()
	v.Set("state", q.Get("state"))
	if failWith != "" {
		v.Set("error", failWith)
		v.Set("error_description", "the test server says "+failWith)
	} else {
		code := random()
		s.mu.Lock()
		s.codes[code] = grant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"),
			scope: q.Get("scope")}
		s.mu.Unlock()
		v.Set("code", code)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// clientOf authenticates the client of a token request.
func (s *Server) clientOf(r *http.Request) (string, bool) {
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	s.mu.Lock()
	c, ok := s.clients[id]
	s.mu.Unlock()
	return id, ok && !c.forgotten && c.secret == secret
}

func (s *Server) issue(w http.ResponseWriter, g grant, refresh string) {
	access := "at-" + random()
	scopes := strings.Fields(g.scope)
	s.mu.Lock()
	s.access[access] = token{expires: time.Now().Add(s.opts.TokenTTL), scopes: scopes}
	if refresh == "" || s.opts.RotateRefreshTokens {
		delete(s.refresh, refresh)
		refresh = "rt-" + random()
	}
	s.refresh[refresh] = g
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer",
		"expires_in": int(s.opts.TokenTTL / time.Second), "refresh_token": refresh, "scope": g.scope})
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		oauthError(w, "invalid_request", "POST a form")
		return
	}
	id, ok := s.clientOf(r)
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		code := r.PostForm.Get("code")
		s.mu.Lock()
		g, found := s.codes[code]
		delete(s.codes, code)
		s.exchanges++
		s.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		switch {
		case !found || g.client != id:
			oauthError(w, "invalid_grant", "unknown code")
		case g.redirect != r.PostForm.Get("redirect_uri"):
			oauthError(w, "invalid_grant", "redirect_uri differs from the authorization request's")
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			oauthError(w, "invalid_grant", "PKCE verifier does not match")
		default:
			s.issue(w, g, "")
		}
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		s.mu.Lock()
		g, found := s.refresh[rt]
		s.refreshes++
		s.mu.Unlock()
		if !found || g.client != id {
			oauthError(w, "invalid_grant", "unknown refresh token")
			return
		}
		s.issue(w, g, rt)
	default:
		oauthError(w, "unsupported_grant_type", r.PostForm.Get("grant_type"))
	}
}

// RequireScopes makes the MCP endpoint ask valid tokens for scopes (a
// step-up), with a 403 insufficient_scope naming them all.
func (s *Server) RequireScopes(scopes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.required = scopes
}

// ExpireAccessTokens makes every access token issued so far expired.
func (s *Server) ExpireAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, t := range s.access {
		t.expires = time.Now().Add(-time.Minute)
		s.access[k] = t
	}
}

// RevokeRefreshTokens voids every refresh token issued so far.
func (s *Server) RevokeRefreshTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.refresh)
}

// FailAuthorization makes the authorize endpoint answer with the OAuth
// error code ("" to stop).
func (s *Server) FailAuthorization(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authorizeErr = code
}

// ForgetClients makes the token endpoint turn down every client
// registered so far (invalid_client), as when a registration expired.
func (s *Server) ForgetClients() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, c := range s.clients {
		if id != s.opts.ClientID {
			c.forgotten = true
			s.clients[id] = c
		}
	}
}

// Refreshes is how many refresh token grants were asked for.
func (s *Server) Refreshes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshes
}

// Exchanges is how many authorization codes were exchanged.
func (s *Server) Exchanges() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exchanges
}

// Registrations are the client metadata of each registration.
func (s *Server) Registrations() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.registrations)
}

// LastAuthorize is the query of the last authorization request.
func (s *Server) LastAuthorize() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastAuthorize
}

// Valid reports whether tok is an access token the server takes now.
func (s *Server) Valid(tok string) bool {
	_, err := s.verify(context.Background(), tok, nil)
	return err == nil
}
