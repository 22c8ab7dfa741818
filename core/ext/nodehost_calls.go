package ext

// This file owns gopi's calls to the host: the call itself with its rid,
// the hook timeout's watchdog (paused while a dialog is open), cancelling,
// tool execution with its partial updates, and notifications.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"
)

type untimedKey struct{}

// Untimed marks ctx so that a hook called with it has no timeout (a
// custom compaction may call a model).
func Untimed(ctx context.Context) context.Context { return context.WithValue(ctx, untimedKey{}, true) }

// Call implements [Extension].
func (n *NodeHost) Call(ctx context.Context, method Method, params, result any) error {
	p, err := n.current(ctx)
	if err != nil {
		return err
	}
	return n.callOn(ctx, p, method, params, result)
}

func (n *NodeHost) callOn(ctx context.Context, p *hostProc, method Method, params, result any) error {
	p.begin()
	defer p.end()
	b, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("extension call %s: %w", method, err)
	}
	rid := n.rid.Add(1)
	raw := withRID(b, rid)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if sp, _ := spec(HostSide, method); !sp.Untimed && ctx.Value(untimedKey{}) == nil {
		timeout := n.HookTimeout
		if timeout == 0 {
			timeout = DefaultHookTimeout
		}
		stop := make(chan struct{})
		var watch sync.WaitGroup
		watch.Go(func() { n.watchdog(timeout, stop, cancel) })
		defer func() {
			close(stop)
			watch.Wait()
		}()
	}
	var out json.RawMessage
	_, err = p.conn.Call(ctx, string(method), raw, &out)
	if err != nil {
		if ctx.Err() != nil {
			// Tell the handler to give up (ctx.signal, a tool's signal).
			_ = p.conn.Notify(context.Background(), string(HostCancel), CancelParams{RID: rid})
			if cause := context.Cause(ctx); cause != nil {
				err = cause
			}
		}
		select {
		case <-p.exited:
			err = fmt.Errorf("the extension host stopped during %s", method)
		default:
		}
		return fmt.Errorf("extension %s: %w", method, err)
	}
	if result != nil && len(out) > 0 {
		if err := json.Unmarshal(out, result); err != nil {
			return fmt.Errorf("extension %s: reading its answer: %w", method, err)
		}
	}
	return nil
}

// watchdog cancels a hook call after timeout, not counting time during
// which a dialog is open.
func (n *NodeHost) watchdog(timeout time.Duration, stop <-chan struct{}, cancel context.CancelCauseFunc) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if n.dialogs.Load() > 0 {
				t.Reset(timeout)
				continue
			}
			cancel(fmt.Errorf("%w (%s)", ErrHookTimeout, timeout))
			return
		}
	}
}

// withRID adds "rid" to a JSON object: the id the host knows a call by
// when gopi cancels it.
func withRID(raw json.RawMessage, rid int64) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return raw
	}
	body := bytes.TrimSpace(raw[1:])
	head := `{"rid":` + strconv.FormatInt(rid, 10)
	if len(body) > 0 && body[0] != '}' {
		head += ","
	}
	return append([]byte(head), body...)
}

// ExecuteTool runs an extension tool; update receives its partial results.
func (n *NodeHost) ExecuteTool(ctx context.Context, params ExecuteToolParams, update func(json.RawMessage), result any) error {
	n.mu.Lock()
	n.updates[params.ToolCallID] = update
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.updates, params.ToolCallID)
		n.mu.Unlock()
	}()
	err := n.Call(ctx, HostExecuteTool, params, result)
	// The tool's last updates were read before its answer: deliver them
	// before the tool counts as finished.
	n.delivered(ctx)
	return err
}

// delivered waits until the queued notifications read so far (sendMessage,
// a tool's updates) have been delivered, or ctx ends.
func (n *NodeHost) delivered(ctx context.Context) {
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	if p != nil {
		p.queue.waitFor(ctx, p.queue.count())
	}
}

// Notify implements [Extension]; with no host running it is dropped.
func (n *NodeHost) Notify(method Method, params any) {
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	if p == nil {
		return
	}
	_ = p.conn.Notify(context.Background(), string(method), params)
}
