package host

// This file owns the compaction hooks: session_before_compact, which may
// cancel a compaction or supply it, and session_compact after one is saved.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// beforeCompact runs the session_before_compact handlers: one may cancel
// the compaction (an error) or return the compaction itself (fromHook).
func (e *extRoom) beforeCompact(ctx context.Context, store *session.Store, prep *compaction.Preparation, reason, instructions string) (res compaction.Result, fromHook bool, err error) {
	m := e.manager()
	if err := e.waitLoaded(ctx); err != nil || !m.Handles(ext.EventSessionBeforeCompact) {
		return res, false, nil
	}
	files := prep.Files.Details()
	branch := make([]json.RawMessage, 0)
	for _, e := range store.Path() {
		if b, err := json.Marshal(e); err == nil {
			branch = append(branch, b)
		}
	}
	ev := ext.SessionBeforeCompactEvent{
		Preparation: ext.CompactPreparation{
			FirstKeptEntryID:    prep.FirstKeptEntryID,
			MessagesToSummarize: nonNil(prep.Messages),
			TurnPrefixMessages:  nonNil(prep.TurnPrefix),
			IsSplitTurn:         prep.IsSplitTurn,
			TokensBefore:        prep.TokensBefore,
			PreviousSummary:     prep.PreviousSummary,
			FileOps:             ext.FileOps{Read: files.ReadFiles, Modified: files.ModifiedFiles},
			Settings:            prep.Settings,
		},
		BranchEntries:      branch,
		CustomInstructions: instructions,
		Reason:             reason,
	}
	// A custom summary may call a model: no hook timeout here.
	r, err := ext.EmitFor[ext.BeforeCompactResult](ext.Untimed(ctx), m, ev, e.snapshot())
	if err != nil {
		e.failed(ext.EventSessionBeforeCompact, err)
		return res, false, nil
	}
	if r.Cancel {
		return res, false, errCompactionCancelled
	}
	if c := r.Compaction; c != nil && strings.TrimSpace(c.Summary) != "" {
		res = compaction.Result{Summary: c.Summary, FirstKeptEntryID: c.FirstKeptEntryID, TokensBefore: c.TokensBefore, Details: c.Details}
		if res.FirstKeptEntryID == "" {
			res.FirstKeptEntryID = prep.FirstKeptEntryID
		}
		if res.TokensBefore == 0 {
			res.TokensBefore = prep.TokensBefore
		}
		return res, true, nil
	}
	return res, false, nil
}

// afterCompact tells extensions about a saved compaction
// (session_compact).
func (e *extRoom) afterCompact(store *session.Store, entryID, reason string, fromHook bool) {
	m := e.manager()
	if !m.Handles(ext.EventSessionCompact) {
		return
	}
	entry, ok := store.Entry(entryID)
	if !ok {
		return
	}
	b, err := json.Marshal(entry)
	if err != nil {
		e.failed(ext.EventSessionCompact, fmt.Errorf("the compaction entry: %w", err))
		return
	}
	m.NotifyEvent(ext.SessionCompactEvent{CompactionEntry: b, FromExtension: fromHook, Reason: reason}, e.snapshot())
}

func nonNil(msgs []llm.Message) []llm.Message {
	if msgs == nil {
		return []llm.Message{}
	}
	return msgs
}
