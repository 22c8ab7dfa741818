package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

// session is one ACP session: a runtime, the scheduler its commands run
// in, and the prompt being answered.
type session struct {
	id          string
	cwd         string
	rt          Runtime
	sched       *api.Scheduler
	w           writer
	report      func(error)
	unsubscribe func()
	// work counts the session's prompts being answered.
	work sync.WaitGroup
	// extras are the diffs and terminals of its tool calls (diff.go).
	extras callExtras
	// modes are the session's modes (config.go), fixed when it is added.
	modes []preset

	// mu guards the fields below, and is held while an update is
	// written, so no update of a prompt can follow its answer.
	mu sync.Mutex
	// turns are the prompts not answered yet, in arrival order
	// (turns.go); run those whose messages are in the run now, which
	// the runtime's events are the updates of.
	turns []*turn
	run   []*turn
	// replied: the run's turns have had an assistant message since the
	// last of them joined.
	replied bool
	// runEnded closes when run empties; nil while it is empty.
	runEnded chan struct{}
	// rewinding is set while a /rewind is answered (rewind.go), which
	// stopRewind ends.
	rewinding  bool
	stopRewind context.CancelFunc
	// mcp are the MCP servers' failures to tell the client.
	mcp mcpReports
	// compactions are told to a client that takes them (compaction.go).
	compactions compactions
}

// usage is the session's usage_update after a run: the tokens in the
// context, the model's context window, and the session's cost so far;
// nil when the context's size is not known (after a compaction, until
// the next reply).
func (s *session) usage(ctx context.Context) *sdk.SessionUpdate {
	st, err := s.rt.GetSessionStats(ctx)
	if err != nil {
		s.report(fmt.Errorf("acp: session %s: usage: %w", s.id, err))
		return nil
	}
	c := st.ContextUsage
	if c == nil || c.Tokens == nil || c.ContextWindow <= 0 {
		return nil
	}
	return &sdk.SessionUpdate{UsageUpdate: &sdk.SessionUsageUpdate{
		Used: max(*c.Tokens, 0),
		Size: c.ContextWindow,
		// pi's costs are in US dollars (the models' prices).
		Cost: &sdk.Cost{Amount: st.Cost, Currency: "USD"},
	}}
}

// close releases the session's runtime once its prompts are answered.
func (s *session) close(report func(error)) {
	s.unsubscribe()
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	if err := s.rt.Close(ctx); err != nil {
		report(fmt.Errorf("acp: closing session %s: %w", s.id, err))
	}
}

// event turns the runtime's events into session/update notifications
// while a prompt is answered. It runs on the run's goroutine.
func (s *session) event(ev api.Event) {
	if c, ok := ev.(api.SessionInfoChanged); ok {
		// A name is the session's, not a prompt's: it is sent whenever
		// it changes (an extension's pi.setSessionName).
		if c.Name != nil {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.update(titleUpdate(*c.Name))
		}
		return
	}
	if st, ok := ev.(api.MCPServerState); ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.mcpState(st)
		return
	}
	switch ev.(type) {
	case api.CompactionStart, api.CompactionEnd:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.sending() {
			s.compactionEvent(ev)
		}
		return
	case api.AgentSettled:
		// The run is over: its turns are answered, after the usage.
		usage := s.usage(context.Background())
		s.mu.Lock()
		defer s.mu.Unlock()
		s.settled(usage)
		return
	}
	e, ok := ev.(agent.Event)
	if !ok {
		return
	}
	// Before s.mu: a diff may need the file from the client.
	diffs := s.extras.observe(s.cwd, e)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Type == agent.EventMessageStart {
		if _, ok := e.Message.(*llm.UserMessage); ok {
			// A queued prompt's message: its turn begins.
			s.joined(e.Message, func() *sdk.SessionUpdate { return s.usage(context.Background()) })
		}
	}
	if !s.sending() {
		return
	}
	switch e.Type {
	case agent.EventMessageUpdate:
		d := e.AssistantEvent
		if d == nil || d.Delta == "" {
			return
		}
		switch d.Type {
		case llm.EventTextDelta:
			s.sendChunk("agent_message_chunk", d.Delta)
		case llm.EventThinkingDelta:
			s.sendChunk("agent_thought_chunk", d.Delta)
		}
	case agent.EventMessageEnd:
		if m, ok := e.Message.(*llm.AssistantMessage); ok {
			s.replyEnded(m)
		}
	case agent.EventToolExecutionStart:
		// pending until the tool starts (toolStarting): an approval
		// question, when the call needs one, comes first, and a call
		// that is rejected or blocked never runs.
		s.update(startToolCall(s.cwd, e.ToolCallID, e.ToolName, e.Args))
	case agent.EventToolExecutionEnd:
		status := sdk.ToolCallStatusCompleted
		if e.IsError {
			status = sdk.ToolCallStatusFailed
		}
		opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status)}
		if content := s.extras.endContent(e.ToolCallID, diffs, resultText(e.Result)); len(content) > 0 {
			opts = append(opts, sdk.WithUpdateContent(content))
		}
		s.update(sdk.UpdateToolCall(sdk.ToolCallId(e.ToolCallID), opts...))
	}
}

// toolStarting sends a tool call's in_progress, as its tool starts
// running. It runs on the tool's goroutine, after the call's tool_call
// and before its end.
func (s *session) toolStarting(callID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sending() {
		return
	}
	s.update(sdk.UpdateToolCall(sdk.ToolCallId(callID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress)))
}

// titleUpdate is the session_info_update giving the session its title.
func titleUpdate(title string) sdk.SessionUpdate {
	return sdk.SessionUpdate{SessionInfoUpdate: &sdk.SessionSessionInfoUpdate{Title: sdk.Ptr(title)}}
}

// update sends one session/update; s.mu is held.
func (s *session) update(u sdk.SessionUpdate) {
	err := s.w.notify(sdk.ClientMethodSessionUpdate, sdk.SessionNotification{SessionId: sdk.SessionId(s.id), Update: u})
	if err != nil {
		s.report(fmt.Errorf("acp: session/update: %w", err))
	}
}

// rawInput is a tool call's arguments as the client sees them: the JSON
// object the model wrote (an empty object for none).
// startToolCall is the tool_call update that opens a call (pending), as
// a run makes it and as session/load replays it: its kind, title and
// locations from the tool and its arguments, which are its rawInput.
func startToolCall(cwd, id, name string, args json.RawMessage) sdk.SessionUpdate {
	t := describeTool(cwd, name, args)
	opts := []sdk.ToolCallStartOpt{
		sdk.WithStartKind(t.kind),
		sdk.WithStartStatus(sdk.ToolCallStatusPending),
		sdk.WithStartRawInput(rawInput(args)),
	}
	if len(t.locations) > 0 {
		opts = append(opts, sdk.WithStartLocations(t.locations))
	}
	return sdk.StartToolCall(sdk.ToolCallId(id), t.title, opts...)
}

func rawInput(args json.RawMessage) json.RawMessage {
	if len(args) == 0 || !json.Valid(args) {
		return json.RawMessage("{}")
	}
	return args
}

// resultText is the text of a tool's result, its text blocks joined.
func resultText(r *agent.Result) string {
	if r == nil {
		return ""
	}
	var text string
	for _, c := range r.Content {
		if t, ok := c.(llm.TextContent); ok {
			if text != "" {
				text += "\n"
			}
			text += t.Text
		}
	}
	return text
}
