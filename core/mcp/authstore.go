package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gopi-dev/gopi/internal/atomicfile"
	"github.com/gopi-dev/gopi/internal/lockdir"
	"github.com/gopi-dev/gopi/internal/regularfile"
)

// AuthFileName is the file in the agent directory that holds what OAuth
// sign-ins to MCP servers stored: pi's mcp-auth.json.
const AuthFileName = "mcp-auth.json"

// AuthStore keeps the OAuth state of MCP servers in
// <agentDir>/mcp-auth.json, in pi's shape, so that pi and gopi share
// sign-ins: an object whose keys are "<mcp__namespace>|<server URL>" and
// whose values are pi's per-server state (serverUrl, clientInformation,
// tokens, tokensExpireAt, discovery; pi's pending sign-in, codeVerifier
// and oauthState, is kept as it is). Every read and write holds the lock
// pi takes on the file (mcp-auth.json.lock); the file is replaced
// atomically and is only ever readable by its owner (0600).
type AuthStore struct {
	dir string
}

// NewAuthStore is the store of agentDir.
func NewAuthStore(agentDir string) *AuthStore { return &AuthStore{dir: agentDir} }

// Path is the store's file.
func (a *AuthStore) Path() string { return filepath.Join(a.dir, AuthFileName) }

// storedTokens are a server's tokens as pi stores them: the token
// response's fields.
type storedTokens struct {
	AccessToken  string   `json:"access_token"`
	TokenType    string   `json:"token_type"`
	ExpiresIn    *float64 `json:"expires_in,omitempty"`
	Scope        string   `json:"scope,omitempty"`
	RefreshToken string   `json:"refresh_token,omitempty"`
	IDToken      string   `json:"id_token,omitempty"`
}

// clientInformation is a client registered dynamically (RFC 7591): the
// fields gopi reads of pi's, and writes.
type clientInformation struct {
	ClientID                string   `json:"client_id"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
}

// authState is one server's entry: its members in the file's order, so
// that what gopi does not know (pi's pending sign-in) is written back as
// it was.
type authState struct {
	o object
}

func (s *authState) decode(key string, v any) bool {
	raw, ok := s.o.get(key)
	if !ok || jsonKind(raw) == "null" {
		return false
	}
	return json.Unmarshal(raw, v) == nil
}

func (s *authState) put(key string, v any) {
	if b, err := marshal(v); err == nil {
		s.o.set(key, b)
	}
}

// tokens are the stored tokens, nil when there are none.
func (s *authState) tokens() *storedTokens {
	var t storedTokens
	if !s.decode("tokens", &t) || t.AccessToken == "" {
		return nil
	}
	return &t
}

// expireAt is when the access token expires (pi's tokensExpireAt, in
// milliseconds), zero when unknown.
func (s *authState) expireAt() time.Time {
	var ms float64
	if !s.decode("tokensExpireAt", &ms) || ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms))
}

// setTokens stores t, with its expiry as pi computes it.
func (s *authState) setTokens(t storedTokens, now time.Time) {
	s.put("tokens", t)
	if t.ExpiresIn == nil {
		s.o.remove("tokensExpireAt")
		return
	}
	s.put("tokensExpireAt", now.UnixMilli()+int64(*t.ExpiresIn*1000))
}

// dropTokens forgets the tokens (pi's invalidateCredentials("tokens")).
func (s *authState) dropTokens() {
	s.o.remove("tokens")
	s.o.remove("tokensExpireAt")
}

// client is the dynamically registered client, nil when none is stored.
func (s *authState) client() *clientInformation {
	var c clientInformation
	if !s.decode("clientInformation", &c) || c.ClientID == "" {
		return nil
	}
	return &c
}

// discoveredMetadata is what gopi reads of the stored discovery: the
// authorization server metadata's token endpoint and its client
// authentication methods.
type discoveredMetadata struct {
	Issuer                            string   `json:"issuer"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
}

func (s *authState) metadata() *discoveredMetadata {
	var d struct {
		Metadata *discoveredMetadata `json:"authorizationServerMetadata"`
	}
	if !s.decode("discovery", &d) || d.Metadata == nil || d.Metadata.TokenEndpoint == "" {
		return nil
	}
	return d.Metadata
}

// serverHref is a server's URL as pi writes it: its serialization by the
// WHATWG rules that matter here (scheme and host in lower case, no
// default port, "/" for an empty path).
func serverHref(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute URL", raw)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "80" && u.Scheme == "http" || port == "443" && u.Scheme == "https" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	if u.Path == "" && u.RawPath == "" {
		u.Path = "/"
	}
	return u.String(), nil
}

// authKeys are pi's keys of a server's state: by name and URL, and the
// legacy key by URL alone that older versions of pi wrote.
func authKeys(name, serverURL string) (key, legacy, href string, err error) {
	href, err = serverHref(serverURL)
	if err != nil {
		return "", "", "", err
	}
	return Namespace(name) + "|" + href, href, href, nil
}

