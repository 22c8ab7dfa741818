package compaction

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

//go:embed prompts/branch.md
var branchPrompt string

// BranchSummary is what SummarizeBranch wrote: the text of a
// branch_summary entry, with the files the branch read and changed.
type BranchSummary struct {
	Summary string
	Details Details
	Usage   llm.Usage
}

// SummarizeBranch has model summarise entries, the branch a tree
// navigation leaves (pi's branch summary). customInstructions are added
// to the request, or replace it when replace is set. maxTokens bounds
// the reply (0: the model's own bound). It never touches the session.
func SummarizeBranch(ctx context.Context, p llm.Provider, model *llm.Model, auth llm.Auth, entries []session.Entry, customInstructions string, replace bool, maxTokens int) (BranchSummary, error) {
	if model == nil {
		return BranchSummary{}, fmt.Errorf("summarize branch: %w", ErrNoModel)
	}
	msgs := messagesOf(entries)
	if len(msgs) == 0 {
		return BranchSummary{}, fmt.Errorf("summarize branch: %w", ErrNothingToCompact)
	}
	files := newFileOps()
	for _, m := range msgs {
		files.addMessage(m)
	}
	var b strings.Builder
	b.WriteString(transcriptBlock(msgs))
	ci := strings.TrimSpace(customInstructions)
	switch {
	case replace && ci != "":
		b.WriteString(ci)
	case ci != "":
		b.WriteString(strings.TrimRight(branchPrompt, "\n"))
		b.WriteString("\n\n" + strings.TrimSpace(focusPrompt) + "\n\n" + ci)
	default:
		b.WriteString(strings.TrimRight(branchPrompt, "\n"))
	}
	used := &usageSum{}
	s := summariser{p: p, model: model, auth: auth, used: used}
	summary, err := s.run(ctx, b.String(), maxTokens)
	if err != nil {
		return BranchSummary{}, fmt.Errorf("summarize branch: %w", err)
	}
	details := files.Details()
	return BranchSummary{Summary: summary + fileLists(details), Details: details, Usage: used.u}, nil
}
