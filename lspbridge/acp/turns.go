package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

// A session's prompts. ACP v1 answers each session/prompt when its turn
// ends; a client may send the next one before that (the user types while
// the agent works). Such a prompt goes to the runtime's follow-up queue,
// as pi's follow_up: the run takes it when it would otherwise stop. The
// runtime tells which message it queued (api.Command.Queued), and the
// run's message_start of that very message is where the turn before ends
// and this one begins: the turn before is answered there, before any
// update of the new one. A run's last turns are answered when the runtime
// settles (api.AgentSettled: no retry, compaction or queued message
// left).
//
// Messages queued together (the followUpMode setting "all") join the run
// at once and share one turn: each is answered when it ends.

// turn is one session/prompt until it is answered.
type turn struct {
	id json.RawMessage
	// msg is the message the runtime queued for the prompt; nil for a
	// prompt that started a run of its own (or was not queued yet).
	msg llm.Message
	// live: the turn's message is in the run, whose updates are its.
	live bool
	// last is the turn's last assistant message: its stop reason is the
	// prompt's.
	last      *llm.AssistantMessage
	cancelled bool
	// answered closes once the prompt's response is written.
	answered chan struct{}
	done     bool
}

// sending reports whether the runtime's events are a prompt's updates
// now: a run answers one, or a /rewind is answered; s.mu is held.
func (s *session) sending() bool {
	return len(s.run) > 0 || s.rewinding
}

// busy reports whether the session has a prompt not answered yet.
func (s *session) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns) > 0 || s.rewinding
}

// beginRewind marks a /rewind answered; false while prompts are.
func (s *session) beginRewind() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.turns) > 0 || s.rewinding {
		return false
	}
	s.rewinding = true
	s.flushNotices()
	return true
}

// isRewinding reports whether a /rewind is answered.
func (s *session) isRewinding() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rewinding
}

// accept takes a prompt: its turn waits among the session's.
func (s *session) accept(id json.RawMessage) *turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &turn{id: id, answered: make(chan struct{})}
	s.turns = append(s.turns, t)
	s.flushNotices()
	return t
}

// answer runs the prompt in call's place and answers it when its turn
// ends; it returns once the prompt is answered. A run already in
// progress takes the prompt as a follow-up; a prompt that starts a run of
// its own starts it only once the turns of the run before are answered
// (the command's response counts as written then), so none of its
// updates comes before their answers.
func (s *session) answer(ctx context.Context, call *api.Call, t *turn, in promptInput) {
	defer func() { <-t.answered }()
	params, err := json.Marshal(api.PromptParams{Message: in.text, Images: in.images, StreamingBehavior: api.BehaviorFollowUp})
	if err != nil {
		call.Written()
		s.finishTurn(t, nil, err, nil)
		return
	}
	type reply struct {
		data any
		err  error
	}
	out := make(chan reply, 1)
	call.Run(s.rt, api.Command{
		Name:         api.CmdPrompt,
		Params:       params,
		ID:           t.id,
		WrittenLater: true,
		Queued: func(msg llm.Message) {
			s.mu.Lock()
			defer s.mu.Unlock()
			t.msg = msg
		},
		Reply: func(data any, err error) { out <- reply{data, err} },
	})
	r := <-out
	var disposition api.Disposition
	if d, ok := r.data.(api.DispositionResult); ok {
		disposition = d.Disposition
	}
	switch {
	case errors.Is(r.err, api.ErrNotStarted):
		call.Written()
		s.finishTurn(t, sdk.Ptr(sdk.StopReasonCancelled), nil, nil)
	case r.err != nil:
		call.Written()
		s.finishTurn(t, nil, r.err, nil)
	case disposition == api.DispositionHandled:
		// An extension's input handler took it: no run.
		call.Written()
		s.finishTurn(t, sdk.Ptr(sdk.StopReasonEndTurn), nil, nil)
	case disposition == api.DispositionStarted && !s.queuedTurn(t):
		s.startRun(t)
		call.Written()
	default:
		// Queued: its message's message_start makes it live.
		call.Written()
	}
}

// queuedTurn reports whether the runtime queued t's message.
func (s *session) queuedTurn(t *turn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return t.msg != nil
}

// startRun makes t the turn of the run its prompt starts, once the turns
// of the run before have been answered (that run has ended; its
// agent_settled is on its way).
func (s *session) startRun(t *turn) {
	for {
		s.mu.Lock()
		if len(s.run) == 0 {
			if !t.done {
				s.join(t)
			}
			s.mu.Unlock()
			return
		}
		wait := s.runEnded
		s.mu.Unlock()
		<-wait
	}
}

// joined is a queued message entering the run (its message_start): when
// it is a turn's, the run's turns so far are answered if they had a reply
// (else the new one shares their turn), and it becomes live. s.mu is
// held.
func (s *session) joined(msg llm.Message, usage func() *sdk.SessionUpdate) {
	var t *turn
	for _, c := range s.turns {
		if c.msg == msg && !c.live {
			t = c
			break
		}
	}
	if t == nil {
		return
	}
	if len(s.run) > 0 && s.replied {
		s.endRun(usage())
	}
	s.join(t)
}

// join makes t live, a turn of the run; s.mu is held.
func (s *session) join(t *turn) {
	if len(s.run) == 0 {
		s.runEnded = make(chan struct{})
	}
	t.live = true
	s.run = append(s.run, t)
	s.replied = false
}

// replyEnded records the run's turns' assistant message; s.mu is held.
func (s *session) replyEnded(m *llm.AssistantMessage) {
	for _, t := range s.run {
		t.last = m
	}
	if len(s.run) > 0 {
		s.replied = true
	}
}

