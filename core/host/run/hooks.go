package run

import (
	"context"

	"github.com/gopi-dev/gopi/core/llm"
)

// Hooks are the extensions' handlers the run calls, typed (core/ext's
// Hooks: the JSON is theirs). With no extension they change nothing.
type Hooks interface {
	// Context may give a model request other messages; an error comes
	// with msgs as they were.
	Context(ctx context.Context, msgs []llm.Message) ([]llm.Message, error)
	// MessageEnd may replace a message that just ended with one of the
	// same role; an error comes with msg.
	MessageEnd(ctx context.Context, msg llm.Message) (llm.Message, error)
}

// The extension events the run's hooks run, as failures are reported.
const (
	eventContext    = "context"
	eventMessageEnd = "message_end"
)

// TransformContext is the agent's TransformContext: the extensions'
// context handlers see the messages of each model request before it goes.
func (r *Run) TransformContext(ctx context.Context, msgs []llm.Message) []llm.Message {
	out, err := r.hooks.Context(ctx, msgs)
	if err != nil {
		r.host.HookFailed(eventContext, err)
	}
	return out
}

// FinishMessage is the agent's FinishMessage: the message_end handlers
// see a message that just ended, and a replacement of the same role takes
// its place in the transcript, the session and the event the client sees.
func (r *Run) FinishMessage(ctx context.Context, msg llm.Message) llm.Message {
	out, err := r.hooks.MessageEnd(ctx, msg)
	if err != nil {
		r.host.HookFailed(eventMessageEnd, err)
	}
	return out
}

// AfterTurnEnd is the agent's AfterTurnEnd: the custom messages held
// during the turn join the session once its tool results are in (and
// after turn_end's handlers, which may have sent some), so the next
// request sees them.
func (r *Run) AfterTurnEnd(context.Context) []llm.Message {
	if !r.FlushCustom() {
		return nil
	}
	return r.agent.Messages()
}

// FlushCustom adds the custom messages held for the turn's end to the
// session and the transcript (Session.AppendCustom); it says whether
// there were any.
func (r *Run) FlushCustom() bool {
	pending := r.TakeCustom()
	for _, msg := range pending {
		r.session.AppendCustom(msg)
	}
	return len(pending) > 0
}
