package session

import "github.com/gopi-dev/gopi/core/llm"

// ModelRef names a model by provider and id.
type ModelRef struct {
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
}

// Context is what the conversation at the leaf amounts to: the messages
// to send (before [ConvertToLLM]) and the model and thinking level in
// effect there.
type Context struct {
	// Messages share the stored messages: treat them as read-only.
	Messages      []llm.Message
	ThinkingLevel llm.ThinkingLevel
	// ThinkingLevelSet says a thinking_level_change on the path set
	// ThinkingLevel; without one it is the default "off", and a runtime
	// starting the session uses its own default (settings.json's
	// defaultThinkingLevel) instead.
	ThinkingLevelSet bool
	// Model is the last model_change or assistant message on the path;
	// nil when there is none.
	Model *ModelRef
}

// Context builds the model context at the leaf, as pi's
// buildSessionContext does.
func (s *Store) Context() Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return BuildContext(s.pathTo(s.leaf))
}

// BuildContext turns a root-to-leaf path into a [Context]:
//
//   - the thinking level (default "off") and model are the last set on
//     the path; an assistant message sets the model too;
//   - without a compaction, every message, custom_message and non-empty
//     branch_summary entry becomes a message, in order;
//   - with compaction(s), the last one's summary comes first, then the
//     entries before it starting at its firstKeptEntryId, then everything
//     after it.
func BuildContext(path []Entry) Context {
	ctx := Context{ThinkingLevel: llm.ThinkingOff}
	for _, e := range path {
		if e, ok := e.(*ThinkingLevelChangeEntry); ok {
			ctx.ThinkingLevel, ctx.ThinkingLevelSet = e.ThinkingLevel, true
		}
	}
	// The model is the last one set on the path; found from the end, so
	// the messages a compaction summarised stay undecoded.
model:
	for i := len(path) - 1; i >= 0; i-- {
		switch e := path[i].(type) {
		case *ModelChangeEntry:
			ctx.Model = &ModelRef{Provider: e.Provider, ModelID: e.ModelID}
			break model
		case *MessageEntry:
			if e.Role() != llm.RoleAssistant {
				continue
			}
			if a, ok := e.Message().(*llm.AssistantMessage); ok {
				ctx.Model = &ModelRef{Provider: a.Provider, ModelID: a.Model}
				break model
			}
		}
	}

	from, compaction := contextStart(path)
	// Edits apply from the entries the context is made of, as in pi: one
	// a compaction summarised away is gone with them.
	edits := contextEdits(path[from:])
	msgs := make([]llm.Message, 0, len(path)-from+2)
	if compaction < 0 {
		for _, e := range path {
			msgs = appendMessages(msgs, e, edits)
		}
		ctx.Messages = msgs
		return ctx
	}
	c := path[compaction].(*CompactionEntry)
	msgs = appendCheckpoint(msgs, c)
	for _, e := range path[from:compaction] {
		if folded(c, e) {
			continue
		}
		msgs = appendMessages(msgs, e, edits)
	}
	for _, e := range path[compaction+1:] {
		msgs = appendMessages(msgs, e, edits)
	}
	ctx.Messages = msgs
	return ctx
}

// contextEdits are the context_edit entries among entries by target: the
// latest on the branch wins. nil when there are none.
func contextEdits(entries []Entry) map[string]*ContextEditEntry {
	var edits map[string]*ContextEditEntry
	for _, e := range entries {
		if e, ok := e.(*ContextEditEntry); ok {
			if edits == nil {
				edits = map[string]*ContextEditEntry{}
			}
			edits[e.TargetID] = e
		}
	}
	return edits
}

// folded says whether e, kept by compaction c, is a system message c's
// checkpoint already holds.
func folded(c *CompactionEntry, e Entry) bool {
	me, ok := e.(*MessageEntry)
	return ok && c.SystemMessage != nil && me.Role() == llm.RoleSystem
}

// appendCheckpoint appends what the compaction that starts a context
// gives: its system checkpoint, if any, and its summary.
func appendCheckpoint(msgs []llm.Message, c *CompactionEntry) []llm.Message {
	if c.SystemMessage != nil {
		msgs = append(msgs, c.SystemMessage)
	}
	return append(msgs, &llm.CompactionSummaryMessage{Summary: c.Summary, TokensBefore: c.TokensBefore, Timestamp: c.Millis()})
}

