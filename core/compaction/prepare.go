package compaction

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// Preparation is everything [Compact] needs, worked out from a branch
// without calling a model (pi's CompactionPreparation). Extensions may
// inspect it before the summary is written.
type Preparation struct {
	// FirstKeptEntryID is the id of the first entry the compacted context
	// keeps word for word.
	FirstKeptEntryID string
	// Messages are the ones the summary replaces: everything since the
	// previous compaction's kept part, up to the cut (or, for a split
	// turn, up to the start of that turn).
	Messages []llm.Message
	// TurnPrefix holds, for a split turn, the turn's messages before the
	// cut; they get a summary of their own.
	TurnPrefix []llm.Message
	// IsSplitTurn is true when the cut falls inside a turn.
	IsSplitTurn bool
	// TokensBefore is the estimated size of the whole context before
	// compacting ([EstimateContext] of the branch's context).
	TokensBefore int
	// PreviousSummary is the summary of the last compaction on the branch,
	// which the new summary extends; "" when there is none.
	PreviousSummary string
	// Files are the file operations of the summarised messages and of
	// earlier compactions.
	Files FileOps
	// Settings are the settings the preparation was made with; Compact
	// sizes the summary from ReserveTokens.
	Settings Settings
}

// Prepare works out a compaction of path, the active branch from the root
// to the leaf (session.Store.Path), as pi's prepareCompaction does:
//
//   - with an earlier compaction on the path, only what came after its
//     summary is considered (its kept entries included) and its summary is
//     carried into the new one;
//   - the cut keeps about s.KeepRecentTokens of the newest messages and
//     never separates a tool result from the call before it;
//   - when the cut falls inside a turn, that turn's start is summarised
//     separately so the kept rest still makes sense.
//
// It fails with [ErrAlreadyCompacted] when the leaf is a compaction,
// [ErrNothingToCompact] when the cut would drop nothing, and
// [ErrNoEntryID] for entries without ids.
func Prepare(path []session.Entry, s Settings) (*Preparation, error) {
	if len(path) == 0 {
		return nil, fmt.Errorf("prepare compaction: empty branch: %w", ErrNothingToCompact)
	}
	if _, ok := path[len(path)-1].(*session.CompactionEntry); ok {
		return nil, fmt.Errorf("prepare compaction: %w", ErrAlreadyCompacted)
	}

	var prev *session.CompactionEntry
	start := 0
	for i := len(path) - 1; i >= 0; i-- {
		if c, ok := path[i].(*session.CompactionEntry); ok {
			prev = c
			start = i + 1
			for j, e := range path[:i] {
				if e.Base().ID == c.FirstKeptEntryID {
					start = j
					break
				}
			}
			break
		}
	}

	cp := findCutPoint(path, start, len(path), s.KeepRecentTokens)
	if cp.firstKept >= len(path) {
		return nil, fmt.Errorf("prepare compaction: %w", ErrNothingToCompact)
	}
	id := path[cp.firstKept].Base().ID
	if id == "" {
		return nil, fmt.Errorf("prepare compaction: %w", ErrNoEntryID)
	}

	historyEnd := cp.firstKept
	if cp.splitTurn {
		historyEnd = cp.turnStart
	}
	p := &Preparation{
		FirstKeptEntryID: id,
		Messages:         messagesOf(path[start:historyEnd]),
		IsSplitTurn:      cp.splitTurn,
		TokensBefore:     EstimateContext(session.BuildContext(path).Messages).Tokens,
		Files:            newFileOps(),
		Settings:         s,
	}
	if cp.splitTurn {
		p.TurnPrefix = messagesOf(path[cp.turnStart:cp.firstKept])
	}
	if len(p.Messages) == 0 && len(p.TurnPrefix) == 0 {
		return nil, fmt.Errorf("prepare compaction: %w", ErrNothingToCompact)
	}
	if prev != nil {
		p.PreviousSummary = prev.Summary
		if prev.FromHook == nil || !*prev.FromHook {
			p.Files.addDetails(prev.Details)
		}
	}
	for _, m := range p.Messages {
		p.Files.addMessage(m)
	}
	for _, m := range p.TurnPrefix {
		p.Files.addMessage(m)
	}
	return p, nil
}

