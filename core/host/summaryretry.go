package host

import (
	"context"
	"errors"
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/llm"
)

// summarize runs one compaction's summary requests; see retrySummary.
func (h *Host) summarize(ctx context.Context, reason string, attempt func() (compaction.Result, error)) (compaction.Result, error) {
	return retrySummary(ctx, h, "compaction", reason, attempt)
}

// retrySummary runs a summary's requests (source "compaction" or
// "branchSummary"; reason only for a compaction), retrying a transient
// provider failure (429, 5xx, overloaded, a cut or stalled stream) with
// the same settings and backoff as a reply: pi 1.5's
// summarization_retry_scheduled before each wait,
// summarization_retry_attempt_start before each new attempt, and
// summarization_retry_finished once retrying is over, whatever the
// outcome. A permanent failure, retries switched off or ctx ending stops
// at once.
func retrySummary[T any](ctx context.Context, h *Host, source, reason string, attempt func() (T, error)) (T, error) {
	h.driveMu.Lock()
	settings := h.retrySettings
	h.driveMu.Unlock()
	retried := false
	defer func() {
		if retried {
			h.emit(api.SummarizationRetryFinished{})
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
		h.emit(api.SummarizationRetryScheduled{Attempt: n, MaxAttempts: settings.MaxRetries, DelayMs: delay.Milliseconds(), ErrorMessage: pe.Error()})
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return res, err
		case <-t.C:
		}
		h.emit(api.SummarizationRetryAttemptStart{Source: source, Reason: reason})
	}
}