// appendMessages appends the message entry e gives the context, edited by
// its context_edit in edits: a message, a custom message or a non-empty
// branch summary; none for other entries (an older compaction among the
// kept ones included), or for a message an edit leaves out.
func appendMessages(msgs []llm.Message, e Entry, edits map[string]*ContextEditEntry) []llm.Message {
	edit := edits[e.Base().ID]
	if edit != nil && edit.Replacement == nil {
		switch e.(type) {
		case *MessageEntry, *CustomMessageEntry:
			return msgs // left out of the context by a context_edit
		}
	}
	switch e := e.(type) {
	case *MessageEntry:
		m := e.Message()
		if edit != nil {
			m = withContent(m, edit.Replacement.Contents())
		}
		msgs = append(msgs, m)
	case *CustomMessageEntry:
		content := e.Content
		if edit != nil {
			content = edit.Replacement.Contents()
		}
		msgs = append(msgs, &llm.CustomMessage{
			CustomType: e.CustomType,
			Content:    content,
			Display:    e.Display,
			Details:    e.Details,
			Timestamp:  e.Millis(),
		})
	case *BranchSummaryEntry:
		if e.Summary != "" {
			msgs = append(msgs, &llm.BranchSummaryMessage{Summary: e.Summary, FromID: e.FromID, Timestamp: e.Millis()})
		}
	}
	return msgs
}

// ProjectedEntry is one entry a context is built from with the messages
// it gives that context (pi's session projection entry).
type ProjectedEntry struct {
	SourceEntry Entry         `json:"sourceEntry"`
	Messages    []llm.Message `json:"messages"`
}

// Projection is pi's buildSessionProjection's entries for path: each
// entry of [ContextEntries] with the messages it gives the context, edits
// applied. Together, in order, the messages are [BuildContext]'s.
func Projection(path []Entry) []ProjectedEntry {
	entries := ContextEntries(path)
	edits := contextEdits(entries)
	out := make([]ProjectedEntry, len(entries))
	for i, e := range entries {
		var msgs []llm.Message
		if c, ok := e.(*CompactionEntry); ok && i == 0 {
			msgs = appendCheckpoint(nil, c)
		} else {
			msgs = appendMessages(nil, e, edits)
		}
		if msgs == nil {
			msgs = []llm.Message{}
		}
		out[i] = ProjectedEntry{SourceEntry: e, Messages: msgs}
	}
	return out
}

// ContextEntries are the entries of path the context is built from, as
// pi's buildContextEntries selects them: without a compaction all of
// them; with compactions, the last one first, then the entries before it
// from its first kept entry (less the system messages its checkpoint
// holds), then those after it. Non-message entries in that range are
// kept.
func ContextEntries(path []Entry) []Entry {
	from, compaction := contextStart(path)
	if compaction < 0 {
		return append([]Entry(nil), path...)
	}
	c := path[compaction].(*CompactionEntry)
	out := make([]Entry, 0, len(path)-from)
	out = append(out, c)
	for _, e := range path[from:compaction] {
		if !folded(c, e) {
			out = append(out, e)
		}
	}
	return append(out, path[compaction+1:]...)
}

// contextStart finds the last compaction on path and where the context
// made of path starts: the compaction's first kept entry (the first entry
// with its id, before the compaction), or the compaction itself when there
// is none such. Without a compaction, from is 0 and compaction -1.
func contextStart(path []Entry) (from, compaction int) {
	for i := len(path) - 1; i >= 0; i-- {
		c, ok := path[i].(*CompactionEntry)
		if !ok {
			continue
		}
		for j := range i {
			if path[j].Base().ID == c.FirstKeptEntryID {
				return j, i
			}
		}
		return i, i
	}
	return 0, -1
}

// withContent is m with its content replaced (a context_edit's
// replacement), m itself untouched; messages of other roles, which pi's
// edits cannot target, come back as they are.
func withContent(m llm.Message, c llm.Contents) llm.Message {
	switch m := m.(type) {
	case *llm.UserMessage:
		cp := *m
		cp.Content = c
		return &cp
	case *llm.AssistantMessage:
		cp := *m
		cp.Content = c
		return &cp
	case *llm.ToolResultMessage:
		cp := *m
		cp.Content = c
		return &cp
	}
	return m
}

// SystemStateOf replays the system prompt and tools a branch declares: its
// system messages in order, a compaction's checkpoint standing for all
// before it. ok is false when the branch declares none.
func SystemStateOf(path []Entry) (st llm.SystemState, ok bool) {
	var msgs []llm.Message
	for _, e := range path {
		switch e := e.(type) {
		case *CompactionEntry:
			if e.SystemMessage != nil {
				msgs = append(msgs[:0], e.SystemMessage)
			}
		case *MessageEntry:
			if e.Role() == llm.RoleSystem {
				msgs = append(msgs, e.Message())
			}
		}
	}
	return llm.ReplaySystem(msgs)
}
