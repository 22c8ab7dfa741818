package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
)

// outbound tracks the requests gopi sends the client (permission
// questions, file reads and writes, terminals) until their answers come.
type outbound struct {
	mu      sync.Mutex
	next    int64
	pending map[string]chan *message // by the request's id, as the client echoes it
	closed  bool
}

// ClientError is an error the client answered a request of gopi's with.
type ClientError struct {
	Method  string
	Code    int
	Message string
}

func (e *ClientError) Error() string {
	return fmt.Sprintf("the client answered %s with error %d: %s", e.Method, e.Code, e.Message)
}

// errConnectionEnded is the error of a request whose answer cannot come.
var errConnectionEnded = fmt.Errorf("the ACP client disconnected")

// call sends the client a request and waits for its answer, decoded
// into result (nil discards it), or for ctx's end, when the client is told
// to give up the request ($/cancel_request) and ctx's error returned.
func (a *conn) call(ctx context.Context, method string, params, result any) error {
	o := &a.out
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return errConnectionEnded
	}
	o.next++
	id := strconv.FormatInt(o.next, 10)
	ch := make(chan *message, 1)
	if o.pending == nil {
		o.pending = map[string]chan *message{}
	}
	o.pending[id] = ch
	o.mu.Unlock()
	forget := func() {
		o.mu.Lock()
		delete(o.pending, id)
		o.mu.Unlock()
	}
	err := a.w.send(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  any             `json:"params"`
	}{"2.0", json.RawMessage(id), method, params})
	if err != nil {
		forget()
		return fmt.Errorf("sending %s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m == nil {
			return errConnectionEnded
		}
		if len(m.Error) > 0 && string(m.Error) != "null" {
			var e rpcError
			if err := json.Unmarshal(m.Error, &e); err != nil {
				return fmt.Errorf("%s: the client's error is not a JSON-RPC error: %w", method, err)
			}
			return &ClientError{Method: method, Code: e.Code, Message: e.Message}
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(m.Result, result); err != nil {
			return fmt.Errorf("%s: the client's answer: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		forget()
		_ = a.w.notify("$/cancel_request", map[string]any{"requestId": json.RawMessage(id)})
		return ctx.Err()
	}
}

// answered routes a response to the request of gopi's it answers; one
// that answers nothing gopi asked is dropped (answering it could loop).
func (a *conn) answered(m *message) {
	id := string(m.ID)
	if s, err := strconv.Unquote(id); err == nil {
		id = s // a client that echoes the id as a string
	}
	o := &a.out
	o.mu.Lock()
	ch := o.pending[id]
	delete(o.pending, id)
	o.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

// endOutbound fails every request still waiting: the client is gone.
func (a *conn) endOutbound() {
	o := &a.out
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	for id, ch := range o.pending {
		close(ch)
		delete(o.pending, id)
	}
}
