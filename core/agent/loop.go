package agent

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/gopi-dev/gopi/core/llm"
)

// run is one prompt or continuation: the settings snapshotted when it was
// claimed and the transcript as the loop sees it. Only the run goroutine
// touches it.
type run struct {
	a      *Agent
	ctx    context.Context
	cancel context.CancelCauseFunc

	systemPrompt string
	model        *llm.Model
	thinking     llm.ThinkingLevel
	// baseTools are the run's tools; tools are the last request's (the
	// same unless Config.RequestTools adds some).
	baseTools []Tool
	tools     []Tool
	options   llm.Options
	toolExec  ToolExecution

	// context is the transcript the model sees, grown as the run goes.
	context []llm.Message
	// added is every message this run added, for agent_end.
	added []llm.Message
}

// execute performs the run and always ends it with agent_end. A panic in a
// hook still ends the run properly, with an error assistant message.
func (r *run) execute(prompts []llm.Message, skipInitialSteering bool) {
	defer r.a.finish(r)
	ended := false
	defer func() {
		v := recover()
		if v == nil || ended {
			if v != nil {
				r.a.reportPanic("agent: panic after agent_end: %v", v)
			}
			return
		}
		r.a.reportPanic("agent: run panicked: %v", v)
		// Like pi, the failure joins the transcript and is the run's only
		// reported message.
		msg := r.failure(fmt.Errorf("%w: %v", ErrRunPanicked, v))
		r.a.AppendMessage(msg)
		r.a.emit(Event{Type: EventAgentEnd, Messages: []llm.Message{msg}})
	}()
	r.loop(prompts, skipInitialSteering)
	ended = true
}

func (r *run) emit(ev Event) { r.a.emit(ev) }

// push records a message of this run and reports it as started and ended.
func (r *run) push(m llm.Message) {
	r.emit(Event{Type: EventMessageStart, Message: m})
	m = finish(r, m)
	r.emit(Event{Type: EventMessageEnd, Message: m})
	r.context = append(r.context, m)
	r.added = append(r.added, m)
}

func (r *run) loop(prompts []llm.Message, skipInitialSteering bool) {
	r.emit(Event{Type: EventAgentStart})
	r.emit(Event{Type: EventTurnStart})
	for _, m := range prompts {
		r.push(m)
	}
	var pending []llm.Message
	if !skipInitialSteering {
		pending = r.a.drainSteering()
	}
	firstTurn := true
	for {
		moreToolCalls := true
		for moreToolCalls || len(pending) > 0 {
			if !firstTurn {
				r.emit(Event{Type: EventTurnStart})
			}
			firstTurn = false
			for _, m := range pending {
				r.push(m)
			}
			pending = nil

			msg := r.streamAssistant()
			r.added = append(r.added, msg)
			if msg.StopReason == llm.StopError || msg.StopReason == llm.StopAborted {
				r.boundary(msg, nil) // its entries count; a failed turn ends the run
				r.emit(Event{Type: EventTurnEnd, Message: msg, ToolResults: []*llm.ToolResultMessage{}})
				r.afterTurnEnd()
				r.emit(Event{Type: EventAgentEnd, Messages: r.added})
				return
			}

			results := []*llm.ToolResultMessage{}
			moreToolCalls = false
			if calls := msg.Content.ToolCalls(); len(calls) > 0 {
				var terminate bool
				results, terminate = r.executeTools(calls)
				moreToolCalls = !terminate
				for _, tr := range results {
					r.context = append(r.context, tr)
					r.added = append(r.added, tr)
				}
			}
			more := r.boundary(msg, results)
			r.emit(Event{Type: EventTurnEnd, Message: msg, ToolResults: results})
			r.afterTurnEnd()
			pending = r.a.drainSteering()
			if more && !moreToolCalls && len(pending) == 0 {
				// The boundary asked for another request and nothing
				// else causes one: a follow-up does, or the context alone.
				if pending = r.a.drainFollowUp(); len(pending) == 0 {
					moreToolCalls = true
				}
			}
		}
		if pending = r.a.drainFollowUp(); len(pending) == 0 {
			break
		}
	}
	r.emit(Event{Type: EventAgentEnd, Messages: r.added})
}

// boundary runs the configured TurnBoundary.
func (r *run) boundary(msg *llm.AssistantMessage, results []*llm.ToolResultMessage) (more bool) {
	f := r.a.cfg.TurnBoundary
	if f == nil {
		return false
	}
	ctx, more := f(r.ctx, msg, results)
	if ctx != nil {
		r.context = slices.Clone(ctx)
	}
	return more && r.ctx.Err() == nil
}

// afterTurnEnd runs the configured AfterTurnEnd.
func (r *run) afterTurnEnd() {
	if f := r.a.cfg.AfterTurnEnd; f != nil {
		if ctx := f(r.ctx); ctx != nil {
			r.context = slices.Clone(ctx)
		}
	}
}

