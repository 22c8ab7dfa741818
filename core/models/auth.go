package models

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"strings"
	"time"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/internal/envexpand"
	"github.com/gopi-dev/gopi/internal/regularfile"
)

// CredentialType is the "type" of an auth.json entry.
type CredentialType string

const (
	CredentialAPIKey CredentialType = "api_key"
	// CredentialOAuth entries are pi's subscription logins; gopi cannot
	// refresh them and reports them unsupported.
	CredentialOAuth CredentialType = "oauth"
)

// credential is one auth.json entry; oauth fields are not kept.
type credential struct {
	Type CredentialType `json:"type"`
	Key  string         `json:"key"`
}

// readAuthFile reads auth.json ({"provider": {"type": "api_key", "key": ...}}).
// A missing file is empty; a broken one is reported and treated as empty.
func readAuthFile(path string) (map[string]credential, error) {
	data, err := regularfile.ReadFile(path)
	if regularfile.Missing(err) {
		return map[string]credential{}, nil
	}
	if err != nil {
		return map[string]credential{}, fmt.Errorf("reading auth.json: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]credential{}, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return map[string]credential{}, fmt.Errorf("parsing %s: %w", path, err)
	}
	out := make(map[string]credential, len(raw))
	var bad []string
	for provider, r := range raw {
		var c credential
		if err := json.Unmarshal(r, &c); err != nil {
			bad = append(bad, provider)
			continue
		}
		out[provider] = c
	}
	if len(bad) > 0 {
		return out, fmt.Errorf("parsing %s: %w %s", path, errMalformedAuth, strings.Join(bad, ", "))
	}
	return out, nil
}

// SetAPIKeyOverride makes key the provider's key ahead of every other
// source (pi's --api-key); an empty key removes the override.
func (r *Registry) SetAPIKeyOverride(provider, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if key == "" {
		delete(r.runtimeKeys, provider)
		return
	}
	r.runtimeKeys[provider] = key
}

// stored is provider's auth.json entry, as last read.
func (r *Registry) stored(provider string) (credential, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.auth[provider]
	return c, ok
}

// ReloadAuth reads auth.json again, so keys stored in it since [Load]
// are used from the next request on. A broken file is the error, and
// the entries read before are kept.
func (r *Registry) ReloadAuth() error {
	auth, err := readAuthFile(r.AuthPath())
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.auth = auth
	r.mu.Unlock()
	return nil
}

func (r *Registry) runtimeKey(provider string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runtimeKeys[provider]
}

// envKey returns the first non-empty environment key for provider.
func (r *Registry) envKey(provider string) string {
	for _, name := range envKeys[provider] {
		if v := r.getenv(name); v != "" {
			return v
		}
	}
	return ""
}

// HasAuth reports whether m's provider has credentials configured: a faux
// model always; otherwise an --api-key override, an auth.json API key, a
// provider environment variable or a models.json apiKey. It runs nothing.
func (r *Registry) HasAuth(m *llm.Model) bool {
	if m.API == llm.APIFaux {
		return true
	}
	p := m.Provider
	if r.runtimeKey(p) != "" {
		return true
	}
	if c, ok := r.stored(p); ok && c.Type == CredentialAPIKey {
		return true
	}
	if r.envKey(p) != "" {
		return true
	}
	key := r.cur.Load().reqConfigs[p].apiKey
	return key != "" && (strings.HasPrefix(key, "!") || r.resolveValue(key) != "")
}

// RequestAuth resolves m's key and headers. The key comes, first found,
// from the --api-key override, auth.json, the apiKey of models.json (or of
// a registered provider), then the provider's environment variable: pi
// 1.5's order (before 1.5, the environment came before models.json). Headers merge the model's own, the
// provider's and the model's models.json headers (values resolved like
// keys), plus "Authorization: Bearer <key>" when the provider sets
// authHeader. Faux models need no key. A missing key is a [*NoAPIKeyError].
func (r *Registry) RequestAuth(ctx context.Context, m *llm.Model) (llm.Auth, error) {
	var out llm.Auth
	v := r.cur.Load()
	rc := v.reqConfigs[m.Provider]

	key := r.storedKey(ctx, m.Provider)
	if key == "" && rc.apiKey != "" {
		var err error
		key, err = r.resolveStrict(ctx, rc.apiKey, fmt.Sprintf("API key for provider %q", m.Provider))
		if err != nil {
			return out, err
		}
	}
	if key == "" {
		key = r.envKey(m.Provider)
	}

	headers := maps.Clone(m.Headers)
	add := func(h map[string]string, what string) error {
		for name, v := range h {
			val, err := r.resolveStrict(ctx, v, fmt.Sprintf("%s header %q", what, name))
			if err != nil {
				return err
			}
			if headers == nil {
				headers = map[string]string{}
			}
			headers[name] = val
		}
		return nil
	}
	if err := add(rc.headers, fmt.Sprintf("provider %q", m.Provider)); err != nil {
		return out, err
	}
	if err := add(v.modelHeaders[modelKey{m.Provider, m.ID}], fmt.Sprintf("model %q", m.Provider+"/"+m.ID)); err != nil {
		return out, err
	}
	if rc.authHeader {
		if key == "" {
			return out, &NoAPIKeyError{Provider: m.Provider}
		}
		if headers == nil {
			headers = map[string]string{}
		}
		headers["Authorization"] = "Bearer " + key
	}
	if key == "" && m.API != llm.APIFaux {
		c, ok := r.stored(m.Provider)
		return out, &NoAPIKeyError{Provider: m.Provider, OAuth: ok && c.Type == CredentialOAuth}
	}
	out.APIKey = key
	if len(headers) > 0 {
		out.Headers = headers
	}
	return out, nil
}

// APIKey returns m's key; see [Registry.RequestAuth].
func (r *Registry) APIKey(ctx context.Context, m *llm.Model) (string, error) {
	a, err := r.RequestAuth(ctx, m)
	return a.APIKey, err
}

// Headers returns the extra headers to send for m; see [Registry.RequestAuth].
func (r *Registry) Headers(ctx context.Context, m *llm.Model) (map[string]string, error) {
	a, err := r.RequestAuth(ctx, m)
	return a.Headers, err
}

// storedKey looks in the override and auth.json, in pi's order; "" when
// neither has a key.
func (r *Registry) storedKey(ctx context.Context, provider string) string {
	if k := r.runtimeKey(provider); k != "" {
		return k
	}
	if c, ok := r.stored(provider); ok && c.Type == CredentialAPIKey {
		return r.resolveCached(ctx, c.Key)
	}
	return ""
}

// resolveCached resolves a config value, remembering command output for the
// registry's lifetime (auth.json values, as pi caches them).
func (r *Registry) resolveCached(ctx context.Context, v string) string {
	if !strings.HasPrefix(v, "!") {
		return r.resolveValue(v)
	}
	r.mu.Lock()
	out, ok := r.cmdCache[v]
	r.mu.Unlock()
	if ok {
		return out
	}
	out, _ = r.runCommand(ctx, v[1:])
	r.mu.Lock()
	r.cmdCache[v] = out
	r.mu.Unlock()
	return out
}

// resolveStrict resolves a models.json value afresh, failing when a
// command yields nothing.
func (r *Registry) resolveStrict(ctx context.Context, v, what string) (string, error) {
	if !strings.HasPrefix(v, "!") {
		return r.resolveValue(v), nil
	}
	out, err := r.runCommand(ctx, v[1:])
	if err != nil {
		return "", fmt.Errorf("Failed to resolve %s from shell command: %s: %w", what, v[1:], err)
	}
	return out, nil
}

// resolveValue is the non-command part of a config value, as pi 1.5
// reads it: "$NAME" and "${NAME}" are replaced by that environment
// variable, "$$" is a "$" and "$!" a "!", anything else is literal; a
// referenced variable that is unset or empty makes the whole value "".
// A value without "$" that names a set variable whole reads it, as pi did
// before 1.5 (a literal key never looks like OPENAI_API_KEY).
func (r *Registry) resolveValue(v string) string {
	if !strings.Contains(v, "$") {
		if env := r.getenv(v); env != "" {
			return env
		}
		return v
	}
	out, missing := envexpand.Expand(v, r.getenv)
	if len(missing) > 0 {
		return ""
	}
	return out
}

// runCommand runs cmd with sh -c under the registry's timeout and returns
// its trimmed stdout; a failure, a timeout or empty output is an error.
func (r *Registry) runCommand(ctx context.Context, cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cmdTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	// Children of sh may keep stdout open after sh is killed; stop waiting
	// for them shortly after.
	c.WaitDelay = 500 * time.Millisecond
	out, err := c.Output()
	if ctx.Err() != nil {
		return "", fmt.Errorf("running command: %w", ctx.Err())
	}
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(out))
	if s == "" {
		return "", errKeyCommandSilent
	}
	return s, nil
}
