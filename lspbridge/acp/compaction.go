package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/api"
)

// compactionUpdate is the schema's CompactionUpdate (compaction_update):
// a compaction of the session's context, first in progress, then ended
// with its summary. The SDK has no type for it. A client gets it only
// when it declared clientCapabilities.session.compaction.
type compactionUpdate struct {
	SessionUpdate string             `json:"sessionUpdate"` // "compaction_update"
	CompactionID  string             `json:"compactionId"`
	Status        string             `json:"status"`
	Summary       []sdk.ContentBlock `json:"summary,omitempty"`
}

// compactionNotification is a session/update carrying one.
type compactionNotification struct {
	SessionID string           `json:"sessionId"`
	Update    compactionUpdate `json:"update"`
}

// compactions numbers a session's compactions for the client; guarded by
// the session's mu.
type compactions struct {
	enabled bool
	n       int
	current string // the one in progress
}

// clientCompaction reports whether initialize's params declare
// clientCapabilities.session.compaction (an object).
func clientCompaction(params json.RawMessage) bool {
	var p struct {
		Caps struct {
			Session *struct {
				Compaction json.RawMessage `json:"compaction"`
			} `json:"session"`
		} `json:"clientCapabilities"`
	}
	if json.Unmarshal(params, &p) != nil || p.Caps.Session == nil {
		return false
	}
	return strings.HasPrefix(strings.TrimSpace(string(p.Caps.Session.Compaction)), "{")
}

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
	if err := s.w.notify(sdk.ClientMethodSessionUpdate, compactionNotification{SessionID: s.id, Update: u}); err != nil {
		s.report(fmt.Errorf("acp: session/update: %w", err))
	}
}
