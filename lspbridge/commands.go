package lspbridge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/gopi-dev/gopi/core/api"
)

// RequestFailed is LSP's code for a request that was valid but failed;
// pi's success:false responses map to it.
const RequestFailed jsonrpc2.Code = -32803

// RequestCancelled is LSP's code for a request the client cancelled.
const RequestCancelled jsonrpc2.Code = -32800

// command runs pi/<name>. Every command releases the read loop at once
// (jsonrpc2.Async), so one that waits on the client, such as a dialog
// asked during preflight, cannot stall the connection. Order is kept by
// turns taken on the read loop, as in the native dialect: a command
// starts once the state commands before it have been answered and the
// long ones before it (bash, compact, export_html, list_sessions) have
// taken their first step. A response is written before anything the
// command started (a prompt's run) emits events.
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
	wait, done := b.nextTurn()
	// Contexts never derive from ctx itself: jsonrpc2 recycles it when
	// the handler returns, and a context.WithCancel child would watch a
	// recycled value from its own goroutine. The connection's context
	// (which the input's end cancels) is the parent; ctx serves
	// jsonrpc2.Async only.
	rctx, cancel := context.WithCancel(jsonrpc2.DetachContext(ctx))
	defer cancel()
	if isCall {
		// bash_execution_update repeats the request's id, as the native
		// dialect repeats a command's.
		if raw, err := json.Marshal(idValue(id)); err == nil {
			rctx = api.WithCommandID(rctx, raw)
		}
	}
	cmdCtx, sent := api.WithAfterResponse(rctx)
	if isCall {
		b.track(id, cancel)
		defer b.untrack(id)
	}
	// A batch's responses are written together once all its members are
	// done, so a member cannot wait for its own response to let the next
	// command go (nor, then, hold its run's events back behind it).
	if isCall && !b.stream.batch {
		b.afterResponse(id, func() { sent(); done() })
	} else {
		defer func() { sent(); done() }()
	}
	// Async copies the borrowed params, so they stay valid from here on.
	jsonrpc2.Async(ctx)
	params := json.RawMessage(req.Params())

	if !wait(rctx) {
		if b.ctx.Err() != nil {
			return nil, commandError(name, api.ErrShutdown)
		}
		return nil, jsonrpc2.NewError(RequestCancelled, name+" was cancelled before it started")
	}
	startsRun := name == api.CmdPrompt && !b.running.Load()
	finish, err := api.Start(cmdCtx, rt, name, params)
	if err == nil && api.KindOf(name) == api.KindLong {
		if name == api.CmdCompact {
			end := b.prog.manual("Compacting context")
			defer end()
		}
		done() // later commands may start; this one's rest runs alongside
	}
	var data any
	if err == nil {
		data, err = finish()
	}
	if err != nil {
		return nil, commandError(name, err)
	}
	if isCall && startsRun {
		b.mu.Lock()
		b.runPrompt = id
		b.mu.Unlock()
	}
	if data == api.NoData {
		return nil, nil
	}
	return data, nil
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

// nextTurn takes the next place in command order; it must be called on
// the read loop. wait blocks until every earlier command has finished (or
// reached its concurrent part) and reports false if ctx ended first; done
// lets the next command go, and may be called more than once.
func (b *Bridge) nextTurn() (wait func(ctx context.Context) bool, done func()) {
	b.turnMu.Lock()
	prev := b.lastTurn
	mine := make(chan struct{})
	b.lastTurn = mine
	b.turnMu.Unlock()
	var once sync.Once
	return func(ctx context.Context) bool {
			select {
			case <-prev:
				return true
			case <-ctx.Done():
				return false
			}
		}, func() {
			once.Do(func() { close(mine) })
		}
}

// track makes a long request cancellable by $/cancelRequest.
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
