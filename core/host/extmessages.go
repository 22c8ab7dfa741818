package host

// This file owns the messages extensions send (pi.sendMessage,
// pi.sendUserMessage) and how a custom message's content is read.

import (
	"encoding/json"

	"github.com/gopi-dev/gopi/core/agent"
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

// appendCustom adds an extension's message to the transcript and the
// session outside a run, reported to the client as a message.
func (h *Host) appendCustom(msg *llm.CustomMessage) {
	h.appendMessage(msg)
	h.emit(agent.Event{Type: agent.EventMessageStart, Message: msg})
	h.emit(agent.Event{Type: agent.EventMessageEnd, Message: msg})
}