// messagesOf returns the messages entries stand for in a summary: the
// conversation's messages, extension messages and branch summaries.
// Compaction entries are left out; their summary travels separately.
func messagesOf(entries []session.Entry) []llm.Message {
	out := make([]llm.Message, 0, len(entries))
	for _, e := range entries {
		switch e := e.(type) {
		case *session.MessageEntry:
			if e.Role() == llm.RoleSystem {
				continue // the prompt is not conversation; the entry checkpoints it
			}
			out = append(out, e.Message())
		case *session.CustomMessageEntry:
			out = append(out, &llm.CustomMessage{CustomType: e.CustomType, Content: e.Content,
				Display: e.Display, Details: e.Details, Timestamp: e.Millis()})
		case *session.BranchSummaryEntry:
			out = append(out, &llm.BranchSummaryMessage{Summary: e.Summary, FromID: e.FromID, Timestamp: e.Millis()})
		}
	}
	return out
}

// FileOps collects the paths the model's read, write and edit tool calls
// touched, its own and those its codemode scripts made.
type FileOps struct {
	Read    map[string]struct{}
	Written map[string]struct{}
	Edited  map[string]struct{}
}

func newFileOps() FileOps {
	return FileOps{Read: map[string]struct{}{}, Written: map[string]struct{}{}, Edited: map[string]struct{}{}}
}

// addMessage records the file tool calls of an assistant message, and
// the nested ones recorded on a tool result (a script's calls), as pi
// does.
func (f FileOps) addMessage(m llm.Message) {
	switch m := m.(type) {
	case *llm.AssistantMessage:
		for _, c := range m.Content {
			if tc, ok := c.(llm.ToolCall); ok {
				f.add(tc.Name, tc.Arguments)
			}
		}
	case *llm.ToolResultMessage:
		if m.NestedCalls != nil {
			for _, c := range m.NestedCalls.Calls {
				f.add(c.Name, c.Arguments)
			}
		}
	}
}

// add records one call of read, write or edit with a path.
func (f FileOps) add(tool string, arguments json.RawMessage) {
	var set map[string]struct{}
	switch tool {
	case "read":
		set = f.Read
	case "write":
		set = f.Written
	case "edit":
		set = f.Edited
	default:
		return
	}
	var args struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(arguments, &args) != nil || args.Path == "" {
		return
	}
	set[args.Path] = struct{}{}
}

// addDetails carries over the file lists of an earlier compaction's
// details; files it listed as modified count as edited.
func (f FileOps) addDetails(raw json.RawMessage) {
	var d struct {
		ReadFiles     json.RawMessage `json:"readFiles"`
		ModifiedFiles json.RawMessage `json:"modifiedFiles"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &d) != nil {
		return
	}
	var files []string
	if json.Unmarshal(d.ReadFiles, &files) == nil {
		for _, p := range files {
			f.Read[p] = struct{}{}
		}
	}
	files = nil
	if json.Unmarshal(d.ModifiedFiles, &files) == nil {
		for _, p := range files {
			f.Edited[p] = struct{}{}
		}
	}
}

// Details is the "details" object of a compaction entry gopi (and pi)
// writes: the files the summarised conversation read but did not change,
// and the files it wrote or edited, each sorted.
type Details struct {
	ReadFiles     []string `json:"readFiles"`
	ModifiedFiles []string `json:"modifiedFiles"`
}

// Details splits the operations into read-only and modified files.
func (f FileOps) Details() Details {
	d := Details{ReadFiles: []string{}, ModifiedFiles: []string{}}
	for p := range f.Written {
		d.ModifiedFiles = append(d.ModifiedFiles, p)
	}
	for p := range f.Edited {
		if _, dup := f.Written[p]; !dup {
			d.ModifiedFiles = append(d.ModifiedFiles, p)
		}
	}
	for p := range f.Read {
		_, w := f.Written[p]
		_, e := f.Edited[p]
		if !w && !e {
			d.ReadFiles = append(d.ReadFiles, p)
		}
	}
	slices.Sort(d.ReadFiles)
	slices.Sort(d.ModifiedFiles)
	return d
}
