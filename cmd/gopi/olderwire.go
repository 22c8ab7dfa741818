package main

import (
	"context"
	"slices"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

// --full-updates serves clients of the older protocol document, which has
// no system messages: they are left out of message events, agent_end and
// get_messages (the session file keeps them).

// olderEvent is ev as the older document has it; false drops it.
func olderEvent(ev api.Event) (api.Event, bool) {
	e, ok := ev.(agent.Event)
	if !ok {
		return ev, true
	}
	switch e.Type {
	case agent.EventMessageStart, agent.EventMessageEnd:
		if e.Message != nil && e.Message.MessageRole() == llm.RoleSystem {
			return nil, false
		}
	case agent.EventAgentEnd:
		if slices.ContainsFunc(e.Messages, isSystem) {
			e.Messages = slices.DeleteFunc(slices.Clone(e.Messages), isSystem)
			return e, true
		}
	}
	return ev, true
}

func isSystem(m llm.Message) bool { return m.MessageRole() == llm.RoleSystem }

// olderServer answers get_messages without system messages.
type olderServer struct{ api.Server }

func (s olderServer) GetMessages(ctx context.Context) (api.MessagesResult, error) {
	r, err := s.Server.GetMessages(ctx)
	if err == nil && slices.ContainsFunc(r.Messages, isSystem) {
		r.Messages = slices.DeleteFunc(slices.Clone(r.Messages), isSystem)
	}
	return r, err
}
