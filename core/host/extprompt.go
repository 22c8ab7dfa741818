package host

// This file owns what extensions do with a prompt before a run starts:
// extension commands and the input handlers, before_agent_start and the
// system prompt options its handlers leave.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/resources"
)

// prompt runs what extensions do with a prompt before gopi does: an
// extension command ("/name args") runs at once, even during a run, and
// the input handlers may transform or consume the text. handled means
// nothing more is to be done.
func (e *extRoom) prompt(ctx context.Context, text string, images []llm.ImageContent, source, behavior string) (handled bool, outText string, outImages []llm.ImageContent, err error) {
	h := e.h
	m := e.manager()
	if m.Empty() {
		return false, text, images, nil
	}
	if err := e.waitLoaded(ctx); err != nil {
		return false, "", nil, fmt.Errorf("waiting for the extensions to load: %w", err)
	}
	if strings.HasPrefix(text, "/") {
		name, args, _ := strings.Cut(text[1:], " ")
		if m.HasCommand(name) {
			if err := m.RunCommand(h.ctx, name, args, e.snapshot()); err != nil {
				e.failed("command", err)
			}
			return true, "", nil, nil
		}
	}
	return e.input(ctx, m, text, images, source, behavior)
}

// queued runs the input handlers on a steer or follow_up message, as pi
// 1.5 does: they may consume it (handled) or transform it. behavior is
// "steer" or "followUp" while a run streams, empty when idle.
func (e *extRoom) queued(ctx context.Context, text string, images []llm.ImageContent, behavior string) (handled bool, outText string, outImages []llm.ImageContent, err error) {
	m := e.manager()
	if m.Empty() {
		return false, text, images, nil
	}
	if err := e.waitLoaded(ctx); err != nil {
		return false, "", nil, fmt.Errorf("waiting for the extensions to load: %w", err)
	}
	return e.input(ctx, m, text, images, "rpc", behavior)
}

// input runs the input handlers: a transform chains, "handled" ends it.
func (e *extRoom) input(ctx context.Context, m *ext.Manager, text string, images []llm.ImageContent, source, behavior string) (handled bool, outText string, outImages []llm.ImageContent, err error) {
	if !m.Handles("input") {
		return false, text, images, nil
	}
	var rawImages json.RawMessage
	if len(images) > 0 {
		rawImages, _ = json.Marshal(images)
	}
	res, err := m.Input(ctx, text, rawImages, source, behavior, e.snapshot())
	if err != nil {
		e.failed("input", err)
		return false, text, images, nil
	}
	switch res.Action {
	case "handled":
		return true, "", nil, nil
	case "transform":
		outImages = images
		if len(res.Images) > 0 && string(res.Images) != "null" {
			var imgs []llm.ImageContent
			if err := json.Unmarshal(res.Images, &imgs); err != nil {
				e.failed("input", fmt.Errorf("the handlers returned images gopi cannot read: %w", err))
			} else {
				outImages = imgs
			}
		}
		return false, res.Text, outImages, nil
	}
	return false, text, images, nil
}

// beforeAgentStart runs the before_agent_start handlers for a prompt about
// to start a run: the custom messages they return join the prompt, and a
// system prompt they return is this run's.
func (e *extRoom) beforeAgentStart(ctx context.Context, msg llm.Message, sent promptOptions, sentJSON json.RawMessage) []llm.Message {
	h := e.h
	m := e.manager()
	if !m.Handles("before_agent_start") {
		return nil
	}
	ev := ext.BeforeAgentStartEvent{SystemPrompt: h.agent.SystemPrompt(), SystemPromptOptions: sentJSON}
	switch msg := msg.(type) {
	case *llm.UserMessage:
		ev.MessageType, ev.Prompt = "user", msg.Content.Text()
		var imgs []llm.ImageContent
		for _, c := range msg.Content {
			if im, ok := c.(llm.ImageContent); ok {
				imgs = append(imgs, im)
			}
		}
		if len(imgs) > 0 {
			ev.Images, _ = json.Marshal(imgs)
		}
	case *llm.CustomMessage:
		ev.MessageType = "custom"
		ev.Message, _ = json.Marshal(msg)
	}
	res, err := m.BeforeAgentStart(ctx, ev, e.snapshot())
	if err != nil {
		e.failed("before_agent_start", err)
		return nil
	}
	forced := res.SystemPrompt
	if len(res.SystemPromptOptions) > 0 {
		if f, err := e.startWithOptions(sent, res.SystemPromptOptions); err != nil {
			e.failed("before_agent_start", err)
		} else if f != nil {
			forced = f
		}
	}
	if forced != nil {
		// The whole prompt, for this run; the transcript keeps the
		// sections.
		h.agent.SetSystemPrompt(*forced)
	}
	var out []llm.Message
	for _, raw := range res.Messages {
		var cm ext.CustomMessage
		if err := json.Unmarshal(raw, &cm); err != nil {
			e.failed("before_agent_start", fmt.Errorf("a message gopi cannot read: %w", err))
			continue
		}
		out = append(out, &llm.CustomMessage{
			CustomType: cm.CustomType, Content: customContent(cm.Content), Display: cm.Display,
			Details: nullToNil(cm.Details), Timestamp: time.Now().UnixMilli(),
		})
	}
	return out
}

// startWithOptions builds the run's system prompt from the options the
// before_agent_start handlers left (raw), sent being what they were
// given: a changed tool selection changes the active tools too, as in
// pi. It returns the prompt a handler forced, if any. Options gopi cannot
// read, or a section name pi refuses, change nothing.
func (e *extRoom) startWithOptions(sent promptOptions, raw json.RawMessage) (forced *string, err error) {
	h := e.h
	var o promptOptions
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("systemPromptOptions: %w", err)
	}
	for _, x := range o.Sections {
		if err := resources.CheckSectionName(x.Name); err != nil {
			return nil, fmt.Errorf("systemPromptOptions: %w", err)
		}
	}
	if !slices.Equal(o.SelectedTools, sent.SelectedTools) {
		// pi 1.5's document: the same as pi.setActiveTools() (pi
		// 0.87.1, 1.5.2 and 1.6.0 change the tools but not the
		// selection the next run reports). The
		// prompt lists the tools the model gets.
		h.toolset.setActive(o.SelectedTools)
		var active []string
		for _, t := range h.agent.Tools() {
			active = append(active, t.Spec().Name)
		}
		o.SelectedTools = slices.DeleteFunc(o.SelectedTools, func(n string) bool { return !slices.Contains(active, n) })
	}
	h.prompts.apply(o)
	return o.ForceSystemPrompt, nil
}
