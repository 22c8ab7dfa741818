package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host/run"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// RetrySettings are settings.json's "retry" object.
type RetrySettings struct {
	Enabled     bool  `json:"enabled"`
	MaxRetries  int   `json:"maxRetries"`
	BaseDelayMs int64 `json:"baseDelayMs"`
	// MaxDelayMs caps a provider's retry-after (gopi's older name).
	MaxDelayMs int64 `json:"maxDelayMs"`
	// MaxAgentDelayMs is pi 1.5's cap on a retry's wait, backoff and
	// retry-after alike; it wins over MaxDelayMs when set.
	MaxAgentDelayMs int64 `json:"maxAgentDelayMs,omitempty"`
}

// delay is how long retry attempt n (from 1) waits: the backoff,
// doubling from BaseDelayMs, or the provider's Retry-After when longer,
// capped by maxDelay.
func (r RetrySettings) delay(n int, retryAfter time.Duration) time.Duration {
	d := time.Duration(float64(r.BaseDelayMs)*math.Pow(2, float64(n-1))) * time.Millisecond
	d = max(d, retryAfter)
	if m := r.maxDelay(); m > 0 {
		d = min(d, m)
	}
	return d
}

// maxDelay is the longest a retry waits.
func (r RetrySettings) maxDelay() time.Duration {
	if r.MaxAgentDelayMs > 0 {
		return time.Duration(r.MaxAgentDelayMs) * time.Millisecond
	}
	return time.Duration(r.MaxDelayMs) * time.Millisecond
}

// DefaultRetrySettings are pi's: on, 3 retries, 2 s doubling.
func DefaultRetrySettings() RetrySettings {
	return RetrySettings{Enabled: true, MaxRetries: 3, BaseDelayMs: 2000, MaxDelayMs: 60000}
}

// drive performs an accepted prompt's run and what follows it: retries of
// transient failures and automatic compaction, which may each continue
// the run. It runs in a goroutine the host owns.
func (h *Host) drive(run func()) {
	defer func() {
		done := h.run.EndDrive()
		// A bash command the user ran during the run joins the transcript
		// now, so it is saved even if no prompt follows (pi holds it for
		// the next prompt and loses it when none comes).
		h.flushPendingBash()
		h.flushPendingCustom()
		// Extensions' handlers of the run's events finish first (a dialog
		// an agent_end handler opened is answered), as pi awaits them.
		h.drainExtensions()
		// pi 1.5's clients wait for agent_settled before they call a
		// prompt done; it comes before the prompt stops counting as in
		// progress, so a client that sees it may prompt at once.
		last := h.LastAssistant()
		h.emit(api.AgentSettled{Aborted: last != nil && last.StopReason == llm.StopAborted})
		close(done)
	}()
	for run != nil {
		run()
		if run = h.afterRunGuarded(); run == nil {
			run = h.leftoverQueue()
		}
		if run == nil {
			run = h.beforeSettle()
		}
	}
}

// leftoverQueue starts a run for messages queued after the run's last
// check of its queues (a steer that arrived between its last turn and
// the end of the prompt): they would otherwise wait for the next prompt.
// An aborted run leaves them queued.
func (h *Host) leftoverQueue() func() {
	steer, follow := h.agent.QueueCounts()
	if steer+follow == 0 || h.ctx.Err() != nil {
		return nil
	}
	if last := h.LastAssistant(); last != nil && last.StopReason == llm.StopAborted {
		return nil
	}
	run, err := h.startContinue(h.ctx)
	if err != nil {
		h.opts.Report(fmt.Errorf("running the messages queued as the prompt ended: %w", err))
		return nil
	}
	return run
}

// afterRunGuarded is afterRun with a panic in it (a retry, a compaction)
// turned into a report: the prompt then ends and the host keeps serving.
func (h *Host) afterRunGuarded() (next func()) {
	defer h.survive("the prompt's retry or compaction", func(err error) {
		next = nil
		h.driveMu.Lock()
		h.overflowTried = false
		attempt := h.retryAttempt
		h.retryAttempt = 0
		h.driveMu.Unlock()
		if attempt > 0 {
			// The retry the client was told about ends here; a later
			// success must not report it.
			h.emit(api.AutoRetryEnd{Success: false, Attempt: attempt, FinalError: err.Error()})
		}
	})
	return h.afterRun()
}

// settle reports whether a prompt is in progress (see [run.State.Settle]).
func (h *Host) settle(ctx context.Context) bool { return h.run.Settle(ctx) }

