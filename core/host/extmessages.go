package host

// This file owns the messages extensions send (pi.sendMessage,
// pi.sendUserMessage) and how a custom message's content is read.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
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

// extSendMessage is pi.sendMessage: a custom message joins the
// conversation now, steers or follows up a run, waits for the next turn,
// or starts a turn of its own (triggerTurn).
func (h *Host) extSendMessage(a ext.SendMessageParams) {
	msg := &llm.CustomMessage{
		CustomType: a.Message.CustomType, Content: customContent(a.Message.Content), Display: a.Message.Display,
		Details: nullToNil(a.Message.Details), Timestamp: time.Now().UnixMilli(),
	}
	busy := h.run.Settle(h.ctx)
	noTurn := a.Options.TriggerTurn != nil && !*a.Options.TriggerTurn
	switch {
	case a.Options.DeliverAs == "nextTurn":
		h.run.HoldNextTurn(msg)
	case busy && noTurn:
		h.run.HoldCustom(msg)
	case busy && a.Options.DeliverAs == "followUp":
		h.agent.FollowUp(msg)
	case busy:
		h.agent.Steer(msg)
	case a.Options.TriggerTurn != nil && *a.Options.TriggerTurn:
		if err := h.startMessages(h.ctx, msg); err != nil {
			h.extFailed(string(ext.PeerSendMessage), err)
		}
	default:
		h.appendCustom(msg)
	}
}

// appendCustom adds an extension's message to the transcript and the
// session outside a run, reported to the client as a message.
func (h *Host) appendCustom(msg *llm.CustomMessage) {
	h.appendMessage(msg)
	h.emit(agent.Event{Type: agent.EventMessageStart, Message: msg})
	h.emit(agent.Event{Type: agent.EventMessageEnd, Message: msg})
}

// extSendUserMessage is pi.sendUserMessage: a user message, as if typed,
// that always leads to a turn; during a run deliverAs says how it queues.
func (h *Host) extSendUserMessage(a ext.SendUserMessageParams) {
	content := customContent(a.Content)
	text := content.Text()
	var images []llm.ImageContent
	for _, c := range content {
		if im, ok := c.(llm.ImageContent); ok {
			images = append(images, im)
		}
	}
	msg := llm.UserText(text, images...)
	if h.run.Settle(h.ctx) {
		switch a.Options.DeliverAs {
		case "followUp":
			h.agent.FollowUp(msg)
		case "steer":
			h.agent.Steer(msg)
		default:
			h.extFailed(string(ext.PeerSendUserMessage), errStreamingDeliverAs)
		}
		return
	}
	if err := h.startMessages(h.ctx, msg); err != nil {
		h.extFailed(string(ext.PeerSendUserMessage), err)
	}
}

// startMessages starts a run with msgs, as a prompt does.
func (h *Host) startMessages(ctx context.Context, msg llm.Message) error {
	return h.startPrompt(ctx, api.PromptParams{}, msg)
}