// settled is the runtime's agent_settled: the run's turns are answered.
// s.mu is held.
func (s *session) settled(usage *sdk.SessionUpdate) {
	if len(s.run) > 0 {
		s.endRun(usage)
	}
}

// endRun answers the run's turns, in order, each after a usage update;
// s.mu is held.
func (s *session) endRun(usage *sdk.SessionUpdate) {
	for _, t := range slices.Clone(s.run) {
		s.finishLocked(t, nil, nil, usage)
	}
}

// finishTurn answers t; see finishLocked.
func (s *session) finishTurn(t *turn, reason *sdk.StopReason, err error, usage *sdk.SessionUpdate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finishLocked(t, reason, err, usage)
}

// finishLocked writes t's answer, once: with reason when it is given,
// else the error, else the reason its last reply ended with; a cancelled
// turn answers cancelled. The usage update, when there is one, comes just
// before. s.mu is held.
func (s *session) finishLocked(t *turn, reason *sdk.StopReason, err error, usage *sdk.SessionUpdate) {
	if t.done {
		return
	}
	t.done = true
	for i, c := range s.turns {
		if c == t {
			s.turns = append(s.turns[:i:i], s.turns[i+1:]...)
			break
		}
	}
	for i, c := range s.run {
		if c == t {
			s.run = append(s.run[:i:i], s.run[i+1:]...)
			if len(s.run) == 0 && s.runEnded != nil {
				close(s.runEnded)
				s.runEnded = nil
			}
			break
		}
	}
	defer close(t.answered)
	if usage != nil {
		s.update(*usage)
	}
	if t.cancelled && reason == nil {
		reason = sdk.Ptr(sdk.StopReasonCancelled)
	}
	s.respond(t.id, reason, err, t.last)
}

// respond writes a prompt's answer: reason when it is given, else the
// error, else the stop reason of last (end_turn without one). gopi has no
// limit on a prompt's model requests, so max_turn_requests is never the
// answer. s.mu is held.
func (s *session) respond(id json.RawMessage, reason *sdk.StopReason, err error, last *llm.AssistantMessage) {
	if reason != nil {
		_ = s.w.result(id, sdk.PromptResponse{StopReason: *reason})
		return
	}
	if err != nil {
		_ = s.w.fail(id, asRPCError(err))
		return
	}
	r := sdk.StopReasonEndTurn
	if last != nil {
		switch last.StopReason {
		case llm.StopLength:
			r = sdk.StopReasonMaxTokens
		case llm.StopAborted:
			r = sdk.StopReasonCancelled
		case llm.StopError:
			if !last.Refused {
				msg := last.ErrorMessage
				if msg == "" {
					msg = "the model's reply failed"
				}
				_ = s.w.fail(id, &rpcError{Code: codeInternalError, Message: msg})
				return
			}
			// The model declined: the spec's refusal, not a failure.
			r = sdk.StopReasonRefusal
		}
	}
	_ = s.w.result(id, sdk.PromptResponse{StopReason: r})
}

// cancel is session/cancel: the running prompt and every prompt waiting
// behind it answer cancelled. In the session's order, after the prompts
// already sent, the queued messages are taken out of the runtime's queue
// (pi's clear_queue: they never join the conversation) and the run is
// aborted; waiting prompts are answered once the abort is done, the run's
// when it settles.
func (s *session) cancel() {
	s.mu.Lock()
	if len(s.turns) == 0 && !s.rewinding {
		s.mu.Unlock()
		return
	}
	waiting := false
	for _, t := range s.turns {
		t.cancelled = true
		waiting = waiting || !t.live
	}
	if s.stopRewind != nil {
		s.stopRewind()
	}
	s.mu.Unlock()
	if waiting {
		s.sched.Queue().Run(s.rt, api.Command{Name: api.CmdClearQueue, Reply: func(_ any, err error) {
			if err != nil && !errors.Is(err, api.ErrNotStarted) {
				s.report(fmt.Errorf("acp: cancelling session %s: emptying its queue: %w", s.id, err))
			}
		}})
	}
	s.sched.Queue().Run(s.rt, api.Command{Name: api.CmdAbort, Reply: func(_ any, err error) {
		if err != nil && !errors.Is(err, api.ErrNotStarted) {
			s.report(fmt.Errorf("acp: cancelling session %s: %w", s.id, err))
		}
		s.dropCancelled()
	}})
}

// dropCancelled answers the cancelled prompts that are not in a run:
// those queued (their messages were taken out) and those whose command
// never ran.
func (s *session) dropCancelled() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range slices.Clone(s.turns) {
		if t.cancelled && !t.live && t.msg != nil {
			s.finishLocked(t, sdk.Ptr(sdk.StopReasonCancelled), nil, nil)
		}
	}
}

// stop is the connection's end: commands not started yet are answered
// as not started, the run is aborted directly (the connection's context,
// which the scheduler's commands run under, may be over), and the prompts
// still waiting answer cancelled.
func (s *session) stop(report func(error)) {
	s.mu.Lock()
	for _, t := range s.turns {
		t.cancelled = true
	}
	if s.stopRewind != nil {
		s.stopRewind()
	}
	s.mu.Unlock()
	s.sched.Close()
	if err := s.rt.Abort(context.Background()); err != nil {
		report(fmt.Errorf("acp: stopping session %s: %w", s.id, err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range slices.Clone(s.turns) {
		if !t.live {
			s.finishLocked(t, sdk.Ptr(sdk.StopReasonCancelled), nil, nil)
		}
	}
}
