package compaction

import (
	"github.com/gopi-dev/gopi/core/llm"
)

// Settings is the "compaction" object of pi's settings.json. Decoding
// fills only the fields present, so decode over [DefaultSettings] to get
// pi's fallbacks for the missing ones.
type Settings struct {
	// Enabled turns automatic compaction on; a manual compact ignores it.
	Enabled bool `json:"enabled"`
	// ReserveTokens is the room kept free below the context window for the
	// next reply; compaction starts when the context grows into it. The
	// summary request may use up to 80% of it.
	ReserveTokens int `json:"reserveTokens"`
	// KeepRecentTokens is roughly how much of the newest conversation
	// survives a compaction word for word.
	KeepRecentTokens int `json:"keepRecentTokens"`
}

// DefaultSettings returns pi's defaults: enabled, 16384 reserved,
// 20000 kept.
func DefaultSettings() Settings {
	return Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000}
}

// ShouldCompact reports whether a context of tokens has grown into the
// reserve of a window of contextWindow tokens. It is always false when s
// is disabled.
func ShouldCompact(tokens, contextWindow int, s Settings) bool {
	return s.Enabled && tokens > contextWindow-s.ReserveTokens
}

// imageChars is what an image counts as: 4800 characters, about 1200
// tokens.
const imageChars = 4800

// EstimateTokens guesses the tokens of one message at four characters per
// token, rounded up, as pi does. It overestimates rather than under. What
// counts per role:
//
//   - user: text blocks;
//   - assistant: text, thinking, and each tool call's name plus its
//     arguments as compact JSON;
//   - toolResult and custom: text blocks, and 4800 characters per image;
//   - bashExecution: command and output;
//   - branchSummary and compactionSummary: the summary.
//
// Characters are counted in UTF-16 code units, like JavaScript's
// String.length, so gopi and pi cut a session at the same place. Unknown
// roles count zero.
func EstimateTokens(m llm.Message) int {
	chars := 0
	switch m := m.(type) {
	case *llm.UserMessage:
		for _, c := range m.Content {
			if t, ok := c.(llm.TextContent); ok {
				chars += llm.UTF16Len(t.Text)
			}
		}
	case *llm.AssistantMessage:
		for _, c := range m.Content {
			switch c := c.(type) {
			case llm.TextContent:
				chars += llm.UTF16Len(c.Text)
			case llm.ThinkingContent:
				chars += llm.UTF16Len(c.Thinking)
			case llm.ToolCall:
				chars += llm.UTF16Len(c.Name) + compactJSONLen(c.Arguments)
			}
		}
	case *llm.ToolResultMessage:
		chars = contentChars(m.Content)
	case *llm.CustomMessage:
		chars = contentChars(m.Content)
	case *llm.BashExecutionMessage:
		chars = llm.UTF16Len(m.Command) + llm.UTF16Len(m.Output)
	case *llm.BranchSummaryMessage:
		chars = llm.UTF16Len(m.Summary)
	case *llm.CompactionSummaryMessage:
		chars = llm.UTF16Len(m.Summary)
	}
	return (chars + 3) / 4
}

func contentChars(cs llm.Contents) int {
	n := 0
	for _, c := range cs {
		switch c := c.(type) {
		case llm.TextContent:
			n += llm.UTF16Len(c.Text)
		case llm.ImageContent:
			n += imageChars
		}
	}
	return n
}

// compactJSONLen is the UTF-16 length of raw JSON without the whitespace
// between tokens, which is what JSON.stringify of the parsed value
// measures. Empty arguments count as "{}".
func compactJSONLen(raw []byte) int {
	if len(raw) == 0 {
		return 2
	}
	n := 0
	inString, escaped := false, false
	for _, b := range raw {
		if !inString {
			switch b {
			case ' ', '\t', '\n', '\r':
				continue
			case '"':
				inString = true
			}
		} else {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		}
		if b&0xC0 != 0x80 {
			n++
		}
		if b >= 0xF0 {
			n++
		}
	}
	return n
}

// ContextTokens is how much of the context window a reply's usage
// accounts for: its total when the provider gave one, else the sum of
// input, output and cache tokens.
func ContextTokens(u llm.Usage) int { return u.ContextTokens() }

// Estimate is how full the context is, as [EstimateContext] measures it.
type Estimate struct {
	// Tokens is UsageTokens plus TrailingTokens.
	Tokens int
	// UsageTokens is what the provider reported for the last usable
	// assistant reply (0 when there is none).
	UsageTokens int
	// TrailingTokens estimates the messages after that reply (all
	// messages when there is none).
	TrailingTokens int
	// LastUsageIndex is the index of that reply in the messages, -1 when
	// there is none.
	LastUsageIndex int
}

// EstimateContext measures a context's messages the way pi does: the
// provider's own count from the last assistant reply that neither failed
// nor was aborted (their usage is not trustworthy), plus [EstimateTokens]
// for every message after it.
func EstimateContext(msgs []llm.Message) Estimate {
	last := -1
	var usage llm.Usage
	for i := len(msgs) - 1; i >= 0; i-- {
		if u, ok := assistantUsage(msgs[i]); ok {
			last, usage = i, u
			break
		}
	}
	e := Estimate{LastUsageIndex: last}
	if last >= 0 {
		e.UsageTokens = ContextTokens(usage)
	}
	for _, m := range msgs[last+1:] {
		e.TrailingTokens += EstimateTokens(m)
	}
	e.Tokens = e.UsageTokens + e.TrailingTokens
	return e
}

// assistantUsage returns the usage of an assistant reply that completed.
func assistantUsage(m llm.Message) (llm.Usage, bool) {
	a, ok := m.(*llm.AssistantMessage)
	if !ok || a.StopReason == llm.StopAborted || a.StopReason == llm.StopError {
		return llm.Usage{}, false
	}
	return a.Usage, true
}
