package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Errors of [Manager.Reconnect].
var (
	// ErrUnknownServer: the manager has no server of that name.
	ErrUnknownServer = errors.New("mcp: no such server")
	// ErrServerDisabled: the server is disabled ("enabled": false).
	ErrServerDisabled = errors.New("mcp: the server is disabled")
)

// find is the server named name; nil if none.
func (m *Manager) find(name string) *server {
	m.serversMu.Lock()
	defer m.serversMu.Unlock()
	i := slices.IndexFunc(m.servers, func(s *server) bool { return s.name == name })
	if i < 0 {
		return nil
	}
	return m.servers[i]
}

// Reconnect drops the connection of the server named name, whatever its
// state (a stdio server is stopped and started again; an HTTP one is
// reached anew, with the tokens stored now), and connects it again, as
// pi's `/mcp reconnect` does. An attempt already under way is waited for
// first, then replaced. Subscribers hear it connecting, then connected or
// failed; the answer is that attempt's error. A disabled, unknown or
// closed server is an error and nothing changes.
func (m *Manager) Reconnect(ctx context.Context, name string) error {
	if m == nil {
		return fmt.Errorf("%w: %q", ErrUnknownServer, name)
	}
	s := m.find(name)
	if s == nil {
		return fmt.Errorf("%w: %q", ErrUnknownServer, name)
	}
	if !s.cfg.IsEnabled() {
		return fmt.Errorf("%w: %q", ErrServerDisabled, name)
	}
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return fmt.Errorf("mcp server %q: closed", name)
		}
		if wait := s.connecting; wait != nil {
			s.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		sess := s.sess
		// Not connected and not connecting: session() below starts the
		// attempt and announces it.
		s.sess, s.auth, s.state, s.err = nil, nil, StateDisconnected, nil
		s.mu.Unlock()
		if sess != nil {
			// watch sees that sess is no longer the server's and stays
			// quiet; closing stops a stdio server.
			_ = sess.Close()
		}
		break
	}
	_, err := s.session(ctx)
	return err
}
