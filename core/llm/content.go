package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
)

// ContentType is the wire name of a content block's "type" field.
type ContentType string

const (
	ContentText     ContentType = "text"
	ContentThinking ContentType = "thinking"
	ContentImage    ContentType = "image"
	ContentToolCall ContentType = "toolCall"
)

// Content is one block of a message's content: [TextContent],
// [ThinkingContent], [ImageContent] or [ToolCall]. Blocks are values; a
// slice of them can be shallow-copied to take a snapshot.
type Content interface {
	ContentType() ContentType
}

// TextContent is plain text.
type TextContent struct {
	Text string `json:"text"`
	// TextSignature carries provider metadata for the block (OpenAI
	// Responses message ids); it is round-tripped, never shown.
	TextSignature string `json:"textSignature,omitempty"`
}

// ThinkingContent is model reasoning.
type ThinkingContent struct {
	Thinking string `json:"thinking"`
	// ThinkingSignature is the opaque signature (Anthropic) or reasoning
	// item (OpenAI Responses) that must be sent back on the next turn.
	ThinkingSignature string `json:"thinkingSignature,omitempty"`
	// Redacted marks thinking the provider withheld; the payload is in
	// ThinkingSignature.
	Redacted bool `json:"redacted,omitempty"`
}

// ImageContent is a base64 image.
type ImageContent struct {
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

// ToolCall is the model asking for a tool. Arguments is always a JSON
// object, kept as raw bytes so the model's key order survives a round trip.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// ThoughtSignature is Google's opaque signature for a function call.
	ThoughtSignature string `json:"thoughtSignature,omitempty"`
}

func (TextContent) ContentType() ContentType     { return ContentText }
func (ThinkingContent) ContentType() ContentType { return ContentThinking }
func (ImageContent) ContentType() ContentType    { return ContentImage }
func (ToolCall) ContentType() ContentType        { return ContentToolCall }

func (c TextContent) MarshalJSON() ([]byte, error) {
	type alias TextContent
	return json.Marshal(struct {
		Type ContentType `json:"type"`
		alias
	}{ContentText, alias(c)})
}

func (c ThinkingContent) MarshalJSON() ([]byte, error) {
	type alias ThinkingContent
	return json.Marshal(struct {
		Type ContentType `json:"type"`
		alias
	}{ContentThinking, alias(c)})
}

func (c ImageContent) MarshalJSON() ([]byte, error) {
	type alias ImageContent
	return json.Marshal(struct {
		Type ContentType `json:"type"`
		alias
	}{ContentImage, alias(c)})
}

func (c ToolCall) MarshalJSON() ([]byte, error) {
	type alias ToolCall
	a := alias(c)
	if len(a.Arguments) == 0 {
		a.Arguments = json.RawMessage("{}")
	}
	return json.Marshal(struct {
		Type ContentType `json:"type"`
		alias
	}{ContentToolCall, a})
}

// UnmarshalContent decodes one content block by its "type".
func UnmarshalContent(data []byte) (Content, error) {
	typ, err := memberString(data, "type")
	if err != nil {
		return nil, fmt.Errorf("content block: %w", err)
	}
	c, ok, err := contentOf(ContentType(typ), func(v any) error { return jsonv2.Unmarshal(data, v, Lenient) })
	if !ok {
		return nil, fmt.Errorf("content block: %w %q", errUnknownContentType, typ)
	}
	return c, err
}

// contentOf decodes a block of a known type with decode, which fills the
// value it is given; ok is false, with nothing decoded, for another type.
// A tool call without arguments gets {}.
func contentOf(typ ContentType, decode func(any) error) (c Content, ok bool, err error) {
	switch typ {
	case ContentText:
		var t TextContent
		err = decode(&t)
		c = t
	case ContentThinking:
		var t ThinkingContent
		err = decode(&t)
		c = t
	case ContentImage:
		var t ImageContent
		err = decode(&t)
		c = t
	case ContentToolCall:
		var t ToolCall
		if err = decode(&t); err != nil {
			return nil, true, err
		}
		if len(t.Arguments) == 0 || bytes.Equal(t.Arguments, []byte("null")) {
			t.Arguments = json.RawMessage("{}")
		}
		c = t
	default:
		return nil, false, nil
	}
	return c, true, err
}

// Contents is a list of content blocks. It decodes from a JSON array of
// blocks or, as pi allows for user and custom messages, from a plain string
// (which becomes one text block). It always encodes as an array.
type Contents []Content

func (cs Contents) MarshalJSON() ([]byte, error) {
	if cs == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]Content(cs))
}

// Text joins the text blocks of cs (not thinking, not tool calls).
func (cs Contents) Text() string { return cs.JoinText("") }

// JoinText joins the text blocks of cs with sep, skipping other blocks.
func (cs Contents) JoinText(sep string) string {
	var b strings.Builder
	first := true
	for _, c := range cs {
		if t, ok := c.(TextContent); ok {
			if !first {
				b.WriteString(sep)
			}
			b.WriteString(t.Text)
			first = false
		}
	}
	return b.String()
}

// ToolCalls returns the tool call blocks of cs in order.
func (cs Contents) ToolCalls() []ToolCall {
	var out []ToolCall
	for _, c := range cs {
		if t, ok := c.(ToolCall); ok {
			out = append(out, t)
		}
	}
	return out
}

// HasImages reports whether cs holds an image block.
func (cs Contents) HasImages() bool {
	for _, c := range cs {
		if _, ok := c.(ImageContent); ok {
			return true
		}
	}
	return false
}
