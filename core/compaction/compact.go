package compaction

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/sourcegraph/conc"
)

var (
	//go:embed prompts/system.md
	systemPrompt string
	//go:embed prompts/summarize.md
	summarizePrompt string
	//go:embed prompts/update.md
	updatePrompt string
	//go:embed prompts/turn_prefix.md
	turnPrefixPrompt string
	//go:embed prompts/focus.md
	focusPrompt string
	//go:embed prompts/no_history.md
	noHistoryText string
	//go:embed prompts/split_turn.md
	splitTurnHeading string
)

// Result is a finished compaction, ready to be appended as a compaction
// entry (pi's CompactionResult).
type Result struct {
	// Summary replaces the conversation before FirstKeptEntryID. It ends
	// with the read and modified file lists in <read-files> and
	// <modified-files> tags when there are any.
	Summary          string
	FirstKeptEntryID string
	TokensBefore     int
	// Details is the entry's "details": the same file lists as JSON.
	Details Details
	// Usage sums the summary calls (one, or two for a split turn).
	Usage llm.Usage
}

// Compact has model write the summary prep calls for, through p with
// auth. customInstructions, when not empty, tells the summary what to
// focus on (the argument of a manual compact).
//
// The conversation goes to the model as one transcript in a user message,
// with its own system prompt, so the model summarises rather than
// continues it. With a previous summary the model updates that summary
// instead of starting afresh. A split turn gets a second, smaller summary
// of the turn's beginning, requested at the same time and appended after
// the history summary.
//
// A failed or aborted reply, an empty one, or ctx ending is an error;
// Compact never touches the session.
func Compact(ctx context.Context, p llm.Provider, model *llm.Model, auth llm.Auth, prep *Preparation, customInstructions string) (Result, error) {
	if prep == nil {
		return Result{}, fmt.Errorf("compact: %w", errNoPreparation)
	}
	if model == nil {
		return Result{}, fmt.Errorf("compact: %w", ErrNoModel)
	}
	if err := context.Cause(ctx); err != nil {
		return Result{}, fmt.Errorf("compact: %w", err)
	}
	used := &usageSum{}
	s := summariser{p: p, model: model, auth: auth, used: used}
	reserve := prep.Settings.ReserveTokens

	var summary string
	if prep.IsSplitTurn && len(prep.TurnPrefix) > 0 {
		history, prefix, err := s.both(ctx, prep, customInstructions)
		if err != nil {
			return Result{}, err
		}
		summary = history + "\n\n---\n\n" + strings.TrimSpace(splitTurnHeading) + "\n\n" + prefix
	} else {
		var err error
		summary, err = s.run(ctx, historyPrompt(prep, customInstructions), reserve*8/10)
		if err != nil {
			return Result{}, fmt.Errorf("compact: summarise conversation: %w", err)
		}
	}

	details := prep.Files.Details()
	summary += fileLists(details)
	return Result{
		Summary:          summary,
		FirstKeptEntryID: prep.FirstKeptEntryID,
		TokensBefore:     prep.TokensBefore,
		Details:          details,
		Usage:            used.u,
	}, nil
}

// both requests the history and turn-prefix summaries of a split turn at
// the same time; the first failure cancels the other request.
func (s summariser) both(ctx context.Context, prep *Preparation, customInstructions string) (history, prefix string, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	reserve := prep.Settings.ReserveTokens

	var histErr, prefixErr error
	// conc's WaitGroup carries a panic in either summary back to this
	// goroutine (with its stack), where the caller's guard reports it,
	// instead of killing the process from a goroutine nobody watches.
	var wg conc.WaitGroup
	wg.Go(func() {
		switch {
		case len(prep.Messages) > 0:
			history, histErr = s.run(ctx, historyPrompt(prep, customInstructions), reserve*8/10)
		case prep.PreviousSummary != "":
			// Nothing new before the turn: the earlier summary still
			// stands. (pi drops it here, losing the older history.)
			history = prep.PreviousSummary
		default:
			history = strings.TrimSpace(noHistoryText)
		}
		if histErr != nil {
			cancel(errSiblingFailed)
		}
	})
	wg.Go(func() {
		prefix, prefixErr = s.run(ctx, transcriptBlock(prep.TurnPrefix)+turnPrefixPrompt, reserve/2)
		if prefixErr != nil {
			cancel(errSiblingFailed)
		}
	})
	wg.Wait()

	switch {
	case histErr != nil && !errors.Is(histErr, errSiblingFailed):
		return "", "", fmt.Errorf("compact: summarise conversation: %w", histErr)
	case prefixErr != nil && !errors.Is(prefixErr, errSiblingFailed):
		return "", "", fmt.Errorf("compact: summarise split turn: %w", prefixErr)
	case histErr != nil:
		return "", "", fmt.Errorf("compact: summarise conversation: %w", histErr)
	case prefixErr != nil:
		return "", "", fmt.Errorf("compact: summarise split turn: %w", prefixErr)
	}
	return history, prefix, nil
}

