package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/gopi-dev/gopi/core/mcp"
	"github.com/gopi-dev/gopi/internal/homedir"
	"github.com/gopi-dev/gopi/internal/regularfile"
)

// A minimal reading of mcp.json for the connection step of issue 29,
// until core/mcp loads, merges, validates and expands the files itself:
// then mcpServers calls that and this file shrinks to it.

// mcpServers are the MCP servers for a session in cwd: the user's
// <agentDir>/mcp.json, and a trusted project's .pi/mcp.json over it (an
// entry of the same name replaces the user's; one without command, url
// or type changes only its enabled, exposure and toolExposure). Values
// are expanded (${VAR} in env and headers, a leading ~/ in command, args
// and cwd). Files and entries that cannot be used are warned about and
// skipped.
func (ap *app) mcpServers(cwd string, trusted bool) map[string]mcp.Server {
	servers := ap.readMCPFile(filepath.Join(ap.agentDir, "mcp.json"))
	if trusted {
		for name, p := range ap.readMCPFile(filepath.Join(cwd, ".pi", "mcp.json")) {
			u, ok := servers[name]
			if p.Command == "" && p.URL == "" && p.Type == "" {
				if !ok {
					ap.warn(fmt.Sprintf("mcp.json: project server %q has no command or url, and no user server of that name to change", name))
					continue
				}
				if p.Enabled != nil {
					u.Enabled = p.Enabled
				}
				if p.Exposure != "" {
					u.Exposure = p.Exposure
				}
				if p.ToolExposure != nil {
					u.ToolExposure = p.ToolExposure
				}
				servers[name] = u
				continue
			}
			servers[name] = p
		}
	}
	out := map[string]mcp.Server{}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		if !mcpName.MatchString(name) {
			ap.warn(fmt.Sprintf("mcp.json: server name %q may hold only letters, digits, _ and -: skipped", name))
			continue
		}
		s := servers[name]
		if s.Command == "" && s.URL == "" {
			ap.warn(fmt.Sprintf("mcp.json: server %q has neither command nor url: skipped", name))
			continue
		}
		out[name] = expandServer(s)
	}
	return out
}

var mcpName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// readMCPFile reads one mcp.json; a missing file is no servers.
func (ap *app) readMCPFile(path string) map[string]mcp.Server {
	b, err := regularfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]mcp.Server{}
	}
	if err != nil {
		ap.warn(fmt.Sprintf("reading %s: %v", path, err))
		return map[string]mcp.Server{}
	}
	var f mcp.File
	if err := json.Unmarshal(b, &f); err != nil {
		ap.warn(fmt.Sprintf("%s: %v: its MCP servers are skipped", path, err))
		return map[string]mcp.Server{}
	}
	if f.Servers == nil {
		return map[string]mcp.Server{}
	}
	return f.Servers
}

// expandServer expands a server's values as it connects: ${VAR} in env
// and header values, a leading ~/ in command, args and cwd. (pi's
// "!command" values are the configuration step's.)
func expandServer(s mcp.Server) mcp.Server {
	s.Command = homedir.Expand(s.Command)
	s.Cwd = homedir.Expand(s.Cwd)
	if s.Args != nil {
		args := make([]string, len(s.Args))
		for i, a := range s.Args {
			args[i] = homedir.Expand(a)
		}
		s.Args = args
	}
	s.Env = expandValues(s.Env)
	s.Headers = expandValues(s.Headers)
	return s
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

func expandValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = varRef.ReplaceAllStringFunc(v, func(ref string) string {
			return os.Getenv(strings.TrimSuffix(strings.TrimPrefix(ref, "${"), "}"))
		})
	}
	return out
}
