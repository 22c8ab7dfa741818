package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/gopi-dev/gopi/internal/lockdir"
)

// OAuth in a session is pi's: a connection sends the stored access token,
// refreshes it when it is about to expire or the server rejects it, and
// never starts a sign-in of its own. When the user has to sign in (no
// tokens, a refresh the authorization server refused, a server asking
// for more scope), the server's state is StateNeedsAuth and `gopi mcp
// login` signs in (signin.go).

// ErrSignInRequired marks a server that needs `gopi mcp login`.
var ErrSignInRequired = errors.New("needs sign-in")

// oauthRequestTimeout bounds each request to an authorization server
// (pi's 15 s), so that an unresponsive one cannot hold a refresh lock or
// a sign-in for long.
const oauthRequestTimeout = 15 * time.Second

// refreshSkew: tokens this close to their expiry are refreshed before
// they are sent (pi's 30 s).
const refreshSkew = 30 * time.Second

// UsesOAuth reports whether the server signs in with OAuth: an HTTP
// server without an Authorization header and without auth (pi's rule).
func (s Server) UsesOAuth() bool {
	if !s.IsHTTP() || s.Auth != nil {
		return false
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return false
		}
	}
	return true
}

// signInError is the error of a server that needs sign-in.
func signInError(name, why string) error {
	if why != "" {
		why = " (" + why + ")"
	}
	return fmt.Errorf("%w%s: run `gopi mcp login %s`", ErrSignInRequired, why, name)
}

// oauthSession is the OAuth side of one connection to a server that
// signs in with OAuth: the SDK's streamable transport asks it for the
// token of each request (TokenSource) and calls Authorize when the
// server answers 401 or 403.
type oauthSession struct {
	store  *AuthStore
	name   string
	cfg    Server
	expand Expander
	// client reaches the authorization server (never with the MCP
	// server's headers).
	client *http.Client

	mu sync.Mutex // one refresh at a time in this process
	// signIn is why the user has to sign in, once a request found out.
	signIn atomic.Pointer[error]
	// rejected is set while the server's last answer was 401.
	rejected atomic.Bool
}

var _ auth.OAuthHandler = (*oauthSession)(nil)

func newOAuthSession(store *AuthStore, name string, cfg Server, x Expander) *oauthSession {
	return &oauthSession{store: store, name: name, cfg: cfg, expand: x,
		client: &http.Client{Timeout: oauthRequestTimeout}}
}

// needSignIn is the error that says the user has to sign in; Authorize
// records it for the connection.
func (o *oauthSession) needSignIn(why string) error {
	return signInError(o.name, why)
}

// signInNeeded is the sign-in error once the server's 401 (or its 403
// asking for more scope) could not be answered with a refreshed token,
// or the server still answered 401 after a refresh; nil otherwise.
func (o *oauthSession) signInNeeded() error {
	if p := o.signIn.Load(); p != nil {
		return *p
	}
	if o.rejected.Load() {
		return signInError(o.name, "the server rejected the stored token")
	}
	return nil
}

// signInNeededOrNil is signInNeeded of a connection that may have no
// OAuth side.
func (o *oauthSession) signInNeededOrNil() error {
	if o == nil {
		return nil
	}
	return o.signInNeeded()
}

// roundTripper records whether the server's last answer to a message
// (a POST) was a 401.
func (o *oauthSession) roundTripper(base http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(r)
		if err == nil && r.Method == http.MethodPost {
			o.rejected.Store(resp.StatusCode == http.StatusUnauthorized)
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type tokenSourceFunc func() (*oauth2.Token, error)

func (f tokenSourceFunc) Token() (*oauth2.Token, error) { return f() }

// TokenSource reads the stored tokens at each request, so a sign-in or a
// refresh by another process is used at once. A token about to expire
// is refreshed first; when that fails the old token goes out and the
// server's answer decides.
func (o *oauthSession) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return tokenSourceFunc(func() (*oauth2.Token, error) {
		st, err := o.store.load(o.name, o.cfg.URL)
		if err != nil {
			return nil, err
		}
		t := st.tokens()
		if t == nil {
			return nil, nil
		}
		if exp := st.expireAt(); !exp.IsZero() && time.Until(exp) <= refreshSkew && t.RefreshToken != "" {
			if o.refresh(ctx, t.AccessToken) == nil {
				if st, err = o.store.load(o.name, o.cfg.URL); err == nil && st.tokens() != nil {
					t = st.tokens()
				}
			}
		}
		return &oauth2.Token{AccessToken: t.AccessToken, TokenType: "Bearer"}, nil
	}), nil
}

// Authorize answers a 401 (or 403) of the server: it refreshes the token
// the request carried and lets the transport send the request again, or
// says that the user has to sign in.
func (o *oauthSession) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	err := o.authorize(ctx, req, resp)
	if errors.Is(err, ErrSignInRequired) {
		o.signIn.Store(&err)
	}
	return err
}