// request builds the model call from the transcript.
func (r *run) request() (*llm.Request, error) {
	msgs := r.context
	if f := r.a.cfg.TransformContext; f != nil {
		msgs = f(r.ctx, msgs)
	}
	opts := r.options
	opts.Thinking = r.requestedThinking()
	if f := r.a.cfg.GetAuth; f != nil {
		auth, err := f(r.ctx, r.model)
		if err != nil {
			return nil, fmt.Errorf("resolving API key for %s: %w", r.model.Provider, err)
		}
		opts.APIKey, opts.Headers = auth.APIKey, auth.Headers
	}
	r.tools = r.baseTools
	if f := r.a.cfg.RequestTools; f != nil {
		r.tools = f(r.ctx, r.context, slices.Clone(r.baseTools))
	}
	req := &llm.Request{
		SystemPrompt: r.systemPrompt,
		Messages:     r.a.cfg.ConvertToLLM(msgs),
		Options:      opts,
	}
	for _, t := range r.tools {
		if f := r.a.cfg.ToolSpec; f != nil {
			req.Tools = append(req.Tools, f(t))
		} else {
			req.Tools = append(req.Tools, t.Spec())
		}
	}
	return req, nil
}

// events opens the model stream. A call that cannot be made (no model, no
// provider, no key, already aborted) becomes a stream of its own that
// fails at once, so every failure reaches clients the same way.
func (r *run) events() iter.Seq[llm.StreamEvent] {
	fail := func(err error) iter.Seq[llm.StreamEvent] {
		b := llm.NewBuilder(r.model)
		return func(yield func(llm.StreamEvent) bool) {
			if yield(b.Start()) {
				yield(b.Fail(r.ctx, err))
			}
		}
	}
	if r.ctx.Err() != nil {
		return fail(context.Cause(r.ctx))
	}
	if r.model == nil {
		return fail(ErrNoModel)
	}
	if r.a.cfg.Providers == nil {
		return fail(fmt.Errorf("%w %q", ErrNoProvider, r.model.API))
	}
	p, err := r.a.cfg.Providers(r.model.API)
	if err != nil {
		return fail(err)
	}
	if p == nil {
		return fail(fmt.Errorf("%w %q", ErrNoProvider, r.model.API))
	}
	req, err := r.request()
	if err != nil {
		return fail(err)
	}
	return p.Stream(r.ctx, r.model, req)
}

// requestedThinking is the thinking level a request asks the model for:
// the run's, as near as the model supports.
func (r *run) requestedThinking() llm.ThinkingLevel { return llm.ClampThinking(r.model, r.thinking) }

// streamAssistant streams one assistant message, reporting it as
// message_start, one message_update per content event and message_end,
// and adds it to the transcript. The message records the thinking level
// it was asked for, however it ended (pi 1.5).
func (r *run) streamAssistant() (final *llm.AssistantMessage) {
	var partial *llm.AssistantMessage
	started := false
	defer func() {
		if v := recover(); v != nil {
			r.a.reportPanic("agent: model stream panicked: %v", v)
			final = r.failedFrom(partial, fmt.Errorf("%w: %v", ErrStreamPanicked, v))
		}
		if final == nil {
			final = r.failedFrom(partial, ErrNoFinalEvent)
		}
		// A copy: a provider may have handed out this message before.
		m := *final
		m.ThinkingLevel = r.requestedThinking()
		final = &m
		if !started {
			r.emit(Event{Type: EventMessageStart, Message: final})
		}
		final = finish(r, final)
		r.emit(Event{Type: EventMessageEnd, Message: final})
		r.context = append(r.context, final)
	}()
	for ev := range r.events() {
		switch ev.Type {
		case llm.EventStart:
			if ev.Partial != nil && !started {
				partial, started = ev.Partial, true
				r.emit(Event{Type: EventMessageStart, Message: partial})
			}
		case llm.EventDone, llm.EventError:
			if ev.Partial == nil {
				return r.failedFrom(partial, fmt.Errorf("model stream ended with %s and %w", ev.Type, ErrNoFinalMessage))
			}
			return ev.Partial
		default:
			if !started || ev.Partial == nil {
				continue
			}
			partial = ev.Partial
			e := ev
			r.emit(Event{Type: EventMessageUpdate, Message: partial, AssistantEvent: &e})
		}
	}
	return nil
}

// failedFrom ends a broken stream: the last partial (or an empty message)
// marked error, or aborted if the run was.
func (r *run) failedFrom(partial *llm.AssistantMessage, err error) *llm.AssistantMessage {
	if partial == nil {
		return r.failure(err)
	}
	m := partial.Clone()
	m.StopReason = llm.StopError
	m.ErrorMessage = err.Error()
	if r.ctx.Err() != nil {
		m.StopReason = llm.StopAborted
		m.ErrorMessage = context.Cause(r.ctx).Error()
	}
	return m
}

// failure is an empty assistant message failed with err.
func (r *run) failure(err error) *llm.AssistantMessage {
	b := llm.NewBuilder(r.model)
	return b.Fail(r.ctx, err).Partial
}

// finish hands an ended message to the FinishMessage hook; what it
// returns replaces the message when it has the same type. A hook that
// panics leaves the message as it was.
func finish[M llm.Message](r *run, m M) (out M) {
	hook := r.a.cfg.FinishMessage
	if hook == nil {
		return m
	}
	out = m
	defer func() {
		if v := recover(); v != nil {
			r.a.reportPanic("agent: finishing a message panicked: %v", v)
			out = m
		}
	}()
	if next, ok := hook(r.ctx, m).(M); ok && any(next) != nil {
		return next
	}
	return m
}
