package mcp

// This file owns building a server's transport from its configuration:
// a stdio process, or streamable HTTP with its headers and OAuth.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// transport builds the connection's transport from the configuration,
// its values expanded now, as the server starts; for an HTTP server that
// signs in with OAuth, with the OAuth side of the connection. outcome
// records an HTTP server's exchanges.
func (s *server) transport(ctx context.Context, outcome *httpOutcome) (sdk.Transport, *tailBuffer, *oauthSession, error) {
	c := s.cfg
	switch c.Type {
	case "", TypeStdio, TypeHTTP, TypeStreamableHTTP:
	case TypeSSE:
		return nil, nil, nil, errors.New(`the SSE transport is not supported; servers that offer SSE often serve streamable HTTP too, commonly at /mcp instead of /sse`)
	default:
		return nil, nil, nil, fmt.Errorf("unknown type %q", c.Type)
	}
	if !c.isStdio() {
		if c.URL == "" {
			return nil, nil, nil, errors.New("neither command nor url is set")
		}
		headers, err := s.m.opts.Expander.Headers(ctx, s.name, c)
		if err != nil {
			return nil, nil, nil, err
		}
		var rt http.RoundTripper = headerTransport{headers: headers, base: outcomeTransport{o: outcome, base: http.DefaultTransport}}
		// Two retries of a dropped stream, as pi retries HTTP errors twice.
		t := &sdk.StreamableClientTransport{Endpoint: c.URL, MaxRetries: 2}
		var oauth *oauthSession
		if s.m.opts.Auth != nil && c.UsesOAuth() {
			oauth = newOAuthSession(s.m.opts.Auth, s.name, c, s.m.opts.Expander)
			rt = oauth.roundTripper(rt)
			t.OAuthHandler = oauth
		}
		t.HTTPClient = &http.Client{Transport: rt}
		return t, nil, oauth, nil
	}
	if c.Command == "" {
		return nil, nil, nil, errors.New("a stdio server needs a command")
	}
	l, err := s.m.opts.Expander.Stdio(ctx, s.name, c, s.m.opts.Cwd)
	if err != nil {
		return nil, nil, nil, err
	}
	cmd := exec.Command(l.Command, l.Args...)
	cmd.Dir = l.Dir
	env := s.m.opts.Env
	if env == nil {
		env = os.Environ()
	}
	env = slices.Clone(env)
	for _, k := range slices.Sorted(maps.Keys(l.Env)) {
		env = append(env, k+"="+l.Env[k])
	}
	cmd.Env = env
	stderr := &tailBuffer{}
	return &stdioTransport{cmd: cmd, stderr: stderr, wg: &s.m.wg}, stderr, nil, nil
}

// headerTransport adds a server's configured headers to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}