// historyPrompt asks for a new summary of prep.Messages, or for an update
// of the previous summary with them.
func historyPrompt(prep *Preparation, customInstructions string) string {
	var b strings.Builder
	b.WriteString(transcriptBlock(prep.Messages))
	instructions := summarizePrompt
	if prep.PreviousSummary != "" {
		b.WriteString("<previous-summary>\n")
		b.WriteString(prep.PreviousSummary)
		b.WriteString("\n</previous-summary>\n\n")
		instructions = updatePrompt
	}
	b.WriteString(strings.TrimRight(instructions, "\n"))
	if ci := strings.TrimSpace(customInstructions); ci != "" {
		b.WriteString("\n\n")
		b.WriteString(strings.TrimSpace(focusPrompt))
		b.WriteString("\n\n")
		b.WriteString(ci)
	}
	return b.String()
}

func transcriptBlock(msgs []llm.Message) string {
	return "<conversation>\n" + transcript(msgs) + "\n</conversation>\n\n"
}

// fileLists renders the details' file lists for the end of a summary.
func fileLists(d Details) string {
	var b strings.Builder
	if len(d.ReadFiles) > 0 {
		b.WriteString("\n\n<read-files>\n" + strings.Join(d.ReadFiles, "\n") + "\n</read-files>")
	}
	if len(d.ModifiedFiles) > 0 {
		b.WriteString("\n\n<modified-files>\n" + strings.Join(d.ModifiedFiles, "\n") + "\n</modified-files>")
	}
	return b.String()
}

// summariser sends summary requests to one model.
type summariser struct {
	p     llm.Provider
	model *llm.Model
	auth  llm.Auth
	used  *usageSum
}

// usageSum adds up the usage of summary calls that may run in parallel.
type usageSum struct {
	mu sync.Mutex // guards u and n
	u  llm.Usage
	n  int
}

// add counts u in. The first usage is kept as it is, so one call's sum
// says what that call said about its total (TotalFromProvider).
func (s *usageSum) add(u llm.Usage) {
	s.mu.Lock()
	if s.n == 0 {
		s.u = u
	} else {
		s.u.Add(u)
	}
	s.n++
	s.mu.Unlock()
}

// run sends prompt as the only user message under the summariser's system
// prompt and returns the reply's text.
func (s summariser) run(ctx context.Context, prompt string, maxTokens int) (string, error) {
	if s.model.MaxTokens > 0 && maxTokens > s.model.MaxTokens {
		maxTokens = s.model.MaxTokens
	}
	req := &llm.Request{
		SystemPrompt: strings.TrimRight(systemPrompt, "\n"),
		Messages: []llm.Message{&llm.UserMessage{
			Content:   llm.Contents{llm.TextContent{Text: prompt}},
			Timestamp: llm.Now(),
		}},
		Options: llm.Options{APIKey: s.auth.APIKey, Headers: s.auth.Headers, MaxTokens: max(maxTokens, 0)},
	}
	msg := llm.Collect(s.p.Stream(ctx, s.model, req))
	if msg != nil && s.used != nil {
		s.used.add(msg.Usage)
	}
	if ctx.Err() != nil {
		return "", context.Cause(ctx)
	}
	switch {
	case msg == nil:
		return "", fmt.Errorf("%w: %s/%s sent no reply", ErrSummaryFailed, s.model.Provider, s.model.ID)
	case msg.StopReason == llm.StopError:
		reason := msg.ErrorMessage
		if reason == "" {
			reason = "unknown error"
		}
		if msg.Failure != nil {
			// Keep the provider's classification, so the caller can tell a
			// transient failure (worth a retry) from a permanent one.
			return "", fmt.Errorf("%w: %s%w", ErrSummaryFailed, reason, failureOnly{msg.Failure})
		}
		return "", fmt.Errorf("%w: %s", ErrSummaryFailed, reason)
	case msg.StopReason == llm.StopAborted:
		return "", fmt.Errorf("%w: the request was aborted", ErrSummaryFailed)
	}
	text := msg.Content.JoinText("\n")
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("%w: the model replied without text", ErrSummaryFailed)
	}
	return text, nil
}

// failureOnly wraps a provider's failure into an error chain without
// adding text (its message is already in the summary error's).
type failureOnly struct{ f *llm.ProviderError }

func (failureOnly) Error() string   { return "" }
func (e failureOnly) Unwrap() error { return e.f }
