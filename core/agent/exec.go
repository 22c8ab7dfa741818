package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sourcegraph/conc"

	"github.com/gopi-dev/gopi/core/llm"
)

// skippedText is the result of a call skipped for a steering message.
const skippedText = "Skipped due to queued user message."

// abortedText is the result of a call an abort stopped before its tool
// started: while it waited to be prepared, in its before hook, or before
// its turn to run (pi 1.6).
const abortedText = "Operation aborted"

// outcome is a finished tool call.
type outcome struct {
	call    llm.ToolCall
	result  Result
	isError bool
	// duration is how long the tool's Run took (monotonic clock); nil when
	// the tool never ran (invalid arguments, blocked, skipped).
	duration *time.Duration
}

// prepared is a call that passed validation and the before hook.
type prepared struct {
	index int // position among the message's calls
	call  llm.ToolCall
	tool  Tool
	args  json.RawMessage
	bind  func(context.Context) context.Context // see Call.Bind
}

// toolNote is what a running tool sends the run goroutine: an update, or
// its final result.
type toolNote struct {
	index   int
	update  *Result
	done    bool
	outcome outcome
}

// executeTools runs the calls of one assistant message and returns their
// toolResult messages in call order, and whether every result asked the
// run to stop.
func (r *run) executeTools(calls []llm.ToolCall) ([]*llm.ToolResultMessage, bool) {
	outs := make([]outcome, len(calls))
	var results []*llm.ToolResultMessage
	if r.sequential(calls) {
		for i, call := range calls {
			if r.skipRemaining(i) {
				outs[i] = r.skip(call)
			} else {
				r.startEvent(call)
				if p, out := r.prepare(i, call); p == nil {
					outs[i] = out
				} else {
					r.runPrepared([]prepared{*p}, outs, false)
				}
				r.endEvent(outs[i])
			}
			results = append(results, r.pushResult(outs[i]))
		}
		return results, terminates(outs)
	}

	var ready []prepared
	for i, call := range calls {
		if r.skipRemaining(i) {
			outs[i] = r.skip(call)
			continue
		}
		r.startEvent(call)
		if p, out := r.prepare(i, call); p == nil {
			outs[i] = out
			r.endEvent(out)
		} else {
			ready = append(ready, *p)
		}
	}
	r.runPrepared(ready, outs, true)
	for _, out := range outs {
		results = append(results, r.pushResult(out))
	}
	return results, terminates(outs)
}

func (r *run) sequential(calls []llm.ToolCall) bool {
	if r.toolExec == ToolsSequential {
		return true
	}
	for _, c := range calls {
		if t := r.findTool(c.Name); t != nil {
			if s, ok := t.(SequentialTool); ok && s.Sequential() {
				return true
			}
		}
	}
	return false
}

// skipRemaining reports whether call i and those after it give way to a
// queued steering message. The first call always runs.
func (r *run) skipRemaining(i int) bool {
	return i > 0 && !r.a.cfg.SteerKeepsTools && r.a.hasSteering()
}

func (r *run) skip(call llm.ToolCall) outcome {
	out := outcome{call: call, result: errorResult(skippedText), isError: true}
	r.startEvent(call)
	r.endEvent(out)
	return out
}

func terminates(outs []outcome) bool {
	if len(outs) == 0 {
		return false
	}
	for _, o := range outs {
		if !o.result.Terminate {
			return false
		}
	}
	return true
}

// errorResult is pi's result for a call that failed before or while
// running: the message as text, empty details.
func errorResult(text string) Result {
	return Result{Content: llm.Contents{llm.TextContent{Text: text}}, Details: map[string]any{}, IsError: true}
}

