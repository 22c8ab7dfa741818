package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host/run"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// NavigateOptions are ctx.navigateTree's options.
type NavigateOptions = ext.NavigateOptions

// NavigateResult is what ctx.navigateTree resolves to.
type NavigateResult = ext.NavigateResult

// NavigateTree moves the session's leaf to targetID inside the same file,
// as pi's tree navigation does (an extension's ctx.navigateTree): a user
// or extension message as target puts the leaf on its parent and its text
// in the result's EditorText, to be edited and sent again; any other
// entry becomes the leaf. With Summarize, the branch being left is
// summarised into a branch_summary entry at the new position (by an
// extension's session_before_tree, or else by the current model, with
// pi's summarization retries). session_before_tree may cancel or change
// the instructions and label; session_tree follows. Refused while a run,
// a compaction or another navigation is under way.
func (h *Host) NavigateTree(ctx context.Context, targetID string, opts NavigateOptions) (NavigateResult, error) {
	if h.agent.IsStreaming() {
		return NavigateResult{}, errNavigateStreaming
	}
	ctx, release, ok := h.run.SummaryWork(ctx)
	if !ok {
		return NavigateResult{}, errNavigateBusy
	}
	defer release()

	store := h.Store()
	oldLeaf := store.Leaf()
	if targetID == oldLeaf {
		return NavigateResult{}, nil
	}
	model := h.agent.Model()
	if opts.Summarize && model == nil {
		return NavigateResult{}, errNoSummaryModel
	}
	target, ok := store.Entry(targetID)
	if !ok {
		return NavigateResult{}, &entryMissingError{id: targetID}
	}
	leaving, ancestor := branchLeft(store, oldLeaf, targetID)

	instructions, replace, label := "", false, ""
	if opts.CustomInstructions != nil {
		instructions = *opts.CustomInstructions
	}
	if opts.ReplaceInstructions != nil {
		replace = *opts.ReplaceInstructions
	}
	if opts.Label != nil {
		label = *opts.Label
	}

	var summary *compaction.BranchSummary
	var summaryDetails json.RawMessage // a hook's summary's details
	fromHook := false
	if m := h.ext.manager(); m.Ready() && m.Handles(ext.EventSessionBeforeTree) {
		prep := ext.TreePreparation{
			TargetID: targetID, OldLeafID: nullable(oldLeaf), CommonAncestorID: nullable(ancestor),
			EntriesToSummarize: leaving, UserWantsSummary: opts.Summarize,
			CustomInstructions: opts.CustomInstructions, ReplaceInstructions: opts.ReplaceInstructions, Label: opts.Label,
		}
		r, err := ext.EmitFor[ext.BeforeTreeResult](ctx, m, ext.SessionBeforeTreeEvent{Preparation: prep}, h.ext.snapshot())
		if err != nil {
			h.ext.failed(ext.EventSessionBeforeTree, err)
		}
		// The handlers before one that failed may have answered.
		if r.Cancel {
			return NavigateResult{Cancelled: true}, nil
		}
		if r.Summary != nil && opts.Summarize {
			summary, fromHook = &compaction.BranchSummary{Summary: r.Summary.Summary}, true
			summaryDetails = r.Summary.Details
		}
		if r.CustomInstructions != nil {
			instructions = *r.CustomInstructions
		}
		if r.ReplaceInstructions != nil {
			replace = *r.ReplaceInstructions
		}
		if r.Label != nil {
			label = *r.Label
		}
	}

	if opts.Summarize && summary == nil && len(leaving) > 0 {
		res, err := h.summarizeBranch(ctx, model, leaving, instructions, replace)
		if errors.Is(context.Cause(ctx), errCompactionAborted) {
			return NavigateResult{Cancelled: true, Aborted: true}, nil
		}
		if err != nil {
			return NavigateResult{}, err
		}
		summary = &res
	}

	// Where the leaf goes: a message the user (or an extension) wrote
	// is offered again for editing, from its parent.
	var out NavigateResult
	newLeaf := targetID
	switch e := target.(type) {
	case *session.MessageEntry:
		if u, ok := e.Message().(*llm.UserMessage); ok {
			newLeaf = e.ParentID
			text := u.Content.Text()
			out.EditorText = &text
		}
	case *session.CustomMessageEntry:
		newLeaf = e.ParentID
		text := e.Content.Text()
		out.EditorText = &text
	}

	if summary != nil {
		var details any = summary.Details
		usage := &summary.Usage
		if fromHook {
			details, usage = summaryDetails, nil
		}
		id, err := store.AppendBranchSummary(newLeaf, summary.Summary, details, fromHook, usage)
		if err != nil {
			return NavigateResult{}, h.log.saved(store, "the branch summary", err)
		}
		if label != "" {
			if _, err := store.AppendLabel(id, label); err != nil {
				return NavigateResult{}, h.log.saved(store, "the label", err)
			}
		}
		if e, ok := store.Entry(id); ok {
			out.SummaryEntry, _ = json.Marshal(e)
		}
	} else {
		if err := store.SetLeaf(newLeaf); err != nil {
			return NavigateResult{}, err
		}
		if label != "" {
			if _, err := store.AppendLabel(targetID, label); err != nil {
				return NavigateResult{}, h.log.saved(store, "the label", err)
			}
		}
	}
	h.agent.ReplaceMessages(store.Context().Messages)

	if m := h.ext.manager(); m.Ready() && m.Handles(ext.EventSessionTree) {
		ev := ext.SessionTreeEvent{NewLeafID: nullable(store.Leaf()), OldLeafID: nullable(oldLeaf)}
		if out.SummaryEntry != nil {
			ev.SummaryEntry, ev.FromExtension = out.SummaryEntry, &fromHook
		}
		if _, err := m.Emit(ctx, ev, h.ext.snapshot()); err != nil {
			h.ext.failed(ext.EventSessionTree, err)
		}
	}
	return out, nil
}

// summarizeBranch writes the summary of the entries a navigation leaves
// with the current model, retrying transient failures as a compaction
// does (source "branchSummary").
func (h *Host) summarizeBranch(ctx context.Context, model *llm.Model, leaving []session.Entry, instructions string, replace bool) (compaction.BranchSummary, error) {
	provider, err := h.opts.Providers.Lookup(model.API)
	if err != nil {
		return compaction.BranchSummary{}, err
	}
	var auth llm.Auth
	if model.API != llm.APIFaux {
		if auth, err = h.opts.Registry.RequestAuth(ctx, model); err != nil {
			return compaction.BranchSummary{}, fmt.Errorf("no API key for %s: %w", model.Provider, err)
		}
	}
	reserve := h.run.CompactionSettings().ReserveTokens
	return run.RetrySummary(ctx, h.run, "branchSummary", "", func() (compaction.BranchSummary, error) {
		return compaction.SummarizeBranch(ctx, provider, model, auth, leaving, instructions, replace, reserve*8/10)
	})
}

// branchLeft is what a move from leaf to target leaves behind: the
// entries after their common ancestor on the way to leaf, oldest first,
// and that ancestor ("" when they share none).
func branchLeft(store *session.Store, leaf, target string) (leaving []session.Entry, ancestor string) {
	onTarget := map[string]bool{}
	for _, e := range store.PathTo(target) {
		onTarget[e.Base().ID] = true
	}
	path := store.PathTo(leaf)
	i := len(path)
	for i > 0 && !onTarget[path[i-1].Base().ID] {
		i--
	}
	if i > 0 {
		ancestor = path[i-1].Base().ID
	}
	return path[i:], ancestor
}

// nullable is id, or JSON null for "".
func nullable(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}
