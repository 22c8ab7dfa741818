package openai

import (
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/gopi-dev/gopi/core/llm"
)

// Text gopi puts in front of the model where the history has a gap.
const (
	noImageUser        = "(image not shown: this model cannot read images)"
	noImageTool        = "(tool image not shown: this model cannot read images)"
	missingToolResult  = "No result was recorded for this tool call."
	imageOnlyResult    = "(image attached)"
	toolImagesFollow   = "Images returned by the tool:"
	bridgeAfterResults = "Tool results received."
)

// idNormalizer rewrites a tool call id written by another model (src) into
// one the target API accepts.
type idNormalizer func(id string, src *llm.AssistantMessage) string

// sameModel reports whether m was written by model through the same API.
func sameModel(m *llm.AssistantMessage, model *llm.Model) bool {
	return m.Provider == model.Provider && m.API == model.API && m.Model == model.ID
}

// prepareMessages returns msgs ready for model, without touching them:
//   - failed and aborted assistant replies are dropped (they may end half
//     way through a tool call or a reasoning item);
//   - thinking from another model becomes plain text, empty or redacted
//     thinking from another model is dropped;
//   - tool call ids from another model go through norm, and their results
//     follow;
//   - a tool call left without a result gets an error result, so the
//     conversation stays well formed;
//   - images become a placeholder when the model cannot read them.
func prepareMessages(msgs []llm.Message, model *llm.Model, norm idNormalizer) []llm.Message {
	images := model.SupportsImages()
	renamed := map[string]string{}
	var out []llm.Message
	var pending []llm.ToolCall
	answered := map[string]bool{}
	flush := func() {
		for _, tc := range pending {
			if !answered[tc.ID] {
				out = append(out, &llm.ToolResultMessage{
					ToolCallID: tc.ID,
					ToolName:   tc.Name,
					Content:    llm.Contents{llm.TextContent{Text: missingToolResult}},
					IsError:    true,
					Timestamp:  llm.Now(),
				})
			}
		}
		pending = nil
		answered = map[string]bool{}
	}

	for _, m := range msgs {
		switch m := m.(type) {
		case *llm.UserMessage:
			flush()
			c := *m
			if !images {
				c.Content = withoutImages(m.Content, noImageUser)
			}
			out = append(out, &c)
		case *llm.ToolResultMessage:
			c := *m
			if id, ok := renamed[m.ToolCallID]; ok {
				c.ToolCallID = id
			}
			if !images {
				c.Content = withoutImages(m.Content, noImageTool)
			}
			answered[c.ToolCallID] = true
			out = append(out, &c)
		case *llm.AssistantMessage:
			flush()
			if m.StopReason == llm.StopError || m.StopReason == llm.StopAborted {
				continue
			}
			same := sameModel(m, model)
			c := *m
			c.Content = make(llm.Contents, 0, len(m.Content))
			for _, block := range m.Content {
				switch b := block.(type) {
				case llm.ThinkingContent:
					switch {
					case b.Redacted:
						if same {
							c.Content = append(c.Content, b)
						}
					case same && b.ThinkingSignature != "":
						c.Content = append(c.Content, b)
					case strings.TrimSpace(b.Thinking) == "":
					case same:
						c.Content = append(c.Content, b)
					default:
						c.Content = append(c.Content, llm.TextContent{Text: b.Thinking})
					}
				case llm.TextContent:
					if !same {
						b.TextSignature = ""
					}
					c.Content = append(c.Content, b)
				case llm.ToolCall:
					if !same {
						b.ThoughtSignature = ""
						if norm != nil {
							if id := norm(b.ID, m); id != b.ID {
								renamed[b.ID] = id
								b.ID = id
							}
						}
					}
					c.Content = append(c.Content, b)
				default:
					c.Content = append(c.Content, b)
				}
			}
			pending = c.Content.ToolCalls()
			out = append(out, &c)
		default:
			// Only the three model roles reach a provider; anything else
			// was meant to be converted by the caller and is skipped.
		}
	}
	flush()
	return out
}

// withoutImages replaces each run of images in cs with one placeholder.
func withoutImages(cs llm.Contents, placeholder string) llm.Contents {
	if !cs.HasImages() {
		return cs
	}
	out := make(llm.Contents, 0, len(cs))
	prevPlaceholder := false
	for _, c := range cs {
		if _, ok := c.(llm.ImageContent); ok {
			if !prevPlaceholder {
				out = append(out, llm.TextContent{Text: placeholder})
			}
			prevPlaceholder = true
			continue
		}
		out = append(out, c)
		t, ok := c.(llm.TextContent)
		prevPlaceholder = ok && t.Text == placeholder
	}
	return out
}

// sanitizeID replaces every character outside [A-Za-z0-9_-] with '_'.
func sanitizeID(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// shortHash is pi's deterministic 2x32-bit string hash in base 36, used to
// shorten ids the same way pi does so sessions replay identically.
func shortHash(s string) string {
	h1, h2 := uint32(0xdeadbeef), uint32(0x41c6ce57)
	for _, ch := range utf16.Encode([]rune(s)) {
		h1 = (h1 ^ uint32(ch)) * 2654435761
		h2 = (h2 ^ uint32(ch)) * 1597334677
	}
	h1 = (h1^(h1>>16))*2246822507 ^ (h2^(h2>>13))*3266489909
	h2 = (h2^(h2>>16))*2246822507 ^ (h1^(h1>>13))*3266489909
	return strconv.FormatUint(uint64(h2), 36) + strconv.FormatUint(uint64(h1), 36)
}
