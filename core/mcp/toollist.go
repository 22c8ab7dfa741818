package mcp

// This file owns the servers' tools: listing a server's (again after
// tools/list_changed), and the manager's list of them all under their
// names for the model, kept until a change may rename one.

import (
	"context"
	"fmt"
	"maps"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools are the tools of every connected server, in the servers' order
// and then each server's, whatever their exposure, each under its name
// for the model (nameTools: no two share one, and none is reserved).
func (m *Manager) Tools() []*Tool {
	if m.Empty() {
		return nil
	}
	m.namesMu.Lock()
	defer m.namesMu.Unlock()
	gen := m.toolsGen.Load()
	if m.namedOK && m.namedGen == gen {
		return slices.Clone(m.named)
	}
	servers := m.list()
	listed := make([]serverTools, len(servers))
	raw := make([][]*Tool, len(servers))
	for i, s := range servers {
		s.mu.Lock()
		raw[i] = s.tools
		s.mu.Unlock()
		listed[i].server = s.name
		for _, t := range raw[i] {
			listed[i].tools = append(listed[i].tools, t.remote)
		}
	}
	names := nameTools(listed, func(n string) bool { return m.reserved[n] })
	// A tool keeps its value while its name does not change.
	before := map[*server]map[string]*Tool{}
	for _, t := range m.named {
		if before[t.s] == nil {
			before[t.s] = map[string]*Tool{}
		}
		before[t.s][t.remote] = t
	}
	var out []*Tool
	for i, ts := range raw {
		for k, t := range ts {
			if old := before[t.s][t.remote]; old != nil && old.name == names[i][k] && old.source == t {
				out = append(out, old)
				continue
			}
			named := *t
			named.name, named.source = names[i][k], t
			out = append(out, &named)
		}
	}
	m.named, m.namedGen, m.namedOK = out, gen, true
	return slices.Clone(out)
}

// Reserve gives the names of the tools that are not MCP's (built-ins,
// extensions' tools): no MCP tool is named so; one whose name would be
// gets the hash suffix (see nameTools). It reports whether the names
// changed, and with them, perhaps, some tools' names.
func (m *Manager) Reserve(names []string) bool {
	if m == nil {
		return false
	}
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	m.namesMu.Lock()
	defer m.namesMu.Unlock()
	if maps.Equal(set, m.reserved) {
		return false
	}
	m.reserved = set
	m.toolsGen.Add(1)
	return true
}

// refresh lists the tools again after notifications/tools/list_changed.
func (s *server) refresh(sess *sdk.ClientSession) {
	if sess == nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.m.ctx, s.timeout())
	defer cancel()
	tools, err := s.listTools(ctx, sess)
	if err != nil {
		if s.m.ctx.Err() == nil {
			s.m.opts.Report(fmt.Errorf("mcp server %q: listing changed tools: %w", s.name, err))
		}
		return
	}
	s.mu.Lock()
	if s.sess != sess {
		s.mu.Unlock()
		return
	}
	s.tools = tools
	s.gen++
	s.mu.Unlock()
	s.m.toolsGen.Add(1)
	s.announce()
}

func (s *server) listTools(ctx context.Context, sess *sdk.ClientSession) ([]*Tool, error) {
	var listed []*sdk.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		listed = append(listed, t)
	}
	// Named by Manager.Tools, which knows the other servers.
	tools := make([]*Tool, len(listed))
	for i, t := range listed {
		tools[i] = newTool(s, t)
	}
	return tools, nil
}