func (r *run) findTool(name string) Tool {
	for _, t := range r.tools {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}

func (r *run) startEvent(call llm.ToolCall) {
	r.emit(Event{Type: EventToolExecutionStart, ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments})
}

func (r *run) endEvent(out outcome) {
	res := out.result
	ev := Event{Type: EventToolExecutionEnd, ToolCallID: out.call.ID, ToolName: out.call.Name, Result: &res, IsError: out.isError}
	ev.DurationMs = out.durationMs()
	r.emit(ev)
}

// durationMs is how long the tool ran in whole milliseconds (rounded, as
// pi does), nil when it did not run.
func (o outcome) durationMs() *int64 {
	if o.duration == nil {
		return nil
	}
	return new(o.duration.Round(time.Millisecond).Milliseconds())
}

// pushResult reports the toolResult message of out.
func (r *run) pushResult(out outcome) *llm.ToolResultMessage {
	tr := &llm.ToolResultMessage{
		ToolCallID:  out.call.ID,
		ToolName:    out.call.Name,
		Content:     out.result.Content,
		IsError:     out.isError,
		DurationMs:  out.durationMs(),
		NestedCalls: out.result.NestedCalls,
		Timestamp:   llm.Now(),
	}
	if tr.Content == nil {
		tr.Content = llm.Contents{}
	}
	if out.result.Details != nil {
		if raw, err := json.Marshal(out.result.Details); err == nil {
			tr.Details = raw
		} else {
			r.a.report("agent: %s result details: %v", out.call.Name, err)
		}
	}
	r.emit(Event{Type: EventMessageStart, Message: tr})
	tr = finish(r, tr)
	r.emit(Event{Type: EventMessageEnd, Message: tr})
	return tr
}

// prepare finds the tool, repairs and checks the arguments and asks the
// before hook. It returns the call ready to run, or the outcome that
// replaces running it.
func (r *run) prepare(i int, call llm.ToolCall) (p *prepared, out outcome) {
	fail := func(text string) (*prepared, outcome) {
		return nil, outcome{call: call, result: errorResult(text), isError: true}
	}
	if r.ctx.Err() != nil {
		return fail(abortedText)
	}
	tool := r.findTool(call.Name)
	if tool == nil {
		return fail(fmt.Sprintf("Tool %s not found", call.Name))
	}
	defer func() {
		if v := recover(); v != nil {
			r.a.reportPanic("agent: preparing %s panicked: %v", call.Name, v)
			p, out = fail(fmt.Sprintf("Tool %s failed before running: %v", call.Name, v))
		}
	}()
	args := call.Arguments
	if ap, ok := tool.(ArgumentPreparer); ok {
		args = ap.PrepareArguments(slices.Clone(args))
	}
	checked, err := r.a.validator.validate(call.Name, tool.Spec().Parameters, args)
	if err != nil {
		return fail(err.Error())
	}
	c := Call{ID: call.ID, Name: call.Name, Args: checked}
	if hook := r.a.cfg.BeforeToolCall; hook != nil {
		block, reason := hook(r.ctx, &c)
		if r.ctx.Err() != nil {
			// Aborted while the hook ran: whatever it decided (a dialog
			// cancelled, a hook that failed for it), the call does not run.
			return fail(abortedText)
		}
		if block {
			if reason == "" {
				reason = "Tool execution was blocked"
			}
			return fail(reason)
		}
	}
	return &prepared{index: i, call: call, tool: tool, args: c.Args, bind: c.Bind}, outcome{}
}

// runPrepared runs ps and stores each outcome at its call's index. The
// tools run in goroutines it owns; their updates and results come back
// over a channel, so every event is emitted from the run goroutine. With
// endEvents, tool_execution_end is emitted as each call finishes.
func (r *run) runPrepared(ps []prepared, outs []outcome, endEvents bool) {
	if len(ps) == 0 {
		return
	}
	notes := make(chan toolNote)
	var wg conc.WaitGroup
	for _, p := range ps {
		wg.Go(func() { r.invoke(p, notes) })
	}
	for remaining := len(ps); remaining > 0; {
		n := <-notes
		if !n.done {
			p := ps[slices.IndexFunc(ps, func(p prepared) bool { return p.index == n.index })]
			r.emit(Event{Type: EventToolExecutionUpdate, ToolCallID: p.call.ID, ToolName: p.call.Name, Args: p.call.Arguments, Result: n.update})
			continue
		}
		remaining--
		out := n.outcome
		if out.duration != nil { // the tool ran: its result goes through the after hook
			out = r.after(ps[slices.IndexFunc(ps, func(p prepared) bool { return p.index == n.index })], out)
		}
		outs[n.index] = out
		if endEvents {
			r.endEvent(out)
		}
	}
	wg.Wait()
}

// invoke runs one tool in its own goroutine and sends its updates and
// result to notes. Updates the tool sends after it returned are dropped.
func (r *run) invoke(p prepared, notes chan<- toolNote) {
	var mu sync.Mutex // guards closed; held while an update is sent
	closed := false
	update := func(res Result) {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return
		}
		res.Content = slices.Clone(res.Content)
		notes <- toolNote{index: p.index, update: &res}
	}
	out := outcome{call: p.call}
	if r.ctx.Err() != nil {
		// Aborted before this call's turn came: it never starts.
		out.result, out.isError = errorResult(abortedText), true
		notes <- toolNote{index: p.index, done: true, outcome: out}
		return
	}
	func() {
		defer func() {
			if v := recover(); v != nil {
				r.a.reportPanic("agent: tool %s panicked: %v", p.call.Name, v)
				out.result, out.isError = errorResult(fmt.Sprintf("Tool %s panicked: %v", p.call.Name, v)), true
			}
		}()
		ctx := context.WithValue(r.ctx, callIDKey{}, p.call.ID)
		if p.bind != nil {
			ctx = p.bind(ctx)
		}
		call := Call{ID: p.call.ID, Name: p.call.Name, Args: p.args}
		if f := r.a.cfg.ToolStarting; f != nil {
			f(ctx, call)
		}
		start := time.Now()
		defer func() { d := time.Since(start); out.duration = &d }()
		res, err := p.tool.Run(ctx, call, update)
		if err != nil {
			out.result, out.isError = errorResult(err.Error()), true
			return
		}
		out.result, out.isError = res, res.IsError
	}()
	mu.Lock()
	closed = true
	mu.Unlock()
	notes <- toolNote{index: p.index, done: true, outcome: out}
}

// after applies the after hook to a finished call.
func (r *run) after(p prepared, out outcome) (res outcome) {
	hook := r.a.cfg.AfterToolCall
	if hook == nil {
		return out
	}
	defer func() {
		if v := recover(); v != nil {
			r.a.reportPanic("agent: after hook for %s panicked: %v", p.call.Name, v)
			res = out
			res.result, res.isError = errorResult(fmt.Sprintf("%v", v)), true
		}
	}()
	in := out.result
	in.IsError = out.isError
	got := hook(r.ctx, Call{ID: p.call.ID, Name: p.call.Name, Args: p.args}, in)
	out.result, out.isError = got, got.IsError
	return out
}
