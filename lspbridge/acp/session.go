package acp

import (
	"context"
	"encoding/json"
	"errors"
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

	// mu guards the fields below, and is held while an update is
	// written, so no update of a prompt can follow its answer.
	mu sync.Mutex
	// active is set while a prompt is being answered: only then do the
	// runtime's events become session/update notifications.
	active    bool
	cancelled bool
	// last is the last assistant message of the prompt's run: its stop
	// reason is the prompt's.
	last *llm.AssistantMessage
	// mcp are the MCP servers' failures to tell the client.
	mcp mcpReports
	// stopRewind ends the /rewind being answered (rewind.go).
	stopRewind context.CancelFunc
	// compactions are told to a client that takes them (compaction.go).
	compactions compactions
}

// begin marks a prompt in progress; false when one already is.
func (s *session) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active {
		return false
	}
	s.active, s.cancelled, s.last = true, false, nil
	s.flushNotices()
	return true
}

// answer runs the prompt in call's place, waits for the run to settle
// (retries, compaction and queued follow-ups included), then answers the
// request with the stop reason. Nothing of the prompt is sent after that.
func (s *session) answer(ctx context.Context, call *api.Call, id json.RawMessage, in promptInput) {
	params, err := json.Marshal(api.PromptParams{Message: in.text, Images: in.images})
	if err != nil {
		s.finish(id, nil, err, nil)
		return
	}
	out := make(chan error, 1)
	var disposition api.Disposition
	call.Run(s.rt, api.Command{
		Name:   api.CmdPrompt,
		Params: params,
		ID:     id,
		Reply: func(data any, err error) {
			if r, ok := data.(api.DispositionResult); ok {
				disposition = r.Disposition
			}
			out <- err
		},
	})
	if err := <-out; err != nil {
		if errors.Is(err, api.ErrNotStarted) {
			s.finish(id, sdk.Ptr(sdk.StopReasonCancelled), nil, nil)
			return
		}
		s.finish(id, nil, err, nil)
		return
	}
	if disposition != api.DispositionHandled {
		// The connection's end does not cut this wait short: shutdown
		// aborts the run, and the runtime's close ends the wait.
		s.rt.WaitIdle(context.WithoutCancel(ctx))
	}
	s.finish(id, nil, nil, s.usage(context.WithoutCancel(ctx)))
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

// finish writes the prompt's answer and ends the prompt: with reason when
// it is given, else the error, else the reason the run ended with. The
// usage update, when there is one, comes just before the answer. gopi
// has no limit on a prompt's model requests, so max_turn_requests is
// never the answer.
func (s *session) finish(id json.RawMessage, reason *sdk.StopReason, err error, usage *sdk.SessionUpdate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if usage != nil && s.active {
		s.update(*usage)
	}
	s.active = false
	if err != nil && !s.cancelled {
		_ = s.w.fail(id, asRPCError(err))
		return
	}
	var r sdk.StopReason
	switch {
	case reason != nil:
		r = *reason
	case s.cancelled:
		r = sdk.StopReasonCancelled
	case s.last == nil:
		r = sdk.StopReasonEndTurn
	default:
		switch s.last.StopReason {
		case llm.StopLength:
			r = sdk.StopReasonMaxTokens
		case llm.StopAborted:
			r = sdk.StopReasonCancelled
		case llm.StopError:
			if s.last.Refused {
				// The model declined: the spec's refusal, not a failure.
				r = sdk.StopReasonRefusal
				break
			}
			msg := s.last.ErrorMessage
			if msg == "" {
				msg = "the model's reply failed"
			}
			_ = s.w.fail(id, &rpcError{Code: codeInternalError, Message: msg})
			return
		default:
			r = sdk.StopReasonEndTurn
		}
	}
	_ = s.w.result(id, sdk.PromptResponse{StopReason: r})
}

// cancel aborts the prompt in progress, if any; it is answered with
// stopReason cancelled. The abort takes its place in the session's order,
// after the prompt, so a prompt that has not started yet is cancelled
// too.
func (s *session) cancel() {
	s.mu.Lock()
	if !s.active {
		s.mu.Unlock()
		return
	}
	s.cancelled = true
	if s.stopRewind != nil {
		s.stopRewind()
	}
	s.mu.Unlock()
	call := s.sched.Queue()
	call.Run(s.rt, api.Command{Name: api.CmdAbort, Reply: func(_ any, err error) {
		if err != nil && !errors.Is(err, api.ErrNotStarted) {
			s.report(fmt.Errorf("acp: cancelling session %s: %w", s.id, err))
		}
	}})
}

// stop is the connection's end: commands not started yet are answered
// as not started, and the run is aborted directly (the connection's
// context, which the scheduler's commands run under, may be over).
func (s *session) stop(report func(error)) {
	s.mu.Lock()
	if s.active {
		s.cancelled = true
	}
	s.mu.Unlock()
	s.sched.Close()
	if err := s.rt.Abort(context.Background()); err != nil {
		report(fmt.Errorf("acp: stopping session %s: %w", s.id, err))
	}
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
		if s.active {
			s.compactionEvent(ev)
		}
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
	if !s.active {
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
			s.last = m
		}
	case agent.EventToolExecutionStart:
		s.update(startToolCall(s.cwd, e.ToolCallID, e.ToolName, e.Args))
		s.update(sdk.UpdateToolCall(sdk.ToolCallId(e.ToolCallID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress)))
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
