package host

import (
	"context"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/host/run"
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
		// A drive's end is its done channel (closed after agent_settled);
		// without a drive, the next change of the run state.
		p, done, wait := h.run.Now()
		switch {
		case done != nil:
			wait = done
		case p == run.Idle:
			return ctx.Err()
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
