// Package gate is gopi's tool pipeline: every tool call, whichever way it
// comes (the model's, an extension tool's ctx.executeTool), passes the same
// stages in the same order before it runs, and the same stages in reverse
// order after:
//
//	validation → extension tool_call hooks → approval → sandbox → journal → run
//	run → approval's note → extension tool_result hooks → the result
//
// The sandbox stage does its work while the call runs: it hands the bash
// tool the question whether a command the sandbox stopped runs once more
// outside it ([Sandbox]).
//
// A stage is a small type with state of its own ([Stage]); the host builds
// the pipeline once with [New] from the stages it wants, each given only
// what it uses. The agent calls [Pipeline.Admit] and [Pipeline.Finish]
// around every call it runs (it has validated the arguments already); a
// nested call goes through [Pipeline.Run], which validates first.
package gate

import (
	"context"
	"sync"

	"github.com/gopi-dev/gopi/core/agent"
)

// Call is one tool call on its way through the pipeline. Stages may change
// its arguments before it runs, and keep what they need to know about it
// until it has run.
type Call struct {
	agent.Call
	// Parent is the id of the call that made this one (a nested call);
	// "" for the model's own calls.
	Parent string
	// Tool is the tool the call runs, when the pipeline knows it (nested
	// calls); nil for the agent's, which the agent found itself.
	Tool agent.Tool
	// Starting, when set, hears that a nested call passed the stages and
	// its tool is about to run ([Pipeline.Run]).
	Starting func(context.Context, agent.Call)

	// userVersion: the user changed the content of this edit or write
	// before approving it (the approval stage tells the model after).
	userVersion bool
	// binds derive the context the tool runs with (Bind), in order.
	binds []func(context.Context) context.Context
}

// Bind makes the tool run with a context f derives from its own: how a
// stage hands the tool what it decided (the file the user approved).
func (c *Call) Bind(f func(context.Context) context.Context) { c.binds = append(c.binds, f) }

// bound is the context the tool runs with.
func (c *Call) bound(ctx context.Context) context.Context {
	for _, f := range c.binds {
		ctx = f(ctx)
	}
	return ctx
}

// Stage is one step of the pipeline.
type Stage interface {
	// Before sees a call before it runs. It may change c.Args, or stop
	// the call: blocked, with the reason the model reads. The stages
	// after it, and every After, are then skipped.
	Before(ctx context.Context, c *Call) (blocked bool, reason string)
	// After sees the result of a call that ran, and returns the result
	// the next stage (or the model) sees.
	After(ctx context.Context, c *Call, res agent.Result) agent.Result
}

// BeforeOnly is a [Stage] that has nothing to do after the call: embed it.
type BeforeOnly struct{}

// After implements [Stage]: the result as it is.
func (BeforeOnly) After(_ context.Context, _ *Call, res agent.Result) agent.Result { return res }

// Pipeline runs calls through its stages.
type Pipeline struct {
	stages []Stage

	mu sync.Mutex // guards live
	// live are the calls admitted and not yet finished, by id.
	live map[string]*Call
}

// New is a pipeline of stages, in order.
func New(stages ...Stage) *Pipeline {
	return &Pipeline{stages: stages, live: map[string]*Call{}}
}

// Admit runs the stages' Before over a call about to run (the agent's
// BeforeToolCall): call.Args takes what they made of the arguments. A
// blocked call ends here; one that is not is finished by [Pipeline.Finish].
func (p *Pipeline) Admit(ctx context.Context, call *agent.Call) (blocked bool, reason string) {
	c := &Call{Call: *call}
	if blocked, reason := p.before(ctx, c); blocked {
		return true, reason
	}
	if len(c.binds) > 0 {
		c.Call.Bind = c.bound
	}
	*call = c.Call
	p.mu.Lock()
	p.live[c.ID] = c
	p.mu.Unlock()
	return false, ""
}

// Finish runs the stages' After, last stage first, over the result of an
// admitted call (the agent's AfterToolCall). A call the pipeline did not
// admit gets its result back as it is.
func (p *Pipeline) Finish(ctx context.Context, call agent.Call, res agent.Result) agent.Result {
	p.mu.Lock()
	c := p.live[call.ID]
	delete(p.live, call.ID)
	p.mu.Unlock()
	if c == nil {
		return res
	}
	c.Args = call.Args
	return p.after(ctx, c, res)
}

// Run runs a nested call (a codemode script's tool call) the way the
// agent runs the model's: c.Args are validated against c.Tool's schema
// (a failure is the result, as the model would read it), the stages'
// Before in order (a blocked call's result is the reason), the tool with
// the context the stages bound and c.ID as its call id, then the stages'
// After, last first. c.Parent names the call that made it. update gets
// the tool's partial results.
func (p *Pipeline) Run(ctx context.Context, c *Call, update func(agent.Result)) agent.Result {
	if c.Tool == nil {
		return agent.ErrorResult("Tool %s not found", c.Name)
	}
	if c.Parent != "" {
		// The stages (the extensions' hooks) and the tool know it for a
		// nested call.
		ctx = agent.WithParentCallID(ctx, c.Parent)
	}
	args, err := agent.Validate(c.Tool, c.Args)
	if err != nil {
		return agent.ErrorResult("%s", err.Error())
	}
	c.Args = args
	if blocked, reason := p.before(ctx, c); blocked {
		if reason == "" {
			reason = "Tool execution was blocked"
		}
		return agent.ErrorResult("%s", reason)
	}
	if update == nil {
		update = func(agent.Result) {}
	}
	toolCtx := c.bound(agent.WithCallID(ctx, c.ID))
	if c.Starting != nil {
		c.Starting(toolCtx, c.Call)
	}
	res := runTool(toolCtx, c, update)
	return p.after(ctx, c, res)
}

// runTool runs the nested call's tool; an error or a panic is an error
// result, as the agent makes them.
func runTool(ctx context.Context, c *Call, update func(agent.Result)) (res agent.Result) {
	defer func() {
		if v := recover(); v != nil {
			res = agent.ErrorResult("Tool %s panicked: %v", c.Name, v)
		}
	}()
	res, err := c.Tool.Run(ctx, c.Call, update)
	if err != nil {
		return agent.ErrorResult("%s", err.Error())
	}
	return res
}

func (p *Pipeline) before(ctx context.Context, c *Call) (bool, string) {
	for _, s := range p.stages {
		if blocked, reason := s.Before(ctx, c); blocked {
			return true, reason
		}
	}
	return false, ""
}

func (p *Pipeline) after(ctx context.Context, c *Call, res agent.Result) agent.Result {
	for i := len(p.stages) - 1; i >= 0; i-- {
		res = p.stages[i].After(ctx, c, res)
	}
	return res
}
