package lspbridge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/gopi-dev/gopi/core/api"
)

// RequestFailed is LSP's code for a request that was valid but failed;
// pi's success:false responses map to it.
const RequestFailed jsonrpc2.Code = -32803

// RequestCancelled is LSP's code for a request the client cancelled.
const RequestCancelled jsonrpc2.Code = -32800

// command runs pi/<name> through the bridge's [api.Scheduler], which
// keeps the native dialect's order: state commands one at a time, in
// arrival order, each after the response before it is written; long ones
// (bash, compact, export_html, list_sessions) alongside later commands
// after their first step; a response before anything its command started
// emits. The place in that order is taken here, on the read loop; then
// the handler releases the read loop (jsonrpc2.Async), so a command that
// waits on the client, such as a dialog asked during preflight, cannot
// stall the connection. The command's context is the scheduler's, under
// the connection's, never ctx: jsonrpc2 recycles ctx once the handler
// returns.
func (b *Bridge) command(ctx context.Context, req *jsonrpc2.Request, name string) (any, error) {
	// name borrows the frame's bytes, which the reader reuses for the
	// next frame once jsonrpc2.Async below releases the read loop.
	name = strings.Clone(name)
	rt := b.runtime()
	if rt == nil {
		return nil, commandError(name, errors.New("no session runtime is attached"))
	}
	b.mu.Lock()
	b.seenCommand = true
	b.mu.Unlock()

	id, isCall := req.ID(), req.IsCall()
	call := b.sched.Queue()
	if isCall {
		b.track(id, call.Cancel)
		defer b.untrack(id)
	}
	// jsonrpc2 writes a response after the handler returns, and the
	// stream tells the bridge when (wrote). A batch's responses are
	// written together once all its members are done, so a member cannot
	// wait for its own response to let the next command go (nor, then,
	// hold its run's events back behind it): like a notification, it
	// counts as written when its handler returns.
	if isCall && !b.stream.batch {
		b.afterResponse(id, call.Written)
	} else {
		defer call.Written()
	}
	// Async copies the borrowed params, so they stay valid from here on.
	jsonrpc2.Async(ctx)

	var startsRun bool
	var endProgress func()
	out := make(chan commandOutcome, 1)
	call.Run(rt, api.Command{
		Name:         name,
		Params:       json.RawMessage(req.Params()),
		ID:           commandID(id, isCall),
		WrittenLater: true,
		BeforeStart:  func() { startsRun = name == api.CmdPrompt && !b.running.Load() },
		AfterStart: func() {
			if name == api.CmdCompact {
				endProgress = b.prog.manual("Compacting context")
			}
		},
		Reply: func(data any, err error) {
			if endProgress != nil {
				endProgress()
			}
			out <- commandOutcome{data, err}
		},
	})
	res := <-out
	if errors.Is(res.err, api.ErrNotStarted) {
		if b.ctx.Err() != nil {
			return nil, commandError(name, api.ErrShutdown)
		}
		return nil, jsonrpc2.NewError(RequestCancelled, name+" was cancelled before it started")
	}
	if res.err != nil {
		return nil, commandError(name, res.err)
	}
	if isCall && startsRun {
		b.mu.Lock()
		b.runPrompt = id
		b.mu.Unlock()
	}
	if res.data == api.NoData {
		return nil, nil
	}
	return res.data, nil
}

// commandOutcome is what the scheduler replied to one command.
type commandOutcome struct {
	data any
	err  error
}

// commandID is a request's id as JSON, which bash_execution_update
// repeats as the native dialect repeats a command's; nil for a
// notification.
func commandID(id jsonrpc2.ID, isCall bool) json.RawMessage {
	if !isCall {
		return nil
	}
	raw, err := json.Marshal(idValue(id))
	if err != nil {
		return nil
	}
	return raw
}

// commandError maps a native failure onto JSON-RPC: bad params are
// -32602, anything else -32803 carrying the native text and command name.
func commandError(name string, err error) error {
	msg := api.Clip(strings.TrimRight(err.Error(), "\n"), api.ClipMessage)
	data, _ := marshal(struct {
		Command string `json:"command"`
	}{name})
	code := RequestFailed
	if errors.Is(err, api.ErrInvalidParams) {
		code = jsonrpc2.InvalidParams
	}
	return &jsonrpc2.Error{Code: code, Message: msg, Data: data}
}

// track makes a request cancellable by $/cancelRequest (and shutdown).
func (b *Bridge) track(id jsonrpc2.ID, cancel context.CancelFunc) {
	b.mu.Lock()
	b.inflight[id] = cancel
	b.mu.Unlock()
}

func (b *Bridge) untrack(id jsonrpc2.ID) {
	b.mu.Lock()
	delete(b.inflight, id)
	b.mu.Unlock()
}

// cancelFrom handles $/cancelRequest and window/workDoneProgress/cancel.
// A long request's context is cancelled (for pi/bash that kills the
// command, like abort_bash); the id of the pi/prompt whose run is going,
// or the token of that run's progress, aborts the run, like abort.
func (b *Bridge) cancelFrom(ctx context.Context, method string, raw []byte) {
	var abort bool
	switch method {
	case methodCancelRequest:
		var p protocol.CancelParams
		if decodeLSP(raw, &p) != nil {
			return
		}
		var id jsonrpc2.ID
		switch v := p.ID.(type) {
		case protocol.Integer:
			id = jsonrpc2.NewNumberID(int64(v))
		case protocol.String:
			id = jsonrpc2.NewStringID(string(v))
		default:
			return
		}
		b.mu.Lock()
		cancel := b.inflight[id]
		abort = b.runPrompt.IsValid() && b.runPrompt == id
		b.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	case methodProgressCancel:
		var p protocol.WorkDoneProgressCancelParams
		if decodeLSP(raw, &p) != nil {
			return
		}
		token, ok := p.Token.(protocol.String)
		abort = ok && b.prog.isRunToken(string(token))
	}
	if !abort {
		return
	}
	if rt := b.runtime(); rt != nil {
		if err := rt.Abort(jsonrpc2.DetachContext(ctx)); err != nil {
			b.opts.Report(err)
		}
	}
}
