package ext

// This file holds the Manager and its members: starting and reloading the
// extensions, merging what they registered, and the peer each one sees.
// Keeping their state current is in manager_sync.go, how a call reaches
// them in manager_dispatch.go, and how the hooks' answers combine in
// manager_hooks.go.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/gopi-dev/gopi/core/session"
)

// Manager is the extensions of one gopi process: it starts them, keeps
// their copy of gopi's state current and combines their answers to each
// hook the way pi's runner combines handlers.
type Manager struct {
	exts  []*member
	ready chan struct{}

	mu      sync.Mutex // guards the fields below
	peer    Peer
	started bool
	regs    Registrations // merged, in extension order
}

// member is one extension and what gopi knows of it.
type member struct {
	ext Extension

	mu      sync.Mutex // guards regs, handles and running
	regs    Registrations
	handles map[string]bool
	running bool

	syncMu sync.Mutex // guards the sync state below
	gen    int
	store  *session.Store
	lastID string
	// sent is the snapshot the extension's copy holds (nil after a
	// (re)start: everything goes out again).
	sent     *Snapshot
	leafSent string
	rareSent bool   // State.Rare went out since the last (re)start
	rareRev  uint64 // the State.RareRev it went out at
	restarts int
}

// NewManager manages exts, in order.
func NewManager(exts ...Extension) *Manager {
	m := &Manager{ready: make(chan struct{})}
	for _, e := range exts {
		m.exts = append(m.exts, &member{ext: e})
	}
	return m
}

// Empty reports whether there are no extensions at all.
func (m *Manager) Empty() bool { return m == nil || len(m.exts) == 0 }

// Start starts every extension (concurrently) and returns once all have
// loaded or failed. Failures are reported to peer as "error"
// notifications and leave that extension out. Run it in the background:
// the rest of gopi's startup need not wait, and [Manager.Wait] lets what
// needs the extensions wait for them.
func (m *Manager) Start(ctx context.Context, peer Peer) {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return
	}
	m.started = true
	m.peer = peer
	m.mu.Unlock()
	defer close(m.ready)
	var wg sync.WaitGroup
	for _, mem := range m.exts {
		wg.Go(func() {
			regs, err := mem.ext.Start(ctx, &memberPeer{m: m, mem: mem})
			if err != nil {
				peer.Notification(PeerError, mustJSON(ErrorEvent{ExtensionPath: "<extension host>", Event: "load", Error: err.Error()}))
				return
			}
			mem.set(regs)
			for _, le := range regs.Errors {
				peer.Notification(PeerError, mustJSON(ErrorEvent{ExtensionPath: le.Path, Event: "load", Error: le.Error}))
			}
		})
	}
	wg.Wait()
	m.merge()
}

func (m *Manager) merge() {
	var regs Registrations
	tools, servers := map[string]bool{}, map[string]bool{}
	for _, mem := range m.exts {
		mr, running := mem.registrations()
		if !running {
			continue
		}
		regs.Loaded = append(regs.Loaded, mr.Loaded...)
		regs.Errors = append(regs.Errors, mr.Errors...)
		for _, t := range mr.Tools {
			if !tools[t.Name] { // the first registration of a name wins, as in pi
				tools[t.Name] = true
				regs.Tools = append(regs.Tools, t)
			}
		}
		regs.Commands = append(regs.Commands, mr.Commands...)
		regs.Flags = append(regs.Flags, mr.Flags...)
		regs.Shortcuts = append(regs.Shortcuts, mr.Shortcuts...)
		for _, h := range mr.Handlers {
			if !slices.Contains(regs.Handlers, h) {
				regs.Handlers = append(regs.Handlers, h)
			}
		}
		for _, s := range mr.MCPServers {
			if !servers[s.Name] {
				servers[s.Name] = true
				regs.MCPServers = append(regs.MCPServers, s)
			}
		}
	}
	m.mu.Lock()
	m.regs = regs
	m.mu.Unlock()
}

