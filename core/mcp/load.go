package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/gopi-dev/gopi/internal/regularfile"
)

// Scope says which file defines a server, or that an extension registered
// it; the words are pi's.
type Scope string

const (
	// ScopeGlobal is the user's <agentDir>/mcp.json.
	ScopeGlobal Scope = "global"
	// ScopeProject is the project's .pi/mcp.json, read only when the
	// project is trusted.
	ScopeProject Scope = "project"
	// ScopeExtension is a server an extension registered
	// (pi.registerMcpServer); its Source is the extension's path.
	ScopeExtension Scope = "extension"
)

// FileName is the configuration file's name in the agent directory and
// in a project's .pi directory.
const FileName = "mcp.json"

// GlobalFile is the user's mcp.json.
func GlobalFile(agentDir string) string { return filepath.Join(agentDir, FileName) }

// ProjectFile is the project's mcp.json.
func ProjectFile(cwd string) string { return filepath.Join(cwd, ".pi", FileName) }

// Entry is one configured server, after merging.
type Entry struct {
	Name   string
	Server Server
	// Source is the file that defines the server (the extension, for
	// ScopeExtension), Scope which one it is.
	Source string
	Scope  Scope
	// Override is the project file when a bare project entry (no
	// command, url or type) changed enabled, exposure or toolExposure of
	// this global server; "" otherwise.
	Override string
}

// Config is the merged configuration: the servers in file order (the
// global file's, then the project's new ones; a replaced server keeps
// its place).
type Config struct {
	Servers []Entry
	// AutoEnableCodemode is the last file's value; nil when neither sets
	// it. codemode is not the host's business here: it is read and reported only.
	AutoEnableCodemode *bool
}

// Lookup is the server named name.
func (c Config) Lookup(name string) (Entry, bool) {
	for _, e := range c.Servers {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// ConfigError is an mcp.json problem: the whole file (Server "") or one
// entry, which is then skipped.
type ConfigError struct {
	File   string
	Server string
	Msg    string
}

func (e *ConfigError) Error() string { return e.File + ": " + e.Msg }

// overrideKeys are what a bare project entry may set.
var overrideKeys = []string{"enabled", "exposure", "toolExposure"}

// Load reads <agentDir>/mcp.json and, only when trusted, <cwd>/.pi/mcp.json
// as pi 1.5.2 does. A project entry replaces the global one of the same
// name; a bare project entry (no command, url or type) changes only the
// enabled, exposure and toolExposure of the global server it names. Each
// invalid entry is reported (a *ConfigError naming file and server) and
// skipped, the other servers unaffected; so is a server whose name
// differs from an earlier one only in "-" and "_". A missing file is no
// error. Values are not expanded here: see Expander.
func Load(agentDir, cwd string, trusted bool) (Config, []error) {
	l := loader{}
	l.read(GlobalFile(agentDir), ScopeGlobal)
	if trusted {
		l.read(ProjectFile(cwd), ScopeProject)
	}
	return l.cfg, l.errs
}

type loader struct {
	cfg  Config
	errs []error
}

func (l *loader) fail(file, server, format string, a ...any) {
	l.errs = append(l.errs, &ConfigError{File: file, Server: server, Msg: fmt.Sprintf(format, a...)})
}

func (l *loader) index(name string) int {
	for i, e := range l.cfg.Servers {
		if e.Name == name {
			return i
		}
	}
	return -1
}

func (l *loader) read(path string, scope Scope) {
	data, err := regularfile.ReadFile(path)
	if regularfile.Missing(err) {
		return
	}
	if err != nil {
		l.fail(path, "", "%v", err)
		return
	}
	top, servers, err := parseFile(data)
	if err != nil {
		l.fail(path, "", "%v", err)
		return
	}
	if v, ok := top.get("autoEnableCodemode"); ok {
		var b bool
		if isKind(v, "a boolean") && json.Unmarshal(v, &b) == nil {
			l.cfg.AutoEnableCodemode = &b
		} else {
			l.fail(path, "", "autoEnableCodemode must be a boolean")
		}
	}
	for _, m := range servers {
		name := m.key
		if scope == ScopeProject && isOverride(m.value) {
			l.override(path, name, m.value)
			continue
		}
		s, err := ValidateServer(name, m.value)
		if err != nil {
			l.fail(path, name, "%v", err)
			continue
		}
		if clash := l.clash(name); clash != "" {
			l.fail(path, name, "server %q conflicts with %q", name, clash)
			continue
		}
		if scope == ScopeProject && s.Auth != nil {
			l.fail(path, name, "server %q: auth is only allowed in the global mcp.json", name)
			continue
		}
		e := Entry{Name: name, Server: s, Source: path, Scope: scope}
		if i := l.index(name); i >= 0 {
			l.cfg.Servers[i] = e
		} else {
			l.cfg.Servers = append(l.cfg.Servers, e)
		}
	}
}

// override applies a bare project entry to the global server it names.
func (l *loader) override(path, name string, raw json.RawMessage) {
	i := l.index(name)
	if i < 0 {
		l.fail(path, name, "server %q needs \"command\" or \"url\", or a global server to override", name)
		return
	}
	o, _ := decodeObject(raw) // isOverride checked it is an object
	for _, m := range o {
		if !slices.Contains(overrideKeys, m.key) {
			l.fail(path, name, "server %q: an override can only set enabled, exposure, toolExposure", name)
			return
		}
	}
	base := l.cfg.Servers[i]
	merged, err := json.Marshal(base.Server)
	if err != nil {
		l.fail(path, name, "server %q: %v", name, err)
		return
	}
	mo, _ := decodeObject(merged)
	for _, m := range o {
		mo.set(m.key, m.value)
	}
	merged, _ = json.Marshal(mo)
	s, err := ValidateServer(name, merged)
	if err != nil {
		l.fail(path, name, "%v", err)
		return
	}
	if _, ok := o.get("toolExposure"); !ok {
		s.toolExposureOrder = base.Server.toolExposureOrder
	}
	base.Server, base.Override = s, path
	l.cfg.Servers[i] = base
}

// clash is an earlier server whose name differs from name only in "-"
// and "_".
func (l *loader) clash(name string) string {
	for _, e := range l.cfg.Servers {
		if e.Name != name && Namespace(e.Name) == Namespace(name) {
			return e.Name
		}
	}
	return ""
}

// isOverride reports whether an entry is an object with no command, url
// or type: an override of a server defined elsewhere.
func isOverride(raw json.RawMessage) bool {
	o, err := decodeObject(raw)
	if err != nil {
		return false
	}
	for _, k := range []string{"command", "url", "type"} {
		if _, ok := o.get(k); ok {
			return false
		}
	}
	return true
}

// parseFile reads an mcp.json: an object whose mcpServers, when present,
// is an object. A UTF-8 byte order mark is skipped.
func parseFile(data []byte) (top, servers object, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	top, err = decodeObject(data)
	if errors.Is(err, errNotObject) {
		return nil, nil, errors.New(`expected an object with an "mcpServers" object`)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("invalid JSON: %w", err)
	}
	raw, ok := top.get("mcpServers")
	if !ok {
		return top, nil, nil
	}
	servers, err = decodeObject(raw)
	if err != nil {
		return nil, nil, errors.New(`expected an object with an "mcpServers" object`)
	}
	return top, servers, nil
}
