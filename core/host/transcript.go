package host

// This file owns the session being written: which store it is, whether
// its writes fail, and the messages that join it outside a run (bash
// results, extensions' messages).

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/host/run"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// transcript is the session's room: the current store (replaced by
// new_session, switch_session, fork and clone) and the health of its
// writes. It is given the agent and the run, whose messages it records.
type transcript struct {
	report func(error)
	emit   func(api.Event)
	// agent and run are set by New once it made them, before any message.
	agent *agent.Agent
	run   *run.Run

	mu    sync.Mutex
	store *session.Store
	// failing: a session write failed and none has worked since.
	failing bool
}

// current is the session being written.
func (t *transcript) current() *session.Store {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.store
}

// replace makes next the session being written.
func (t *transcript) replace(next *session.Store) {
	t.mu.Lock()
	t.store = next
	t.mu.Unlock()
}

// saved reports how a write to store went and returns err (wrapped with
// what was being saved). A failure is told to the client
// (session_write_error) as well as to stderr; the entry stays in memory
// and the store retries with its next write. When a write works again
// after one failed, the client hears session_saved.
func (t *transcript) saved(store *session.Store, what string, err error) error {
	if err != nil {
		err = fmt.Errorf("saving %s: %w", what, err)
		t.report(err)
		t.mu.Lock()
		t.failing = true
		t.mu.Unlock()
		t.emit(api.SessionWriteError{Error: err.Error(), SessionFile: store.File()})
		return err
	}
	t.mu.Lock()
	recovered := t.failing && !store.Unsaved()
	if recovered {
		t.failing = false
	}
	t.mu.Unlock()
	if recovered {
		t.emit(api.SessionSaved{SessionFile: store.File()})
	}
	return nil
}

// ErrUnsaved is returned by [Host.SaveSession] when entries could not be
// written.
var ErrUnsaved = errors.New("the session file is missing entries")

// save writes what the session file still lacks after a failed write.
func (t *transcript) save() error {
	store := t.current()
	if !store.Unsaved() {
		return nil
	}
	if err := store.Save(); err != nil {
		return fmt.Errorf("%w (%s): %v", ErrUnsaved, store.File(), err)
	}
	return t.saved(store, "the session", nil)
}

// finished records a message the run finished; the id of its entry, or
// "" when the write failed.
func (t *transcript) finished(msg llm.Message) (*session.Store, string) {
	store := t.current()
	id, err := store.AppendMessage(msg)
	if t.saved(store, "a message", err) != nil {
		return store, ""
	}
	return store, id
}

// add adds a message outside a run to the transcript and the session.
func (t *transcript) add(m llm.Message) {
	t.agent.AppendMessage(m)
	t.finished(m)
}

// addCustom adds an extension's message outside a run, reported to the
// client as a message.
func (t *transcript) addCustom(msg *llm.CustomMessage) {
	t.add(msg)
	t.emit(agent.Event{Type: agent.EventMessageStart, Message: msg})
	t.emit(agent.Event{Type: agent.EventMessageEnd, Message: msg})
}

// addBash adds a bash result to the transcript, or holds it until the
// running prompt ends so it cannot land between a tool call and its
// result. A result whose session was replaced meanwhile (new_session,
// switch, fork) goes to the session it ran in, not into the new one.
func (t *transcript) addBash(store *session.Store, m *llm.BashExecutionMessage) {
	if store != t.current() {
		_, err := store.AppendMessage(m)
		_ = t.saved(store, "a bash result", err)
		return
	}
	if t.agent.IsStreaming() {
		t.run.HoldBash(m)
		return
	}
	t.add(m)
}

// flushBash adds bash results held during a run (called when the run
// settles, and before the next prompt starts).
func (t *transcript) flushBash() {
	for _, m := range t.run.TakeBash() {
		t.add(m)
	}
}
