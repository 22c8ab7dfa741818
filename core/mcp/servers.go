package mcp

import (
	"errors"
	"fmt"
	"slices"
)

// ErrClosed is Add's answer once the manager has closed.
var ErrClosed = errors.New("mcp: the manager is closed")

// Add gives the manager one more server, e: one an extension registered
// (pi.registerMcpServer), which is then served like a configured one. It
// connects with the others at Start, or at once when the manager has
// started; [Manager.Subscribe]'s subscribers hear when its tools are known. A server of
// the same name already there is an error, and so is a closed manager.
func (m *Manager) Add(e Entry) error {
	m.serversMu.Lock()
	defer m.serversMu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if slices.ContainsFunc(m.servers, func(s *server) bool { return s.name == e.Name }) {
		return fmt.Errorf("mcp: server %q is there already", e.Name)
	}
	s := m.newServer(e)
	m.servers = append(m.servers, s)
	m.toolsGen.Add(1) // its name may make others' tool names ambiguous
	if m.started {
		m.start(s)
	}
	return nil
}

// Remove takes the server named name away, and reports whether there was
// one: it and its tools are gone from [Manager.Tools] and
// [Manager.Statuses] at once, and it stops in the background (a call under
// way ends, a stdio server is stopped as at Close, which waits for it).
// Subscribers hear nothing of it: the caller knows.
func (m *Manager) Remove(name string) bool {
	if m == nil {
		return false
	}
	m.serversMu.Lock()
	defer m.serversMu.Unlock()
	i := slices.IndexFunc(m.servers, func(s *server) bool { return s.name == name })
	if i < 0 || m.closed {
		return false
	}
	s := m.servers[i]
	m.servers = slices.Delete(m.servers, i, i+1)
	m.toolsGen.Add(1)
	m.wg.Go(func() {
		if err := s.close(); err != nil {
			m.opts.Report(err)
		}
	})
	return true
}

// Replace gives the server named e.Name the configuration e, in its
// place: the old connection stops in the background (as at Remove) and
// the server connects anew with e when the manager has started and e is
// enabled; a disabled e leaves it disabled, without tools. Subscribers
// hear of the new connection as of any other; the change itself is the
// caller's to tell. An unknown server is ErrUnknownServer, a closed
// manager ErrClosed.
func (m *Manager) Replace(e Entry) error {
	if m == nil {
		return fmt.Errorf("%w: %q", ErrUnknownServer, e.Name)
	}
	m.serversMu.Lock()
	defer m.serversMu.Unlock()
	if m.closed {
		return ErrClosed
	}
	i := slices.IndexFunc(m.servers, func(s *server) bool { return s.name == e.Name })
	if i < 0 {
		return fmt.Errorf("%w: %q", ErrUnknownServer, e.Name)
	}
	old := m.servers[i]
	s := m.newServer(e)
	m.servers[i] = s
	m.toolsGen.Add(1)
	m.wg.Go(func() {
		if err := old.close(); err != nil {
			m.opts.Report(err)
		}
	})
	if m.started {
		m.start(s)
	}
	return nil
}
