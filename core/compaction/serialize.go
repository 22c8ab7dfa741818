package compaction

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// maxToolResultChars bounds each tool result in a transcript: the summary
// needs to know what a tool found, not all of it.
const maxToolResultChars = 2000

// transcript renders messages as plain text for a summariser. A
// conversation sent as text cannot be mistaken for one to continue. The
// messages are first converted as for a model (session.ConvertToLLM), so
// shell commands, extension messages and summaries appear as the user's
// words; tool results are cut to 2000 characters.
func transcript(msgs []llm.Message) string {
	var parts []string
	for _, m := range session.ConvertToLLM(msgs) {
		switch m := m.(type) {
		case *llm.UserMessage:
			if t := m.Content.Text(); t != "" {
				parts = append(parts, "[user] "+t)
			}
		case *llm.AssistantMessage:
			var text, thinking, calls []string
			for _, c := range m.Content {
				switch c := c.(type) {
				case llm.TextContent:
					text = append(text, c.Text)
				case llm.ThinkingContent:
					thinking = append(thinking, c.Thinking)
				case llm.ToolCall:
					calls = append(calls, formatCall(c))
				}
			}
			if len(thinking) > 0 {
				parts = append(parts, "[assistant reasoning] "+strings.Join(thinking, "\n"))
			}
			if len(text) > 0 {
				parts = append(parts, "[assistant] "+strings.Join(text, "\n"))
			}
			if len(calls) > 0 {
				parts = append(parts, "[assistant tool calls] "+strings.Join(calls, "; "))
			}
		case *llm.ToolResultMessage:
			if t := m.Content.Text(); t != "" {
				parts = append(parts, "[tool result] "+clip(t, maxToolResultChars))
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// formatCall renders a tool call as name(key=value, ...), each value as
// compact JSON, keys in the order the model wrote them.
func formatCall(c llm.ToolCall) string {
	var b strings.Builder
	b.WriteString(c.Name)
	b.WriteByte('(')
	dec := json.NewDecoder(bytes.NewReader(c.Arguments))
	if tok, err := dec.Token(); err == nil && tok == json.Delim('{') {
		for i := 0; dec.More(); i++ {
			key, err := dec.Token()
			if err != nil {
				break
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			var compact bytes.Buffer
			if json.Compact(&compact, v) != nil {
				compact.Reset()
				compact.Write(v)
			}
			fmt.Fprintf(&b, "%v=%s", key, compact.Bytes())
		}
	}
	b.WriteByte(')')
	return b.String()
}

// clip keeps the first max characters of s and says how many it dropped.
func clip(s string, max int) string {
	n := 0
	for i := range s {
		if n == max {
			return fmt.Sprintf("%s\n\n[%d more characters omitted]", s[:i], len([]rune(s[i:])))
		}
		n++
	}
	return s
}