func (o *oauthSession) authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	challenge := bearerChallenge(resp.Header)
	if challenge["error"] == "insufficient_scope" {
		// A refresh keeps the granted scope: more scope needs a sign-in.
		return o.needSignIn("the server asks for more scope")
	}
	if resp.StatusCode == http.StatusForbidden {
		// Not about the token: the request goes again and its answer is
		// reported as it is (the SDK's handler does the same).
		return nil
	}
	sent, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	return o.refresh(ctx, sent)
}

// bearerChallenge is the parameters of the Bearer challenge of a
// WWW-Authenticate header (lower-case keys), nil when there is none.
func bearerChallenge(h http.Header) map[string]string {
	cs, _ := oauthex.ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	for _, c := range cs {
		if c.Scheme == "bearer" {
			return c.Params
		}
	}
	return nil
}

// refresh replaces the stale access token with a refreshed one and
// stores it. Tokens that changed meanwhile (another process refreshed
// them, or the user signed in) are used as they are. It returns the
// sign-in error when the user has to sign in.
func (o *oauthSession) refresh(ctx context.Context, stale string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	unlock, err := o.store.refreshLock(ctx, o.name, o.cfg.URL)
	if err != nil {
		if errors.Is(err, lockdir.ErrLocked) {
			return errors.New("another process is refreshing the server's tokens")
		}
		return err
	}
	defer unlock()
	st, err := o.store.load(o.name, o.cfg.URL)
	if err != nil {
		return err
	}
	t := st.tokens()
	switch {
	case t == nil:
		return o.needSignIn("")
	case t.AccessToken != stale:
		return nil
	case t.RefreshToken == "":
		return o.needSignIn("the token expired and cannot be refreshed")
	}
	endpoint, methods, err := o.tokenEndpoint(ctx, &st)
	if err != nil {
		return err
	}
	if endpoint == "" {
		return o.needSignIn("no authorization server is known to refresh the token with")
	}
	id, secret, method, err := o.clientCredentials(ctx, &st)
	if err != nil {
		return err
	}
	if id == "" {
		return o.needSignIn("the stored tokens belong to a client gopi cannot refresh them as")
	}
	cfg := &oauth2.Config{ClientID: id, ClientSecret: secret,
		Endpoint: oauth2.Endpoint{TokenURL: endpoint, AuthStyle: authStyle(method, secret, methods)}}
	// Not cancelled with the request: a refresh the server answered may
	// have rotated the refresh token, so its answer must be stored.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), oauthRequestTimeout)
	defer cancel()
	rctx = context.WithValue(rctx, oauth2.HTTPClient, o.client)
	now := time.Now()
	tok, err := cfg.TokenSource(rctx, &oauth2.Token{RefreshToken: t.RefreshToken}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			switch re.ErrorCode {
			case "invalid_grant":
				_ = o.store.update(o.name, o.cfg.URL, func(s *authState) bool { s.dropTokens(); return true })
				return o.needSignIn("the authorization server refused to refresh the token")
			case "invalid_client", "unauthorized_client":
				_ = o.store.update(o.name, o.cfg.URL, func(s *authState) bool {
					if c := s.client(); c != nil && c.ClientID == id {
						s.o.remove("clientInformation")
					}
					s.dropTokens()
					s.o.remove("discovery")
					return true
				})
				return o.needSignIn("the authorization server no longer knows gopi's client")
			}
		}
		return fmt.Errorf("refreshing the OAuth token: %w", err)
	}
	fresh := tokensOf(tok, t.Scope)
	return o.store.update(o.name, o.cfg.URL, func(s *authState) bool {
		s.setTokens(fresh, now)
		return true
	})
}

