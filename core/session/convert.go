package session

import (
	"fmt"
	"strings"

	"github.com/gopi-dev/gopi/core/llm"
)

// The wrappers around summaries in the model context. They are part of the
// context format pi sessions are continued with (a model that saw one
// from pi sees the same from gopi), so they follow pi 0.73.1 exactly.
const (
	CompactionSummaryPrefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
	CompactionSummarySuffix = "\n</summary>"
	BranchSummaryPrefix     = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
	BranchSummarySuffix     = "</summary>"
)

// ConvertToLLM turns a context's messages into the three roles a model
// understands. User, assistant and tool result messages pass through;
// bash executions, custom messages and summaries become user messages;
// bash executions marked excludeFromContext and unknown roles are dropped.
func ConvertToLLM(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		switch m := m.(type) {
		case *llm.UserMessage, *llm.AssistantMessage, *llm.ToolResultMessage:
			out = append(out, m)
		case *llm.BashExecutionMessage:
			if m.ExcludeFromContext {
				continue
			}
			out = append(out, userText(BashExecutionText(m), m.Timestamp))
		case *llm.CustomMessage:
			content := m.Content
			if content == nil {
				content = llm.Contents{}
			}
			out = append(out, &llm.UserMessage{Content: content, Timestamp: m.Timestamp})
		case *llm.BranchSummaryMessage:
			out = append(out, userText(BranchSummaryPrefix+m.Summary+BranchSummarySuffix, m.Timestamp))
		case *llm.CompactionSummaryMessage:
			out = append(out, userText(CompactionSummaryPrefix+m.Summary+CompactionSummarySuffix, m.Timestamp))
		}
	}
	return out
}

func userText(text string, ts int64) *llm.UserMessage {
	return &llm.UserMessage{Content: llm.Contents{llm.TextContent{Text: text}}, Timestamp: ts}
}

// BashExecutionText is how a user's shell command reads to the model: the
// command, its output fenced (or a note that there was none), then whether
// it was cancelled or failed and where truncated output went.
func BashExecutionText(m *llm.BashExecutionMessage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Ran `%s`\n", m.Command)
	if m.Output != "" {
		fmt.Fprintf(&b, "```\n%s\n```", m.Output)
	} else {
		b.WriteString("(no output)")
	}
	switch {
	case m.Cancelled:
		b.WriteString("\n\n(command cancelled)")
	case m.ExitCode != nil && *m.ExitCode != 0:
		fmt.Fprintf(&b, "\n\nCommand exited with code %d", *m.ExitCode)
	}
	if m.Truncated && m.FullOutputPath != "" {
		fmt.Fprintf(&b, "\n\n[Output truncated. Full output: %s]", m.FullOutputPath)
	}
	return b.String()
}
