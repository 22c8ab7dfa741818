package ext

// This file owns the host's requests and notifications to gopi: the
// JSON-RPC handler that routes them to the peer (directly, or through the
// ordered queue), the sync pipe's requests, and the errors the host gets.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.lsp.dev/jsonrpc2"
)

// serveSync answers the host's sync requests ([MethodSpec.Sync]) one at a
// time, as the host makes them, until its pipe closes. The host's thread
// waits for each answer, so every request gets one.
func (n *NodeHost) serveSync(p *hostProc) {
	sc := bufio.NewScanner(p.syncIn)
	sc.Buffer(nil, 64<<20)
	enc := json.NewEncoder(p.syncOut)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method Method          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		var res any
		err := json.Unmarshal(sc.Bytes(), &req)
		if err == nil {
			res, err = n.syncRequest(req.Method, req.Params)
		}
		ans := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		if err != nil {
			ans["error"] = wireError(err)
		} else {
			ans["result"] = res
		}
		if enc.Encode(ans) != nil {
			return
		}
	}
}

// syncRequest serves one sync request.
func (n *NodeHost) syncRequest(method Method, params json.RawMessage) (any, error) {
	if sp, ok := spec(PeerSide, method); !ok || !sp.Sync {
		return nil, fmt.Errorf("%w: %q is not a sync request", ErrNoMethod, method)
	}
	n.mu.Lock()
	peer := n.peer
	n.mu.Unlock()
	if peer == nil {
		return nil, fmt.Errorf("%w: %s is not available yet", errTrustPending, method)
	}
	return peer.Request(context.Background(), method, params)
}

// handler answers the host's calls. Requests run concurrently (a dialog
// may wait for the user). Notifications are delivered on the read loop,
// so each takes effect before the answer to the call that caused it, as
// in pi, and the peer must handle those without calling the host; the
// [MethodSpec.Queued] ones (they may start a run, whose hooks call the
// host and wait for answers on this read loop) go through the ordered
// queue instead.
func (n *NodeHost) handler(p *hostProc) jsonrpc2.Handler {
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		// The request borrows jsonrpc2's read buffer until the handler
		// returns (or calls Async): what outlives that is copied now. A
		// queued notification's method name read later would have been
		// overwritten by the next message (a sendUserMessage lost now and
		// then under load).
		method := Method(strings.Clone(req.Method()))
		params := append(json.RawMessage(nil), req.Params()...)
		sp, _ := spec(PeerSide, method)
		n.mu.Lock()
		peer := n.peer
		n.mu.Unlock()
		if !req.IsCall() {
			switch {
			case method == PeerReady:
			case sp.Queued || peer == nil:
				// Before Start there is no one to deliver to: the queue
				// keeps it until then.
				p.queue.push(method, params)
			default:
				n.deliver(method, params)
			}
			return nil, nil
		}
		// A command's session operations see the messages it sent before
		// them (sendMessage that starts a run, then waitForIdle). Only
		// those wait: a dialog or a model switch asked for from a hook
		// that a queued sendMessage is itself waiting on must not.
		seq := p.queue.count()
		jsonrpc2.Async(ctx)
		if sp.AfterQueue && !p.queue.waitFor(ctx, seq) {
			return nil, jsonrpc2.NewError(jsonrpc2.InternalError, errStopping.Error())
		}
		if peer == nil {
			return nil, jsonrpc2.NewError(jsonrpc2.InternalError, fmt.Sprintf("%s: %s is not available yet", errTrustPending, method))
		}
		if method == PeerUIAsk {
			n.dialogs.Add(1)
			defer n.dialogs.Add(-1)
		}
		res, err := peer.Request(jsonrpc2.DetachContext(ctx), method, params)
		if err != nil {
			return nil, wireError(err)
		}
		return res, nil
	}
}

// wireError is err as the host gets it: the JSON-RPC code of its kind,
// and its text.
func wireError(err error) error {
	code := jsonrpc2.InternalError
	switch {
	case errors.Is(err, ErrInvalidParams):
		code = jsonrpc2.InvalidParams
	case errors.Is(err, ErrNoMethod):
		code = jsonrpc2.MethodNotFound
	}
	return jsonrpc2.NewError(code, err.Error())
}

// deliver hands one notification to the peer (tool updates go to the
// call that waits for them).
func (n *NodeHost) deliver(method Method, params json.RawMessage) {
	n.mu.Lock()
	peer := n.peer
	n.mu.Unlock()
	if method == PeerToolUpdate {
		u, err := decode[ToolUpdateParams](method, params)
		if err != nil {
			peer.Notification(PeerError, mustJSON(ErrorEvent{ExtensionPath: "<extension host>", Event: string(method), Error: err.Error()}))
			return
		}
		n.mu.Lock()
		f := n.updates[u.ToolCallID]
		n.mu.Unlock()
		if f != nil {
			f(u.Partial)
		}
		return
	}
	peer.Notification(method, params)
}