// Reload loads every extension afresh that can be ([Reloader]) and
// replaces what they registered; load errors are reported as at start.
// The first that fails to reload ends it (those before it have
// reloaded, it and those after keep their old load).
func (m *Manager) Reload(ctx context.Context) error {
	m.mu.Lock()
	peer := m.peer
	m.mu.Unlock()
	defer m.merge()
	for _, mem := range m.exts {
		r, ok := mem.ext.(Reloader)
		if !ok {
			continue
		}
		if _, running := mem.registrations(); !running {
			continue
		}
		regs, err := r.Reload(ctx)
		if err != nil {
			return fmt.Errorf("reloading extensions: %w", err)
		}
		mem.set(regs)
		for _, le := range regs.Errors {
			peer.Notification(PeerError, mustJSON(ErrorEvent{ExtensionPath: le.Path, Event: "load", Error: le.Error}))
		}
	}
	return nil
}

// Wait blocks until Start has finished.
func (m *Manager) Wait(ctx context.Context) error {
	if m.Empty() {
		return nil
	}
	select {
	case <-m.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Ready reports whether Start has finished.
func (m *Manager) Ready() bool {
	if m.Empty() {
		return true
	}
	select {
	case <-m.ready:
		return true
	default:
		return false
	}
}

// Registrations are what the extensions registered (empty until ready).
func (m *Manager) Registrations() Registrations {
	if m.Empty() || !m.Ready() {
		return Registrations{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.regs
}

// Handles reports whether some extension listens to event.
func (m *Manager) Handles(event string) bool {
	if m.Empty() || !m.Ready() {
		return false
	}
	for _, mem := range m.exts {
		if mem.listens(event) {
			return true
		}
	}
	return false
}

// Close stops every extension.
func (m *Manager) Close() error {
	if m.Empty() {
		return nil
	}
	var errs []error
	for _, mem := range m.exts {
		errs = append(errs, mem.ext.Close())
	}
	return errors.Join(errs...)
}

// set records what the extension registered; it is running from then on.
func (mem *member) set(regs Registrations) {
	handles := map[string]bool{}
	for _, h := range regs.Handlers {
		handles[h] = true
	}
	mem.mu.Lock()
	defer mem.mu.Unlock()
	mem.regs, mem.handles, mem.running = regs, handles, true
}

func (mem *member) registrations() (Registrations, bool) {
	mem.mu.Lock()
	defer mem.mu.Unlock()
	return mem.regs, mem.running
}

// listens reports whether the running extension handles event.
func (mem *member) listens(event string) bool {
	mem.mu.Lock()
	defer mem.mu.Unlock()
	return mem.running && mem.handles[event]
}

// memberPeer is gopi as one extension sees it: the manager reloads what
// an extension registered when it restarts.
type memberPeer struct {
	m   *Manager
	mem *member
}

func (p *memberPeer) Request(ctx context.Context, method Method, params json.RawMessage) (any, error) {
	p.m.mu.Lock()
	peer := p.m.peer
	p.m.mu.Unlock()
	return peer.Request(ctx, method, params)
}

func (p *memberPeer) Notification(method Method, params json.RawMessage) {
	p.m.mu.Lock()
	peer := p.m.peer
	p.m.mu.Unlock()
	switch method {
	case PeerRegistrations:
		// Bad params are the peer's to report: it decodes them too.
		if regs, err := decode[Registrations](method, params); err == nil {
			old, _ := p.mem.registrations()
			regs.Loaded, regs.Errors = old.Loaded, old.Errors
			p.mem.set(regs)
			p.m.merge()
		}
	case PeerRestarted:
		p.mem.syncMu.Lock()
		p.mem.sent, p.mem.store, p.mem.restarts = nil, nil, p.mem.restarts+1
		p.mem.syncMu.Unlock()
	case PeerStopped:
		// The MCP servers it registered stop with it. (Its tools and
		// handlers stay: their calls fail, and a tool_call that fails
		// blocks its tool, as a guard that is down should.)
		p.mem.mu.Lock()
		p.mem.regs.MCPServers = nil
		p.mem.mu.Unlock()
		p.m.merge()
	}
	peer.Notification(method, params)
}
