package host

// This file runs nested calls, the calls a tool call makes to other tools
// (a codemode script's, an extension tool's ctx.executeTool()), and keeps
// pi's record of them: nestedCalls on that call's toolResult message,
// bounded as pi bounds it.

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/codemode"
	"github.com/gopi-dev/gopi/core/host/gate"
	"github.com/gopi-dev/gopi/core/llm"
)

// nestedCalls are the records of the calls in progress, by the id of the
// call that made their nested calls.
type nestedCalls struct {
	mu sync.Mutex // guards byParent and every record in it
	// byParent: the record of each call that has made nested calls and
	// whose result has not been taken yet.
	byParent map[string]*nestedRecord
}

// nestedRecord is one call's record so far.
type nestedRecord struct {
	calls     []llm.NestedCallRecord
	started   []time.Time
	argsBytes int
	complete  bool
}

// nestedCall is a handle on one record entry; index -1: dropped.
type nestedCall struct {
	parent string
	index  int
}

// start records a nested call as it starts, "unfinished".
func (n *nestedCalls) start(parent, id, name string, args json.RawMessage) nestedCall {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.byParent == nil {
		n.byParent = map[string]*nestedRecord{}
	}
	rec := n.byParent[parent]
	if rec == nil {
		rec = &nestedRecord{complete: true}
		n.byParent[parent] = rec
	}
	if len(rec.calls) >= llm.MaxNestedCalls {
		rec.complete = false
		return nestedCall{parent: parent, index: -1}
	}
	entry := llm.NestedCallRecord{ID: id, Name: name, Status: "unfinished"}
	compact := compactArgs(args)
	if size := len(compact); size > llm.MaxNestedArgumentsBytes || rec.argsBytes+size > llm.MaxNestedArgumentsTotal {
		entry.ArgumentsBytes = size
		rec.complete = false
	} else {
		entry.Arguments = compact
		rec.argsBytes += size
	}
	rec.calls = append(rec.calls, entry)
	rec.started = append(rec.started, time.Now())
	return nestedCall{parent: parent, index: len(rec.calls) - 1}
}

// finish records how a nested call ended: "error" with the start of its
// text when it failed, else "ok".
func (n *nestedCalls) finish(c nestedCall, res agent.Result) {
	if c.index < 0 {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	rec := n.byParent[c.parent]
	if rec == nil {
		return // the parent's result was taken already
	}
	e := &rec.calls[c.index]
	e.Status = "ok"
	d := time.Since(rec.started[c.index]).Round(time.Millisecond).Milliseconds()
	e.DurationMs = &d
	if res.IsError {
		e.Status = "error"
		e.Error = codemode.HeadUTF16(resultText(res), llm.MaxNestedErrorChars)
	}
}

// take removes and returns the record of the calls parent made; nil when
// it made none.
func (n *nestedCalls) take(parent string) *llm.NestedCalls {
	n.mu.Lock()
	defer n.mu.Unlock()
	rec := n.byParent[parent]
	if rec == nil {
		return nil
	}
	delete(n.byParent, parent)
	out := &llm.NestedCalls{Calls: rec.calls, Complete: rec.complete}
	for _, c := range rec.calls {
		if c.Status == "unfinished" {
			out.Complete = false
		}
	}
	if out.Calls == nil {
		out.Calls = []llm.NestedCallRecord{}
	}
	return out
}

// compactArgs are the arguments as compact JSON ("{}" for none), as pi
// measures and keeps them.
func compactArgs(args json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage("{}")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, args); err != nil {
		return json.RawMessage("{}")
	}
	return b.Bytes()
}

// resultText is a result's text blocks, one per line.
func resultText(res agent.Result) string {
	var b []byte
	for _, c := range res.Content {
		if t, ok := c.(llm.TextContent); ok {
			if len(b) > 0 {
				b = append(b, '\n')
			}
			b = append(b, t.Text...)
		}
	}
	return string(b)
}

// nestedCaller runs a tool's calls to other tools (a codemode script's,
// an extension tool's ctx.executeTool()) through the tool pipeline: the
// same validation, hooks, approval, sandbox and journal as the model's
// calls. The tools it reaches are those scripts reach (codemode's
// callable).
type nestedCaller struct{ h *Host }

// Call is codemode's Caller.
func (c nestedCaller) Call(ctx context.Context, n codemode.Nested) (agent.Result, error) {
	return c.run(ctx, n, nil), nil
}

// run runs the call n; onUpdate, when not nil, hears its partial results
// besides the clients.
func (c nestedCaller) run(ctx context.Context, n codemode.Nested, onUpdate func(agent.Result)) agent.Result {
	var tool agent.Tool
	for _, t := range c.h.codemode.callable() {
		if t.Spec().Name == n.Tool {
			tool = t
			break
		}
	}
	h := c.h
	// Clients see the nested call as a call of its own, as pi sends it:
	// its tool_execution events name the codemode call as their parent.
	ev := func(typ agent.EventType) agent.Event {
		return agent.Event{Type: typ, ToolCallID: n.ID, ToolName: n.Tool, Args: n.Args, ParentToolCallID: n.Parent}
	}
	rec := h.nested.start(n.Parent, n.ID, n.Tool, n.Args)
	h.emit(ev(agent.EventToolExecutionStart))
	var started time.Time
	// A tool that does not exist is an error result, its call recorded
	// and told to clients like any other, as pi does.
	res := agent.ErrorResult("Tool %s not found", n.Tool)
	if tool != nil {
		call := &gate.Call{Call: agent.Call{ID: n.ID, Name: n.Tool, Args: n.Args}, Parent: n.Parent, Tool: tool,
			Starting: func(ctx context.Context, ac agent.Call) {
				started = time.Now()
				h.opts.toolStarting(ctx, ac)
			}}
		res = h.tools.Run(ctx, call, func(partial agent.Result) {
			e := ev(agent.EventToolExecutionUpdate)
			e.Result = &partial
			h.emit(e)
			if onUpdate != nil {
				onUpdate(partial)
			}
		})
	}
	h.nested.finish(rec, res)
	end := ev(agent.EventToolExecutionEnd)
	end.Result, end.IsError = &res, res.IsError
	if !started.IsZero() {
		d := time.Since(started).Milliseconds()
		end.DurationMs = &d
	}
	h.emit(end)
	return res
}
