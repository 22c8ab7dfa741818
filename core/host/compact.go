package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/host/run"
	"github.com/gopi-dev/gopi/core/llm"
)

// AbortRetry cancels a retry's wait; the prompt then ends with
// auto_retry_end success false.
func (h *Host) AbortRetry(context.Context) error {
	h.run.CancelRetry()
	return nil
}

// SetAutoRetry turns retrying transient failures on or off.
func (h *Host) SetAutoRetry(_ context.Context, p api.EnabledParams) error {
	h.run.SetAutoRetry(p.Enabled)
	return nil
}

// SetAutoCompaction turns automatic compaction on or off.
func (h *Host) SetAutoCompaction(_ context.Context, p api.EnabledParams) error {
	h.run.SetAutoCompaction(p.Enabled)
	return nil
}

// compactNow summarises the older part of the branch with the current
// model and appends a compaction entry; the context becomes summary plus
// kept messages. A failure leaves the session untouched. abort (or
// h.ctx ending) cancels it with errCompactionAborted.
func (h *Host) compactNow(ctx context.Context, reason, instructions string) (*api.CompactionResult, error) {
	ctx, release, ok := h.run.SummaryWork(ctx)
	if !ok {
		return nil, errCompactionRunning
	}
	defer release()
	settings := h.run.CompactionSettings()

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
	hooked, fromHook, err := h.ext.beforeCompact(ctx, store, prep, reason, instructions)
	if err != nil {
		return nil, err
	}
	var res compaction.Result
	if fromHook {
		res = hooked
	} else {
		res, err = run.RetrySummary(ctx, h.run, "compaction", reason, func() (compaction.Result, error) {
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
	if err := h.system.record(store); err != nil {
		return nil, h.log.saved(store, "the compaction", err)
	}
	entryID, err := store.AppendCompaction(res.Summary, res.FirstKeptEntryID, res.TokensBefore, entryDetails, fromHook, usage)
	if err != nil {
		return nil, h.log.saved(store, "the compaction", err)
	}
	h.ext.afterCompact(store, entryID, reason, fromHook)
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
// compaction (see [run.Run.StartCompact]). The returned function does the
// summarising.
func (h *Host) StartCompact(ctx context.Context, p api.CompactParams) (func() (api.CompactionResult, error), error) {
	if err := h.Abort(ctx); err != nil {
		return nil, err
	}
	return h.run.StartCompact(ctx, p.CustomInstructions)
}
