package acp

import (
	"encoding/json"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/api"
)

// compactions numbers a session's compactions for the client; guarded by
// the session's mu.
type compactions struct {
	enabled bool
	n       int
	current string // the one in progress
}

// clientCompaction reports whether initialize's params declare
// clientCapabilities.session.compaction (an object).
func clientCompaction(params json.RawMessage) bool { return clientSessionCap(params, "compaction") }

// compactionEvent sends a compaction's start or end; s.mu is held and a
// prompt is being answered.
func (s *session) compactionEvent(ev api.Event) {
	c := &s.compactions
	if !c.enabled {
		return
	}
	u := compactionUpdate{SessionUpdate: "compaction_update"}
	switch e := ev.(type) {
	case api.CompactionStart:
		c.n++
		c.current = fmt.Sprintf("compaction-%d", c.n)
		u.CompactionID, u.Status = c.current, "in_progress"
	case api.CompactionEnd:
		if c.current == "" {
			return
		}
		u.CompactionID = c.current
		c.current = ""
		switch {
		case e.Aborted:
			u.Status = "cancelled"
		case e.Result != nil:
			u.Status = "completed"
			if e.Result.Summary != "" {
				u.Summary = []sdk.ContentBlock{sdk.TextBlock(e.Result.Summary)}
			}
		default:
			u.Status = "failed"
		}
	default:
		return
	}
	if err := s.w.notify(sdk.ClientMethodSessionUpdate, sessionNotification{SessionID: sdk.SessionId(s.id), Update: u}); err != nil {
		s.report(fmt.Errorf("acp: session/update: %w", err))
	}
}
