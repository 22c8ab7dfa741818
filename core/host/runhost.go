package host

import (
	"context"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/llm"
)

// runHost is what the run tells the host: the events, and the problems
// it survived.
type runHost struct{ h *Host }

func (r runHost) Emit(ev api.Event) { r.h.emit(ev) }
func (r runHost) Report(err error)  { r.h.opts.Report(err) }

func (r runHost) HookFailed(event string, err error) { r.h.extFailed(event, err) }

// runSession is the session's side of the run (run.Session).
type runSession struct{ h *Host }

func (r runSession) Compact(ctx context.Context, reason, instructions string) (*api.CompactionResult, error) {
	return r.h.compactNow(ctx, reason, instructions)
}

func (r runSession) LastCompaction() (int64, bool) { return latestCompaction(r.h.Store().Path()) }

func (r runSession) CompactFailed(reason string, aborted, willRetry bool, errorMessage *string) {
	r.h.extEvent(ext.SessionCompactFailedEvent{Reason: reason, Aborted: aborted, WillRetry: willRetry, ErrorMessage: errorMessage})
}

func (r runSession) AppendCustom(msg *llm.CustomMessage) { r.h.appendCustom(msg) }

func (r runSession) BeforeSettle() func() { return r.h.beforeSettle() }

func (r runSession) Ending() {
	h := r.h
	// A bash command the user ran during the run joins the transcript
	// now, so it is saved even if no prompt follows (pi holds it for the
	// next prompt and loses it when none comes).
	h.flushPendingBash()
	h.run.FlushCustom()
	// Extensions' handlers of the run's events finish first (a dialog an
	// agent_end handler opened is answered), as pi awaits them.
	h.drainExtensions()
}