// tokensOf is an OAuth token response as pi stores it; scope is the
// grant's when the response names none (RFC 6749 §5.1, §6).
func tokensOf(tok *oauth2.Token, scope string) storedTokens {
	t := storedTokens{AccessToken: tok.AccessToken, TokenType: tok.TokenType, RefreshToken: tok.RefreshToken, Scope: scope}
	if t.TokenType == "" {
		t.TokenType = "Bearer"
	}
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		t.Scope = s
	}
	if s, ok := tok.Extra("id_token").(string); ok {
		t.IDToken = s
	}
	switch {
	case tok.ExpiresIn > 0:
		e := float64(tok.ExpiresIn)
		t.ExpiresIn = &e
	case !tok.Expiry.IsZero():
		e := float64(time.Until(tok.Expiry).Round(time.Second) / time.Second)
		t.ExpiresIn = &e
	}
	return t
}

// tokenEndpoint is where tokens are refreshed, and the client
// authentication methods the authorization server supports: from the
// configured authServerMetadataUrl (trusted as configured, as pi does),
// else from the discovery stored at sign-in. "" when neither says.
func (o *oauthSession) tokenEndpoint(ctx context.Context, st *authState) (string, []string, error) {
	var md *discoveredMetadata
	if o.cfg.OAuth != nil && o.cfg.OAuth.AuthServerMetadataURL != "" {
		var err error
		if md, err = fetchMetadata(ctx, o.client, o.cfg.OAuth.AuthServerMetadataURL); err != nil {
			return "", nil, err
		}
	} else {
		md = st.metadata()
	}
	if md == nil || md.TokenEndpoint == "" {
		return "", nil, nil
	}
	u, err := url.Parse(md.TokenEndpoint)
	if err != nil || u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u)) {
		return "", nil, fmt.Errorf("refusing to send OAuth credentials to non-HTTPS endpoint %s", md.TokenEndpoint)
	}
	return md.TokenEndpoint, md.TokenEndpointAuthMethodsSupported, nil
}

// fetchMetadata reads the authorization server metadata document at u.
func fetchMetadata(ctx context.Context, c *http.Client, u string) (*discoveredMetadata, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("loading authorization server metadata: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d loading authorization server metadata from %s", resp.StatusCode, u)
	}
	var md discoveredMetadata
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&md); err != nil {
		return nil, fmt.Errorf("authorization server metadata from %s: %w", u, err)
	}
	return &md, nil
}

// clientCredentials are the client the tokens are refreshed as: the
// configured clientId (and clientSecret, expanded now), else the client
// gopi or pi registered; no id when neither (pi's Client ID Metadata
// Document, which gopi cannot act as).
func (o *oauthSession) clientCredentials(ctx context.Context, st *authState) (id, secret, method string, err error) {
	if oc := o.cfg.OAuth; oc != nil && oc.ClientID != "" {
		if oc.ClientSecret != "" {
			secret, err = o.expand.Value(ctx, oc.ClientSecret, fmt.Sprintf("MCP server %q oauth.clientSecret", o.name))
		}
		return oc.ClientID, secret, "", err
	}
	if c := st.client(); c != nil {
		return c.ClientID, c.ClientSecret, c.TokenEndpointAuthMethod, nil
	}
	return "", "", "", nil
}

// authStyle is how the client authenticates at the token endpoint, as
// pi chooses it: the method the registration named when the server
// supports it, else a secret by HTTP Basic or in the form, else the
// client id alone in the form.
func authStyle(method, secret string, supported []string) oauth2.AuthStyle {
	style := func(m string) oauth2.AuthStyle {
		if m == "client_secret_basic" {
			return oauth2.AuthStyleInHeader
		}
		return oauth2.AuthStyleInParams
	}
	switch method {
	case "client_secret_basic", "client_secret_post", "none":
		if len(supported) == 0 || slices.Contains(supported, method) {
			return style(method)
		}
	}
	switch {
	case secret == "":
		return oauth2.AuthStyleInParams
	case len(supported) == 0, slices.Contains(supported, "client_secret_basic"):
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}
