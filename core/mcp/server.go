package mcp

// This file owns one server (server) as the manager keeps it: its state
// and status, the announcement of their changes to Subscribe's
// subscribers, its timeout, and closing it. (servers.go adds and removes
// servers.)

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultTimeout is a request's timeout when a server sets none (pi's 60 s).
const DefaultTimeout = 60 * time.Second

// State is where a server's connection stands.
type State string

const (
	StateConnecting   State = "connecting"
	StateConnected    State = "connected"
	StateFailed       State = "failed"       // the last attempt to connect failed
	StateDisconnected State = "disconnected" // the connection dropped; the next call reconnects
	StateDisabled     State = "disabled"     // enabled: false
	StateClosed       State = "closed"
	// StateNeedsAuth: the server answered 401 and no stored token could
	// answer it; the user has to sign in (pi's "needs-auth", shown as
	// "needs sign-in"; oauth.go).
	StateNeedsAuth State = "needs-auth"
)

// Status is one server's state for a report or a listing.
type Status struct {
	Name  string
	State State
	Tools int
	// Resources reports whether the connected server offers resources.
	Resources bool
	// Err is why it failed or dropped, with the end of a stdio server's
	// stderr.
	Err error
	// Summary says what the server offers in one line: its configured
	// description, else the first line of the instructions it sent when
	// it connected; empty when neither is known.
	Summary string
}

// server is one configured server and its connection.
type server struct {
	m    *Manager
	name string
	cfg  Server
	// settled closes when the first attempt to connect has ended.
	settled chan struct{}

	announceMu sync.Mutex // serializes announce; guards announced
	announced  uint64     // the last gen announced

	mu    sync.Mutex // guards the fields below
	state State
	// gen counts the changes of state and tools that announce tells
	// Subscribe's subscribers of.
	gen   uint64
	sess  *sdk.ClientSession // nil unless connected
	tools []*Tool
	// resources reports whether the server declared the resources
	// capability when it last connected.
	resources bool
	err       error
	// instructions are the ones the server sent when it last connected.
	instructions string
	// connecting is non-nil while an attempt is under way and closes when
	// it ends; callers wait on it rather than connecting twice.
	connecting chan struct{}
	// auth is the OAuth side of the connection sess, nil for a server
	// without OAuth.
	auth *oauthSession
	// signedOut is the stored tokens (as text) when the server came to
	// need a sign-in: RetrySignedIn reconnects once they change.
	signedOut string
	stderr    *tailBuffer
	closed    bool
}

// status is the server's Status: s.mu is held.
func (s *server) status() Status {
	return Status{Name: s.name, State: s.state, Tools: len(s.tools), Resources: s.resources, Err: s.err,
		Summary: s.summary()}
}

// announce tells Subscribe's subscribers of the changes counted in gen
// since the last announcement, with the status as it is now; every change
// (s.gen++ under s.mu) calls it once s.mu is released. Announcements of
// one server are serialized and each reads the status anew, so the last
// one holds the current status; one that finds nothing new since the last
// says nothing. A closing manager announces nothing.
func (s *server) announce() {
	s.announceMu.Lock()
	defer s.announceMu.Unlock()
	if s.m.ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	st, gen := s.status(), s.gen
	s.mu.Unlock()
	if gen == s.announced {
		return
	}
	s.announced = gen
	s.m.changes.Emit(st)
}

// summary is Status.Summary: s.mu is held.
func (s *server) summary() string {
	if d := strings.TrimSpace(s.cfg.Description); d != "" {
		return d
	}
	for line := range strings.Lines(s.instructions) {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

func (s *server) timeout() time.Duration {
	if s.cfg.Timeout > 0 {
		return time.Duration(s.cfg.Timeout * float64(time.Second))
	}
	return DefaultTimeout
}

// close ends the server's connection and waits for a stdio server to exit.
func (s *server) close() error {
	s.mu.Lock()
	s.closed = true
	s.state = StateClosed
	sess := s.sess
	s.sess = nil
	s.mu.Unlock()
	if sess == nil {
		return nil
	}
	if err := sess.Close(); err != nil && !errors.Is(err, sdk.ErrConnectionClosed) {
		return fmt.Errorf("mcp server %q: closing: %w", s.name, err)
	}
	return nil
}
