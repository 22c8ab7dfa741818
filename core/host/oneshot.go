package host

import (
	"context"
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

// PromptAndWait sends one prompt through the same path as the RPC
// command (template and skill expansion, the credentials check, pending
// bash results, automatic retry and compaction) and waits until the whole
// prompt has settled: print and json modes use it. Cancelling ctx aborts
// the run.
func (h *Host) PromptAndWait(ctx context.Context, text string, images []llm.ImageContent) error {
	if _, err := h.Prompt(ctx, api.PromptParams{Message: text, Images: images}); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = h.Abort(context.Background()) })
	defer stop()
	for {
		h.mu.Lock()
		done := h.driveDone
		h.mu.Unlock()
		if done == nil && !h.settle(ctx) {
			return ctx.Err()
		}
		wait := done
		if wait == nil {
			// Between runs (a queued message about to start): look again soon.
			t := time.NewTimer(5 * time.Millisecond)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
			continue
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