// load is the server's state, empty when nothing is stored. State kept
// under the legacy key is taken over, as pi does. State stored for
// another URL is ignored, so credentials never reach another server.
func (a *AuthStore) load(name, serverURL string) (authState, error) {
	key, legacy, href, err := authKeys(name, serverURL)
	if err != nil {
		return authState{}, err
	}
	if _, err := os.Lstat(a.Path()); errors.Is(err, fs.ErrNotExist) {
		// Nothing stored: no lock to take (the agent directory may not
		// even be writable, for servers that never sign in).
		return authState{}, nil
	}
	var st authState
	err = a.edit(func(states *object) bool {
		raw, ok := states.get(key)
		moved := false
		if !ok || jsonKind(raw) == "null" {
			if raw, ok = states.get(legacy); ok {
				states.set(key, raw)
				states.remove(legacy)
				moved = true
			}
		}
		if o, err := decodeObject(raw); ok && err == nil {
			st.o = o
		}
		return moved
	})
	if err != nil {
		return authState{}, err
	}
	if u, _ := st.o.get("serverUrl"); !bytes.Equal(u, mustMarshal(href)) {
		return authState{}, nil
	}
	return st, nil
}

// update changes the server's state under the lock; change reports
// whether it changed anything. The state starts empty (with its
// serverUrl) when none is stored.
func (a *AuthStore) update(name, serverURL string, change func(*authState) bool) error {
	key, _, href, err := authKeys(name, serverURL)
	if err != nil {
		return err
	}
	return a.edit(func(states *object) bool {
		var st authState
		if raw, ok := states.get(key); ok {
			st.o, _ = decodeObject(raw)
		}
		if u, _ := st.o.get("serverUrl"); !bytes.Equal(u, mustMarshal(href)) {
			st.o = object{{"serverUrl", mustMarshal(href)}}
		}
		if !change(&st) {
			return false
		}
		b, err := marshal(st.o)
		if err != nil {
			return false
		}
		states.set(key, b)
		return true
	})
}

// Remove deletes what is stored for the server (tokens and client
// registration) and reports whether there was anything.
func (a *AuthStore) Remove(name, serverURL string) (bool, error) {
	key, legacy, _, err := authKeys(name, serverURL)
	if err != nil {
		return false, err
	}
	if _, err := os.Lstat(a.Path()); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	removed := false
	err = a.edit(func(states *object) bool {
		removed = states.remove(key) || states.remove(legacy)
		return removed
	})
	return removed, err
}

// tokensSnapshot is the stored tokens as text, to notice a sign-in made
// by another process; "" when there are none.
func (a *AuthStore) tokensSnapshot(name, serverURL string) string {
	st, err := a.load(name, serverURL)
	if err != nil {
		return ""
	}
	raw, _ := st.o.get("tokens")
	return string(raw)
}

// refreshLock is pi's lock for refreshing the server's tokens: one
// refresh at a time across processes, since servers that rotate refresh
// tokens would void a second refresh with the same one.
func (a *AuthStore) refreshLock(ctx context.Context, name, serverURL string) (func(), error) {
	key, _, _, err := authKeys(name, serverURL)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(key))
	dir := filepath.Join(a.dir, "mcp-auth-refresh-"+hex.EncodeToString(sum[:])[:16]+".lock")
	// pi's: taken over after 20 s without renewal, waited for 25 s.
	return lockdir.Lock(ctx, dir, lockdir.Options{Wait: 25 * time.Second, Retry: 100 * time.Millisecond,
		Stale: 20 * time.Second, Refresh: true})
}

// edit reads the whole file under its lock, lets change alter it, and
// writes it back (two-space indent, as pi writes it) when change says
// so. A missing or empty file is an empty object; a file that is not
// JSON is an error and is left alone.
func (a *AuthStore) edit(change func(states *object) bool) error {
	path := a.Path()
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	target, _, err := atomicfile.Target(path)
	if err != nil {
		return err
	}
	unlock, err := lockdir.Lock(context.Background(), target+".lock",
		lockdir.Options{Wait: 9 * 20 * time.Millisecond, Retry: 20 * time.Millisecond})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer unlock()
	data, err := regularfile.ReadFile(target)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var states object
	if len(bytes.TrimSpace(data)) > 0 {
		states, err = decodeObject(data)
		if err != nil && !errors.Is(err, errNotObject) {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if !change(&states) {
		return nil
	}
	compact, err := marshal(states)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	// The file holds credentials: an existing file readable by others is
	// made the owner's alone before the new contents go in.
	if fi, err := os.Stat(target); err == nil && fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(target, fi.Mode().Perm()&0o700); err != nil {
			return err
		}
	}
	if err := atomicfile.WritePerm(target, out.Bytes(), ".mcp-auth-*.json", 0o600); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func mustMarshal(v any) json.RawMessage {
	b, _ := marshal(v)
	return b
}
