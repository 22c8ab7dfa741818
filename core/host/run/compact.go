package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/llm"
)

const overflowGaveUp = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing the context or switching to a model with a larger context window."

// overflowAsIs is compaction_end's note when an overflowed request cannot
// be made smaller: it is tried once more as it is (as pi does), and a
// second overflow ends the prompt with overflowGaveUp.
const overflowAsIs = "Nothing to compact (session too small); the request is tried once more as it is"

// autoCompact compacts when the reply overflowed the context (then
// retries it) or the context passed the threshold.
func (r *Run) autoCompact(last *llm.AssistantMessage) func() {
	r.mu.Lock()
	settings := r.compaction
	overflowTried := r.overflowTried
	if last.StopReason != llm.StopError {
		r.overflowTried = false
	}
	r.mu.Unlock()
	if !settings.Enabled || last.StopReason == llm.StopAborted {
		return nil
	}
	model := r.agent.Model()
	if model == nil {
		return nil
	}
	if t, ok := r.session.LastCompaction(); ok && last.Timestamp <= t {
		return nil // a reply from before the last compaction
	}
	sameModel := last.Provider == model.Provider && last.Model == model.ID
	if sameModel && llm.IsContextOverflow(last, model.ContextWindow) {
		if overflowTried {
			r.compactionEnded("overflow", api.AutoCompactionEnd{ErrorMessage: overflowGaveUp})
			return nil
		}
		r.mu.Lock()
		r.overflowTried = true
		r.mu.Unlock()
		r.dropLastAssistant()
		if _, ok := r.compactWithEvents("overflow", true); !ok {
			return nil
		}
		// The rebuilt context ends with the failed reply again (it stays in
		// the file as history); ask the question anew without it.
		if msgs := r.agent.Messages(); len(msgs) > 0 {
			if a, ok := msgs[len(msgs)-1].(*llm.AssistantMessage); ok && a.StopReason == llm.StopError {
				r.dropLastAssistant()
			}
		}
		return r.continueRun()
	}
	var tokens int
	if last.StopReason == llm.StopError {
		est := compaction.EstimateContext(r.agent.Messages())
		if est.LastUsageIndex < 0 {
			return nil
		}
		tokens = est.Tokens
	} else {
		tokens = compaction.ContextTokens(last.Usage)
	}
	if !compaction.ShouldCompact(tokens, model.ContextWindow, settings) {
		return nil
	}
	if _, ok := r.compactWithEvents("threshold", false); !ok {
		return nil
	}
	if steer, follow := r.agent.QueueCounts(); steer+follow > 0 {
		// Messages queued during the run still need their turn.
		return r.continueRun()
	}
	return nil
}

func (r *Run) continueRun() func() {
	run, err := r.agent.StartContinue(r.ctx)
	if err != nil {
		r.host.Report(fmt.Errorf("continuing after compaction: %w", err))
		return nil
	}
	return run
}

// compactWithEvents runs an automatic compaction between
// auto_compaction_start and auto_compaction_end.
func (r *Run) compactWithEvents(reason string, willRetry bool) (res *api.CompactionResult, ok bool) {
	r.compactionStarted(reason)
	defer r.survive("automatic compaction", func(err error) {
		res, ok = nil, false
		r.compactionEnded(reason, api.AutoCompactionEnd{ErrorMessage: "Compaction failed: " + err.Error()})
	})
	res, err := r.session.Compact(r.ctx, reason, "")
	switch {
	case reason == "overflow" && errors.Is(err, ErrNothingToCompact):
		// Nothing older to summarise: the request is as small as this
		// session makes it. Retry it once; the retry's own overflow, if it
		// comes, ends the prompt with a clear error (overflowGaveUp)
		// instead of a willRetry that nothing follows.
		r.compactionEnded(reason, api.AutoCompactionEnd{WillRetry: willRetry, ErrorMessage: overflowAsIs})
		return nil, true
	case errors.Is(err, ErrCompactionAborted):
		r.compactionEnded(reason, api.AutoCompactionEnd{Aborted: true})
		return nil, false
	case err != nil:
		r.compactionEnded(reason, api.AutoCompactionEnd{ErrorMessage: "Compaction failed: " + err.Error()})
		return nil, false
	}
	r.compactionEnded(reason, api.AutoCompactionEnd{Result: res, WillRetry: willRetry})
	return res, true
}