// afterRun looks at how the run ended and returns the next part to run,
// or nil when the prompt is over.
func (h *Host) afterRun() func() {
	last := h.LastAssistant()
	if last == nil || h.ctx.Err() != nil {
		return nil
	}
	if next, handled := h.retry(last); handled {
		return next
	}
	return h.autoCompact(last)
}

// isRetryable reports whether a failed reply is a transient failure worth
// another attempt: overloaded, rate limited, a 5xx, or a connection or
// stream that broke or stalled.
func (h *Host) isRetryable(m *llm.AssistantMessage) bool {
	if m.StopReason != llm.StopError || m.ErrorMessage == "" {
		return false
	}
	if cur := h.agent.Model(); cur != nil && llm.IsContextOverflow(m, cur.ContextWindow) {
		return false // compaction's job
	}
	// The provider classified the failure (status, error type, broken
	// connection); a failed reply without that (not from a provider) is
	// not retried.
	return m.Failure != nil && m.Failure.Transient()
}

// willContinue tells agent_end's willRetry: whether the runtime will
// try the failed reply again, by a retry or by compacting after a context
// overflow.
func (h *Host) willContinue(msgs []llm.Message) bool {
	var last *llm.AssistantMessage
	for i := len(msgs) - 1; i >= 0 && last == nil; i-- {
		last, _ = msgs[i].(*llm.AssistantMessage)
	}
	if last == nil || last.StopReason != llm.StopError || h.ctx.Err() != nil {
		return false
	}
	h.driveMu.Lock()
	retry, attempt := h.retrySettings, h.retryAttempt
	compact, overflowTried := h.compactionSettings, h.overflowTried
	h.driveMu.Unlock()
	if m := h.agent.Model(); m != nil && llm.IsContextOverflow(last, m.ContextWindow) {
		return compact.Enabled && !overflowTried
	}
	return retry.Enabled && h.isRetryable(last) && attempt < retry.MaxRetries
}

// retry handles a failed reply: handled is false when there is nothing
// to retry (success, a permanent error, or retries off).
func (h *Host) retry(last *llm.AssistantMessage) (next func(), handled bool) {
	h.driveMu.Lock()
	attempt := h.retryAttempt
	settings := h.retrySettings
	h.driveMu.Unlock()
	if last.StopReason != llm.StopError {
		if attempt > 0 {
			h.setRetryAttempt(0)
			h.emit(api.AutoRetryEnd{Success: true, Attempt: attempt})
		}
		return nil, false
	}
	if !settings.Enabled || !h.isRetryable(last) {
		if attempt > 0 {
			h.setRetryAttempt(0)
			h.emit(api.AutoRetryEnd{Success: false, Attempt: attempt, FinalError: last.ErrorMessage})
		}
		return nil, false
	}
	attempt++
	if attempt > settings.MaxRetries {
		h.setRetryAttempt(0)
		h.emit(api.AutoRetryEnd{Success: false, Attempt: attempt - 1, FinalError: last.ErrorMessage})
		return nil, false
	}
	h.setRetryAttempt(attempt)
	var retryAfter time.Duration
	if f := last.Failure; f != nil {
		retryAfter = f.RetryAfter
	}
	delay := settings.delay(attempt, retryAfter)
	h.emit(api.AutoRetryStart{Attempt: attempt, MaxAttempts: settings.MaxRetries, DelayMs: delay.Milliseconds(), ErrorMessage: last.ErrorMessage})

	// The failed reply stays in the session file as history but leaves the
	// context, so the retry asks the same question again.
	h.dropLastAssistant()

	ctx, cancel := context.WithCancel(h.ctx)
	h.run.WaitRetry(cancel)
	defer func() {
		h.run.RetryOver()
		cancel()
	}()
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		h.setRetryAttempt(0)
		h.emit(api.AutoRetryEnd{Success: false, Attempt: attempt, FinalError: "Retry cancelled"})
		return nil, true
	}
	run, err := h.restart()
	if err != nil {
		// The retry could not start: close the retry the client was told
		// about, or it waits for an auto_retry_end forever.
		h.opts.Report(fmt.Errorf("retrying: %w", err))
		h.setRetryAttempt(0)
		h.emit(api.AutoRetryEnd{Success: false, Attempt: attempt, FinalError: "Retry could not start: " + err.Error()})
		return nil, true
	}
	return run, true
}

// restart is startContinue with a panic turned into an error, so the
// retry the client was told about still ends with auto_retry_end.
func (h *Host) restart() (run func(), err error) {
	defer func() {
		if v := recover(); v != nil {
			var report error
			err, report = api.Panicked("the retry's restart", v)
			h.opts.Report(report)
		}
	}()
	return h.startContinue(h.ctx)
}

