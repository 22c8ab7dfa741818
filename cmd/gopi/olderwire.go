package main

import (
	"context"
	"slices"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/host"
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

// olderServer is the host as the older document has it: get_messages
// without system messages, and counts that leave them out. It embeds the
// host itself, not api.Server, so the optional interfaces the scheduler
// looks for (starting bash and compact as long commands) stay visible.
type olderServer struct{ *host.Host }

func (s olderServer) GetMessages(ctx context.Context) (api.MessagesResult, error) {
	r, err := s.Host.GetMessages(ctx)
	if err == nil && slices.ContainsFunc(r.Messages, isSystem) {
		r.Messages = slices.DeleteFunc(slices.Clone(r.Messages), isSystem)
	}
	return r, err
}

func (s olderServer) GetState(ctx context.Context) (api.State, error) {
	st, err := s.Host.GetState(ctx)
	st.MessageCount -= s.systemCount()
	return st, err
}

func (s olderServer) GetSessionStats(ctx context.Context) (api.SessionStats, error) {
	st, err := s.Host.GetSessionStats(ctx)
	st.TotalMessages -= s.systemCount()
	return st, err
}

// systemCount is how many system messages the context holds.
func (s olderServer) systemCount() int {
	n := 0
	for _, m := range s.Host.Agent().Messages() {
		if isSystem(m) {
			n++
		}
	}
	return n
}