// compactionStarted announces a compaction: compaction_start (pi 1.5, for
// every compaction) and, for automatic ones, the older document's
// auto_compaction_start, so clients of either protocol follow it.
func (r *Run) compactionStarted(reason string) {
	if reason != "manual" {
		r.host.Emit(api.AutoCompactionStart{Reason: reason})
	}
	r.host.Emit(api.CompactionStart{Reason: reason})
}

// compactionEnded is compactionStarted's end: auto_compaction_end for
// automatic compactions, and compaction_end for all of them.
func (r *Run) compactionEnded(reason string, end api.AutoCompactionEnd) {
	if reason != "manual" {
		r.host.Emit(end)
	}
	r.host.Emit(api.CompactionEnd{Reason: reason, Result: end.Result, Aborted: end.Aborted, WillRetry: end.WillRetry, ErrorMessage: end.ErrorMessage})
	if end.Result == nil {
		var msg *string
		if !end.Aborted {
			msg = &end.ErrorMessage
		}
		r.session.CompactFailed(reason, end.Aborted, end.WillRetry, msg)
	}
}

// SummaryWork claims the one slot compactions and tree navigations share
// (pi's isCompacting): abort, or the host closing, cancels the returned
// context with [ErrCompactionAborted]; release frees the slot. ok is false
// when the slot is taken.
func (r *Run) SummaryWork(ctx context.Context) (_ context.Context, release func(), ok bool) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(r.ctx, func() { cancel(ErrCompactionAborted) })
	if !r.ClaimSummary(func() { cancel(ErrCompactionAborted) }) {
		stop()
		cancel(nil)
		return ctx, nil, false
	}
	return ctx, func() {
		stop()
		r.ReleaseSummary()
		cancel(nil)
	}, true
}

// StartCompact registers a compact command, whose run the caller has
// stopped, so a prompt that follows waits for it instead of being aborted
// by it or running while the summary replaces the transcript. The
// returned function does the summarising.
func (r *Run) StartCompact(ctx context.Context, instructions string) (func() (api.CompactionResult, error), error) {
	// An abort read right behind compact must reach it even before the
	// summariser has started.
	ctx, cancel := context.WithCancelCause(ctx)
	c := &ManualCompaction{Done: make(chan struct{}), Cancel: func() { cancel(ErrCompactionAborted) }}
	if !r.RegisterManual(c) {
		cancel(nil)
		return nil, ErrCompactionRunning
	}
	return func() (api.CompactionResult, error) {
		defer func() {
			r.EndManual()
			// A prompt waiting for this compaction starts once compact's
			// answer is out, so the client reads that answer before the
			// prompt's events.
			api.AfterResponse(ctx, func() { close(c.Done) })
			cancel(nil)
		}()
		r.compactionStarted("manual")
		res, err := r.session.Compact(ctx, "manual", instructions)
		if errors.Is(context.Cause(ctx), ErrCompactionAborted) {
			r.compactionEnded("manual", api.AutoCompactionEnd{Aborted: true})
			return api.CompactionResult{}, ErrCompactionAborted
		}
		if err != nil {
			r.compactionEnded("manual", api.AutoCompactionEnd{ErrorMessage: "Compaction failed: " + err.Error()})
			return api.CompactionResult{}, err
		}
		r.compactionEnded("manual", api.AutoCompactionEnd{Result: res})
		return *res, nil
	}, nil
}

// AutoCompaction reports whether automatic compaction is on.
func (r *Run) AutoCompaction() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.compaction.Enabled
}