func (h *Host) setRetryAttempt(n int) {
	h.driveMu.Lock()
	h.retryAttempt = n
	h.driveMu.Unlock()
}

// dropLastAssistant removes a failed reply from the context (not from
// the session file).
func (h *Host) dropLastAssistant() {
	msgs := h.agent.Messages()
	if n := len(msgs); n > 0 && msgs[n-1].MessageRole() == llm.RoleAssistant {
		h.agent.ReplaceMessages(msgs[:n-1])
	}
}

// AbortRetry cancels a retry's wait; the prompt then ends with
// auto_retry_end success false.
func (h *Host) AbortRetry(context.Context) error {
	h.run.CancelRetry()
	return nil
}

// SetAutoRetry turns retrying transient failures on or off.
func (h *Host) SetAutoRetry(_ context.Context, p api.EnabledParams) error {
	h.driveMu.Lock()
	defer h.driveMu.Unlock()
	h.retrySettings.Enabled = p.Enabled
	return nil
}

// SetAutoCompaction turns automatic compaction on or off.
func (h *Host) SetAutoCompaction(_ context.Context, p api.EnabledParams) error {
	h.driveMu.Lock()
	defer h.driveMu.Unlock()
	h.compactionSettings.Enabled = p.Enabled
	return nil
}

const overflowGaveUp = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing the context or switching to a model with a larger context window."

// autoCompact compacts when the reply overflowed the context (then
// retries it) or the context passed the threshold.
func (h *Host) autoCompact(last *llm.AssistantMessage) func() {
	h.driveMu.Lock()
	settings := h.compactionSettings
	overflowTried := h.overflowTried
	if last.StopReason != llm.StopError {
		h.overflowTried = false
	}
	h.driveMu.Unlock()
	if !settings.Enabled || last.StopReason == llm.StopAborted {
		return nil
	}
	model := h.agent.Model()
	if model == nil {
		return nil
	}
	store := h.Store()
	if t, ok := latestCompaction(store.Path()); ok && last.Timestamp <= t {
		return nil // a reply from before the last compaction
	}
	sameModel := last.Provider == model.Provider && last.Model == model.ID
	if sameModel && llm.IsContextOverflow(last, model.ContextWindow) {
		if overflowTried {
			h.compactionEnded("overflow", api.AutoCompactionEnd{ErrorMessage: overflowGaveUp})
			return nil
		}
		h.driveMu.Lock()
		h.overflowTried = true
		h.driveMu.Unlock()
		h.dropLastAssistant()
		if _, ok := h.compactWithEvents("overflow", true); !ok {
			return nil
		}
		// The rebuilt context ends with the failed reply again (it stays in
		// the file as history); ask the question anew without it.
		if msgs := h.agent.Messages(); len(msgs) > 0 {
			if a, ok := msgs[len(msgs)-1].(*llm.AssistantMessage); ok && a.StopReason == llm.StopError {
				h.dropLastAssistant()
			}
		}
		return h.continueRun()
	}
	var tokens int
	if last.StopReason == llm.StopError {
		est := compaction.EstimateContext(h.agent.Messages())
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
	if _, ok := h.compactWithEvents("threshold", false); !ok {
		return nil
	}
	if steer, follow := h.agent.QueueCounts(); steer+follow > 0 {
		// Messages queued during the run still need their turn.
		return h.continueRun()
	}
	return nil
}

func (h *Host) continueRun() func() {
	run, err := h.agent.StartContinue(h.ctx)
	if err != nil {
		h.opts.Report(fmt.Errorf("continuing after compaction: %w", err))
		return nil
	}
	return run
}

// compactWithEvents runs an automatic compaction between
// auto_compaction_start and auto_compaction_end.
func (h *Host) compactWithEvents(reason string, willRetry bool) (res *api.CompactionResult, ok bool) {
	h.compactionStarted(reason)
	defer h.survive("automatic compaction", func(err error) {
		res, ok = nil, false
		h.compactionEnded(reason, api.AutoCompactionEnd{ErrorMessage: "Compaction failed: " + err.Error()})
	})
	res, err := h.compactNow(h.ctx, reason, "")
	switch {
	case reason == "overflow" && errors.Is(err, errNothingToCompact):
		// Nothing older to summarise: the request is as small as this
		// session makes it. Retry it once; the retry's own overflow, if it
		// comes, ends the prompt with a clear error (overflowGaveUp)
		// instead of a willRetry that nothing follows.
		h.compactionEnded(reason, api.AutoCompactionEnd{WillRetry: willRetry, ErrorMessage: overflowAsIs})
		return nil, true
	case errors.Is(err, errCompactionAborted):
		h.compactionEnded(reason, api.AutoCompactionEnd{Aborted: true})
		return nil, false
	case err != nil:
		h.compactionEnded(reason, api.AutoCompactionEnd{ErrorMessage: "Compaction failed: " + err.Error()})
		return nil, false
	}
	h.compactionEnded(reason, api.AutoCompactionEnd{Result: res, WillRetry: willRetry})
	return res, true
}

// compactionStarted announces a compaction: compaction_start (pi 1.5, for
// every compaction) and, for automatic ones, the older document's
// auto_compaction_start, so clients of either protocol follow it.
func (h *Host) compactionStarted(reason string) {
	if reason != "manual" {
		h.emit(api.AutoCompactionStart{Reason: reason})
	}
	h.emit(api.CompactionStart{Reason: reason})
}

// compactionEnded is compactionStarted's end: auto_compaction_end for
// automatic compactions, and compaction_end for all of them.
func (h *Host) compactionEnded(reason string, end api.AutoCompactionEnd) {
	if reason != "manual" {
		h.emit(end)
	}
	h.emit(api.CompactionEnd{Reason: reason, Result: end.Result, Aborted: end.Aborted, WillRetry: end.WillRetry, ErrorMessage: end.ErrorMessage})
	if end.Result == nil {
		ev := ext.SessionCompactFailedEvent{Reason: reason, Aborted: end.Aborted, WillRetry: end.WillRetry}
		if !end.Aborted {
			ev.ErrorMessage = &end.ErrorMessage
		}
		h.extEvent(ev)
	}
}

// summaryWork claims the one slot compactions and tree navigations share
// (pi's isCompacting): abort, or the host closing, cancels the returned
// context with errCompactionAborted; release frees the slot. ok is false
// when the slot is taken.
func (h *Host) summaryWork(ctx context.Context) (_ context.Context, release func(), ok bool) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(h.ctx, func() { cancel(errCompactionAborted) })
	if !h.run.ClaimSummary(func() { cancel(errCompactionAborted) }) {
		stop()
		cancel(nil)
		return ctx, nil, false
	}
	return ctx, func() {
		stop()
		h.run.ReleaseSummary()
		cancel(nil)
	}, true
}

