package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"

	"github.com/gopi-dev/gopi/internal/atomicfile"
	"github.com/gopi-dev/gopi/internal/regularfile"
)

// AddServer writes s as the server named name into the mcp.json at path,
// replacing an entry of that name in its place or adding it last, and
// reports whether it replaced one. The file is created when missing
// (mode 0600: entries may hold credentials); everything else in it is
// kept, in its order, with its indentation.
func AddServer(path, name string, s Server) (replaced bool, err error) {
	entry, err := marshal(s)
	if err != nil {
		return false, err
	}
	err = editFile(path, func(top, servers *object) bool {
		_, replaced = servers.get(name)
		servers.set(name, entry)
		return true
	})
	return replaced, err
}

// RemoveServer deletes the server named name from the mcp.json at path
// and reports whether the file had it; the rest of the file is kept.
func RemoveServer(path, name string) (removed bool, err error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	err = editFile(path, func(top, servers *object) bool {
		removed = servers.remove(name)
		return removed
	})
	return removed, err
}

// leadingIndent finds the first indented line's indentation.
var leadingIndent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^([ \t]+)\S`) })

// editFile reads the mcp.json at path (empty when missing), lets edit
// change it, and writes it back atomically when edit says so.
func editFile(path string, edit func(top, servers *object) bool) error {
	data, err := regularfile.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	indent := "  "
	var top, servers object
	if err == nil {
		top, servers, err = parseFile(data)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if m := leadingIndent().FindSubmatch(data); m != nil {
			indent = string(m[1])
		}
	}
	if !edit(&top, &servers) {
		return nil
	}
	raw, err := marshal(servers)
	if err != nil {
		return err
	}
	top.set("mcpServers", raw)
	flat, err := marshal(top)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, flat, "", indent); err != nil {
		return err
	}
	out.WriteByte('\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WritePerm(path, out.Bytes(), ".mcp.json-*", 0o600)
}

// marshal is json.Marshal without escaping <, > and & (a URL's query
// stays readable), and without the trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// SetServerFields sets the members fields of the server named name in
// the mcp.json at path, keeping the entry's other members and the rest
// of the file; a server the file does not have is an error.
func SetServerFields(path, name string, fields map[string]any) error {
	found := false
	var bad error
	err := editFile(path, func(top, servers *object) bool {
		raw, ok := servers.get(name)
		if !ok {
			return false
		}
		found = true
		entry, err := decodeObject(raw)
		if err != nil {
			bad = fmt.Errorf("server %q: %w", name, err)
			return false
		}
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			v, err := marshal(fields[k])
			if err != nil {
				bad = err
				return false
			}
			entry.set(k, v)
		}
		out, err := marshal(entry)
		if err != nil {
			bad = err
			return false
		}
		servers.set(name, out)
		return true
	})
	switch {
	case err != nil:
		return err
	case bad != nil:
		return fmt.Errorf("%s: %w", path, bad)
	case !found:
		return fmt.Errorf("%s: has no server %q", path, name)
	}
	return nil
}
