package host

// This file keeps pi's record of nested calls: the calls a tool call made
// to other tools (a codemode script's), kept as nestedCalls on that call's
// toolResult message, bounded as pi bounds it.

import (
	"bytes"
	"encoding/json"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/codemode"
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