// overflowAsIs is compaction_end's note when an overflowed request cannot
// be made smaller: it is tried once more as it is (as pi does), and a
// second overflow ends the prompt with overflowGaveUp.
const overflowAsIs = "Nothing to compact (session too small); the request is tried once more as it is"

// compactNow summarises the older part of the branch with the current
// model and appends a compaction entry; the context becomes summary plus
// kept messages. A failure leaves the session untouched. abort (or
// h.ctx ending) cancels it with errCompactionAborted.
func (h *Host) compactNow(ctx context.Context, reason, instructions string) (*api.CompactionResult, error) {
	ctx, release, ok := h.summaryWork(ctx)
	if !ok {
		return nil, errCompactionRunning
	}
	defer release()
	h.driveMu.Lock()
	settings := h.compactionSettings
	h.driveMu.Unlock()

	model := h.agent.Model()
	if model == nil {
		return nil, errNoModelToCompact
	}
	provider, err := h.opts.Providers.Lookup(model.API)
	if err != nil {
		return nil, err
	}
	var auth llm.Auth
	if model.API != llm.APIFaux {
		if auth, err = h.opts.Registry.RequestAuth(ctx, model); err != nil {
			return nil, fmt.Errorf("no API key for %s: %w", model.Provider, err)
		}
	}
	store := h.Store()
	prep, err := compaction.Prepare(store.Path(), settings)
	switch {
	case errors.Is(err, compaction.ErrAlreadyCompacted):
		return nil, errAlreadyCompacted
	case errors.Is(err, compaction.ErrNothingToCompact):
		return nil, errNothingToCompact
	case err != nil:
		return nil, err
	}
	// Extensions may cancel the compaction or write the summary
	// themselves (session_before_compact).
	hooked, fromHook, err := h.beforeCompact(ctx, store, prep, reason, instructions)
	if err != nil {
		return nil, err
	}
	var res compaction.Result
	if fromHook {
		res = hooked
	} else {
		res, err = h.summarize(ctx, reason, func() (compaction.Result, error) {
			return compaction.Compact(ctx, provider, model, auth, prep, instructions)
		})
	}
	if errors.Is(context.Cause(ctx), errCompactionAborted) {
		return nil, errCompactionAborted
	}
	if err != nil {
		return nil, err
	}
	var entryDetails any = res.Details
	if fromHook && res.Details.ReadFiles == nil && res.Details.ModifiedFiles == nil {
		entryDetails = nil
	}
	resUsage := res.Usage
	var usage *llm.Usage // an extension's summary cost gopi nothing
	if !fromHook {
		usage = &resUsage
	}
	// The checkpoint is the recorded tool set: bring it up to date with
	// the tools this run's searches loaded.
	if err := h.recordSystem(store); err != nil {
		return nil, h.saved(store, "the compaction", err)
	}
	entryID, err := store.AppendCompaction(res.Summary, res.FirstKeptEntryID, res.TokensBefore, entryDetails, fromHook, usage)
	if err != nil {
		return nil, h.saved(store, "the compaction", err)
	}
	h.afterCompact(store, entryID, reason, fromHook)
	msgs := store.Context().Messages
	h.agent.ReplaceMessages(msgs)
	details, _ := json.Marshal(res.Details)
	return &api.CompactionResult{
		Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID, TokensBefore: res.TokensBefore,
		EstimatedTokensAfter: estimateAll(msgs),
		Usage:                &resUsage,
		Details:              details,
	}, nil
}

