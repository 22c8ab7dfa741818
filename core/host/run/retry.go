package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
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

// isRetryable reports whether a failed reply is a transient failure worth
// another attempt: overloaded, rate limited, a 5xx, or a connection or
// stream that broke or stalled.
func (r *Run) isRetryable(m *llm.AssistantMessage) bool {
	if m.StopReason != llm.StopError || m.ErrorMessage == "" {
		return false
	}
	if cur := r.agent.Model(); cur != nil && llm.IsContextOverflow(m, cur.ContextWindow) {
		return false // compaction's job
	}
	// The provider classified the failure (status, error type, broken
	// connection); a failed reply without that (not from a provider) is
	// not retried.
	return m.Failure != nil && m.Failure.Transient()
}

// WillContinue tells agent_end's willRetry: whether the run will try the
// failed reply again, by a retry or by compacting after a context
// overflow.
func (r *Run) WillContinue(msgs []llm.Message) bool {
	var last *llm.AssistantMessage
	for i := len(msgs) - 1; i >= 0 && last == nil; i-- {
		last, _ = msgs[i].(*llm.AssistantMessage)
	}
	if last == nil || last.StopReason != llm.StopError || r.ctx.Err() != nil {
		return false
	}
	r.mu.Lock()
	retry, attempt := r.retry, r.attempt
	compact, overflowTried := r.compaction, r.overflowTried
	r.mu.Unlock()
	if m := r.agent.Model(); m != nil && llm.IsContextOverflow(last, m.ContextWindow) {
		return compact.Enabled && !overflowTried
	}
	return retry.Enabled && r.isRetryable(last) && attempt < retry.MaxRetries
}

// retryReply handles a failed reply: handled is false when there is
// nothing to retry (success, a permanent error, or retries off).
func (r *Run) retryReply(last *llm.AssistantMessage) (next func(), handled bool) {
	r.mu.Lock()
	attempt := r.attempt
	settings := r.retry
	r.mu.Unlock()
	if last.StopReason != llm.StopError {
		if attempt > 0 {
			r.setAttempt(0)
			r.host.Emit(api.AutoRetryEnd{Success: true, Attempt: attempt})
		}
		return nil, false
	}
	if !settings.Enabled || !r.isRetryable(last) {
		if attempt > 0 {
			r.setAttempt(0)
			r.host.Emit(api.AutoRetryEnd{Success: false, Attempt: attempt, FinalError: last.ErrorMessage})
		}
		return nil, false
	}
	attempt++
	if attempt > settings.MaxRetries {
		r.setAttempt(0)
		r.host.Emit(api.AutoRetryEnd{Success: false, Attempt: attempt - 1, FinalError: last.ErrorMessage})
		return nil, false
	}
	r.setAttempt(attempt)
	var retryAfter time.Duration
	if f := last.Failure; f != nil {
		retryAfter = f.RetryAfter
	}
	delay := settings.delay(attempt, retryAfter)
	r.host.Emit(api.AutoRetryStart{Attempt: attempt, MaxAttempts: settings.MaxRetries, DelayMs: delay.Milliseconds(), ErrorMessage: last.ErrorMessage})

	// The failed reply stays in the session file as history but leaves the
	// context, so the retry asks the same question again.
	r.dropLastAssistant()

	ctx, cancel := context.WithCancel(r.ctx)
	r.WaitRetry(cancel)
	defer func() {
		r.RetryOver()
		cancel()
	}()
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		r.setAttempt(0)
		r.host.Emit(api.AutoRetryEnd{Success: false, Attempt: attempt, FinalError: "Retry cancelled"})
		return nil, true
	}
	run, err := r.restartGuarded()
	if err != nil {
		// The retry could not start: close the retry the client was told
		// about, or it waits for an auto_retry_end forever.
		r.host.Report(fmt.Errorf("retrying: %w", err))
		r.setAttempt(0)
		r.host.Emit(api.AutoRetryEnd{Success: false, Attempt: attempt, FinalError: "Retry could not start: " + err.Error()})
		return nil, true
	}
	return run, true
}

// restartGuarded is the restart with a panic turned into an error, so the
// retry the client was told about still ends with auto_retry_end.
func (r *Run) restartGuarded() (run func(), err error) {
	defer func() {
		if v := recover(); v != nil {
			var report error
			err, report = api.Panicked("the retry's restart", v)
			r.host.Report(report)
		}
	}()
	return r.restart(r.ctx)
}

func (r *Run) setAttempt(n int) {
	r.mu.Lock()
	r.attempt = n
	r.mu.Unlock()
}

// dropLastAssistant removes a failed reply from the context (not from
// the session file).
func (r *Run) dropLastAssistant() {
	msgs := r.agent.Messages()
	if n := len(msgs); n > 0 && msgs[n-1].MessageRole() == llm.RoleAssistant {
		r.agent.ReplaceMessages(msgs[:n-1])
	}
}

// RetrySummary runs a summary's requests (source "compaction" or
// "branchSummary"; reason only for a compaction), retrying a transient
// provider failure (429, 5xx, overloaded, a cut or stalled stream) with
// the same settings and backoff as a reply: pi 1.5's
// summarization_retry_scheduled before each wait,
// summarization_retry_attempt_start before each new attempt, and
// summarization_retry_finished once retrying is over, whatever the
// outcome. A permanent failure, retries switched off or ctx ending stops
// at once.
func RetrySummary[T any](ctx context.Context, r *Run, source, reason string, attempt func() (T, error)) (T, error) {
	r.mu.Lock()
	settings := r.retry
	r.mu.Unlock()
	retried := false
	defer func() {
		if retried {
			r.host.Emit(api.SummarizationRetryFinished{})
		}
	}()
	for n := 1; ; n++ {
		res, err := attempt()
		var pe *llm.ProviderError
		if err == nil || !settings.Enabled || n > settings.MaxRetries || ctx.Err() != nil ||
			!errors.As(err, &pe) || !pe.Transient() {
			return res, err
		}
		delay := settings.delay(n, pe.RetryAfter)
		retried = true
		r.host.Emit(api.SummarizationRetryScheduled{Attempt: n, MaxAttempts: settings.MaxRetries, DelayMs: delay.Milliseconds(), ErrorMessage: pe.Error()})
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return res, err
		case <-t.C:
		}
		r.host.Emit(api.SummarizationRetryAttemptStart{Source: source, Reason: reason})
	}
}
