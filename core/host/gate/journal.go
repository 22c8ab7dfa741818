package gate

import (
	"context"

	"github.com/gopi-dev/gopi/core/agent"
)

// Journal keeps what a call is about to change, so a checkpoint can put it
// back (core/host's checkpoints, where there is no snapshot).
type Journal interface {
	Keep(ctx context.Context, call agent.Call)
}

// journalStage hands each call about to run to the journal.
type journalStage struct {
	BeforeOnly
	j Journal
}

// JournalStage is the stage that keeps what an approved call will change.
func JournalStage(j Journal) Stage { return journalStage{j: j} }

func (s journalStage) Before(ctx context.Context, c *Call) (bool, string) {
	s.j.Keep(ctx, c.Call)
	return false, ""
}
