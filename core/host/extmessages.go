package host

// This file owns the messages extensions send (pi.sendMessage,
// pi.sendUserMessage) and how a custom message's content is read.

import (
	"encoding/json"

	"github.com/gopi-dev/gopi/core/llm"
)

// customContent reads a custom message's content: a string or blocks.
func customContent(raw json.RawMessage) llm.Contents {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return llm.Contents{llm.TextContent{Text: s}}
	}
	var c llm.Contents
	if json.Unmarshal(raw, &c) == nil && c != nil {
		return c
	}
	return llm.Contents{}
}

func nullToNil(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}
