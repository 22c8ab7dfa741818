package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/gopi-dev/gopi/internal/atomicfile"
	"github.com/gopi-dev/gopi/internal/lockdir"
	"github.com/gopi-dev/gopi/internal/regularfile"
)

// authLock is how long ForgetAPIKeys waits for pi's lock on auth.json.
var authLock = lockdir.Options{Wait: 5 * time.Second, Retry: 50 * time.Millisecond}

// ForgetAPIKeys removes the API keys ("type": "api_key") of providers
// from auth.json, as pi's /logout does, and reads the file again. It
// works under pi's lock on the file (auth.json.lock) and leaves every
// other entry as it was, in its place: other providers', and pi's own
// sign-ins ("type": "oauth"). Keys in the environment and in models.json
// are not its to remove. It returns the providers whose key it removed
// (none when the file is missing or holds none of them). A file that is
// not a JSON object is an error, and it is left alone.
func (r *Registry) ForgetAPIKeys(providers ...string) ([]string, error) {
	path := r.AuthPath()
	target, _, err := atomicfile.Target(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("forgetting keys in %s: %w", path, err)
	}
	unlock, err := lockdir.Lock(context.Background(), target+".lock", authLock)
	if err != nil {
		return nil, fmt.Errorf("forgetting keys in %s: %w", path, err)
	}
	defer unlock()
	forgot, err := forgetKeys(target, providers)
	if err != nil {
		return nil, fmt.Errorf("forgetting keys in %s: %w", path, err)
	}
	if err := r.ReloadAuth(); err != nil {
		return forgot, err
	}
	return forgot, nil
}

// forgetKeys rewrites the auth.json at target without the api_key entries
// of providers; the caller holds the file's lock.
func forgetKeys(target string, providers []string) ([]string, error) {
	data, err := regularfile.ReadFile(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	entries, err := orderedObject(data)
	if err != nil {
		return nil, err
	}
	var forgot []string
	kept := entries[:0:0]
	for _, e := range entries {
		var c credential
		if slices.Contains(providers, e.key) && json.Unmarshal(e.value, &c) == nil && c.Type == CredentialAPIKey {
			forgot = append(forgot, e.key)
			continue
		}
		kept = append(kept, e)
	}
	if len(forgot) == 0 {
		return nil, nil
	}
	var compact bytes.Buffer
	compact.WriteByte('{')
	for i, e := range kept {
		if i > 0 {
			compact.WriteByte(',')
		}
		k, err := json.Marshal(e.key)
		if err != nil {
			return nil, err
		}
		compact.Write(k)
		compact.WriteByte(':')
		compact.Write(e.value)
	}
	compact.WriteByte('}')
	// Two-space indent, as pi writes the file.
	var out bytes.Buffer
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	if err := atomicfile.WritePerm(target, out.Bytes(), ".auth-*.json", 0o600); err != nil {
		return nil, err
	}
	return forgot, nil
}

// entry is one member of a JSON object, its value as written.
type entry struct {
	key   string
	value json.RawMessage
}

// orderedObject reads a JSON object's members in their order.
func orderedObject(data []byte) ([]entry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var out []entry
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, entry{key: tok.(string), value: v})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("%w: more after the object", errNotObject)
	}
	return out, nil
}