// estimateAll is the heuristic token count of a whole rebuilt context.
// Provider counts from before the compaction measured what the summary
// replaced, so none of them is used.
func estimateAll(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += compaction.EstimateTokens(m)
	}
	return n
}

// Compact stops any run and compacts now, with optional extra
// instructions for the summary.
func (h *Host) Compact(ctx context.Context, p api.CompactParams) (api.CompactionResult, error) {
	finish, err := h.StartCompact(ctx, p)
	if err != nil {
		return api.CompactionResult{}, err
	}
	return finish()
}

var _ api.CompactStarter = (*Host)(nil)

// StartCompact does, in the order commands arrive, what must come before
// anything read after compact: it stops the run and registers the
// compaction, so a prompt that follows waits for it (see Prompt) instead
// of being aborted by it or running while the summary replaces the
// transcript. The returned function does the summarising.
func (h *Host) StartCompact(ctx context.Context, p api.CompactParams) (func() (api.CompactionResult, error), error) {
	if err := h.Abort(ctx); err != nil {
		return nil, err
	}
	// An abort read right behind compact must reach it even before the
	// summariser has started.
	ctx, cancel := context.WithCancelCause(ctx)
	c := &run.ManualCompaction{Done: make(chan struct{}), Cancel: func() { cancel(errCompactionAborted) }}
	if !h.run.RegisterManual(c) {
		cancel(nil)
		return nil, errCompactionRunning
	}
	return func() (api.CompactionResult, error) {
		defer func() {
			h.run.EndManual()
			// A prompt waiting for this compaction starts once compact's
			// answer is out, so the client reads that answer before the
			// prompt's events.
			api.AfterResponse(ctx, func() { close(c.Done) })
			cancel(nil)
		}()
		h.compactionStarted("manual")
		res, err := h.compactNow(ctx, "manual", p.CustomInstructions)
		if errors.Is(context.Cause(ctx), errCompactionAborted) {
			h.compactionEnded("manual", api.AutoCompactionEnd{Aborted: true})
			return api.CompactionResult{}, errCompactionAborted
		}
		if err != nil {
			h.compactionEnded("manual", api.AutoCompactionEnd{ErrorMessage: "Compaction failed: " + err.Error()})
			return api.CompactionResult{}, err
		}
		h.compactionEnded("manual", api.AutoCompactionEnd{Result: res})
		return *res, nil
	}, nil
}

// pendingCompaction is the channel closed when the registered manual
// compaction ends, or nil.
func (h *Host) pendingCompaction() <-chan struct{} { return h.run.ManualDone() }

// latestCompaction is the time of the newest compaction on the path.
func latestCompaction(path []session.Entry) (int64, bool) {
	for i := len(path) - 1; i >= 0; i-- {
		if c, ok := path[i].(*session.CompactionEntry); ok {
			t, err := time.Parse(time.RFC3339Nano, c.Timestamp)
			if err != nil {
				return 0, false
			}
			return t.UnixMilli(), true
		}
	}
	return 0, false
}

func (h *Host) compacting() bool { return h.run.Compacting() }

func (h *Host) autoCompaction() bool {
	h.driveMu.Lock()
	defer h.driveMu.Unlock()
	return h.compactionSettings.Enabled
}
