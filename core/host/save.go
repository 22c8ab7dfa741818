package host

import (
	"errors"
	"fmt"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/session"
)

// saved reports how a write to store went and returns err (wrapped with
// what was being saved). A failure is told to the client
// (session_write_error) as well as to stderr; the entry stays in memory
// and the store retries with its next write. When a write works again
// after one failed, the client hears session_saved.
func (h *Host) saved(store *session.Store, what string, err error) error {
	if err != nil {
		err = fmt.Errorf("saving %s: %w", what, err)
		h.opts.Report(err)
		h.mu.Lock()
		h.saveFailing = true
		h.mu.Unlock()
		h.emit(api.SessionWriteError{Error: err.Error(), SessionFile: store.File()})
		return err
	}
	h.mu.Lock()
	recovered := h.saveFailing && !store.Unsaved()
	if recovered {
		h.saveFailing = false
	}
	h.mu.Unlock()
	if recovered {
		h.emit(api.SessionSaved{SessionFile: store.File()})
	}
	return nil
}

// ErrUnsaved is returned by [Host.SaveSession] when entries could not be
// written.
var ErrUnsaved = errors.New("the session file is missing entries")

// SaveSession writes what the session file still lacks after a failed
// write; a mode calls it before exiting so it can exit non-zero when the
// disk is still full.
func (h *Host) SaveSession() error {
	store := h.Store()
	if !store.Unsaved() {
		return nil
	}
	if err := store.Save(); err != nil {
		return fmt.Errorf("%w (%s): %v", ErrUnsaved, store.File(), err)
	}
	return h.saved(store, "the session", nil)
}
