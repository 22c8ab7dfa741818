package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/gopi-dev/gopi/core/api"
)

// RecordReader yields one record at a time ([LineReader], [HeaderReader]).
type RecordReader interface {
	Next() ([]byte, error)
}

// Conn is one client speaking pi's native JSONL protocol. It is the
// [api.Client] the runtime emits events and UI requests to, and it serves
// the client's commands with [Conn.Serve].
//
// Scheduling follows architecture.md: state commands run one after another
// on the reading goroutine, in arrival order; long commands (bash, compact,
// export_html, list_sessions) run in goroutines the Conn owns and answer
// when they finish. A prompt's run is started by the runtime after the
// prompt's response has been written (see [api.AfterResponse]).
type Conn struct {
	w      *Writer
	broker *api.UIBroker
	report func(error)

	reportOnce sync.Once
}

// NewConn writes responses, events and UI requests to w. report receives
// the first failure to write (the client has gone); nil ignores it.
func NewConn(w *Writer, report func(error)) *Conn {
	if report == nil {
		report = func(error) {}
	}
	c := &Conn{w: w, report: report}
	c.broker = api.NewUIBroker(func(r api.UIRequest) error { return c.write(r) })
	return c
}

var _ api.Client = (*Conn)(nil)

// Emit writes one event.
func (c *Conn) Emit(ev api.Event) { _ = c.write(ev) }

// Ask writes a dialog request and waits for its extension_ui_response,
// its timeout or ctx.
func (c *Conn) Ask(ctx context.Context, req api.UIRequest) api.UIResponse {
	return c.broker.Ask(ctx, req)
}

// Notify writes a fire-and-forget UI request.
func (c *Conn) Notify(req api.UIRequest) { c.broker.Notify(req) }

func (c *Conn) write(v any) error {
	if r, ok := v.(response); ok {
		// Never echo a client's input back unbounded.
		r.Command, r.Error = api.Clip(r.Command, api.ClipName), api.Clip(r.Error, api.ClipMessage)
		v = r
	}
	err := c.w.Encode(v)
	if err != nil {
		c.reportOnce.Do(func() { c.report(fmt.Errorf("writing to the client: %w", err)) })
	}
	return err
}

// response is a command's answer. Data is omitted when nil; a typed nil
// pointer in it encodes as null (cycle_model with nothing to cycle).
type response struct {
	ID      json.RawMessage `json:"id,omitempty"`
	Type    string          `json:"type"`
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Data    any             `json:"data,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// envelope is what every command shares.
type envelope struct {
	Type json.RawMessage `json:"type"`
	ID   json.RawMessage `json:"id"`
}

// commandParse is the "command" of answers to records that are not
// commands at all, as pi names it.
const commandParse = "parse"

// Serve reads commands from in and answers them on the Conn's writer until
// in ends or ctx is cancelled. It returns after every long command it
// started has answered (they are cancelled with ctx, or when in ends) and
// every waiting UI dialog has been resolved as cancelled. A read error
// other than the end of input is returned.
//
// The goroutine reading in is released when in is closed or returns an
// error; Serve does not wait for it when ctx ends first (a blocked read of
// stdin cannot be interrupted; the process exits instead).
func (c *Conn) Serve(ctx context.Context, in RecordReader, srv api.Server) error {
	ctx, cancel := context.WithCancelCause(ctx)
	var long sync.WaitGroup
	// On the way out: cancel long commands and waiting dialogs, then wait
	// for the long commands to answer.
	defer long.Wait()
	defer c.broker.CancelAll()
	defer cancel(api.ErrShutdown)

	type item struct {
		rec []byte
		err error
	}
	records := make(chan item)
	next := make(chan struct{})
	go func() {
		defer close(records)
		for {
			rec, err := in.Next()
			if rec != nil {
				// The reader reuses its buffer; hand over a copy.
				rec = append([]byte(nil), rec...)
			}
			select {
			case records <- item{rec, err}:
			case <-ctx.Done():
				return
			}
			var tooLarge *ErrRecordTooLarge
			if err != nil && !errors.As(err, &tooLarge) {
				return
			}
			select {
			case <-next:
			case <-ctx.Done():
				return
			}
		}
	}()

	// Commands are answered one at a time, in arrival order, by a worker;
	// the loop below goes on reading meanwhile, so the answer to a dialog
	// that a command waits on (an extension's confirm during new_session)
	// still gets through.
	cmds := make(chan []byte, maxQueuedCommands)
	var worker sync.WaitGroup
	worker.Go(func() {
		for rec := range cmds {
			if ctx.Err() == nil {
				c.handle(ctx, rec, srv, &long)
			}
		}
	})
	// At the end the queued commands are still answered, with every
	// dialog resolved as cancelled: nobody is left to answer one.
	defer func() {
		c.broker.Shut()
		close(cmds)
		worker.Wait()
	}()
	for {
		var it item
		var ok bool
		select {
		case it, ok = <-records:
		case <-ctx.Done():
			return nil
		}
		if !ok {
			return nil
		}
		var tooLarge *ErrRecordTooLarge
		switch {
		case it.err == nil:
			if !c.resolveUI(it.rec) {
				select {
				case cmds <- it.rec:
				case <-ctx.Done():
					return nil
				}
			}
		case errors.As(it.err, &tooLarge):
			_ = c.write(response{Type: "response", Command: commandParse, Error: "Failed to parse command: " + tooLarge.Error()})
		case errors.Is(it.err, io.EOF), errors.Is(it.err, io.ErrClosedPipe):
			return nil
		default:
			return fmt.Errorf("reading commands: %w", it.err)
		}
		select {
		case next <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
	}
}

// maxQueuedCommands bounds the commands read ahead of the one being
// answered; past it, reading waits.
const maxQueuedCommands = 256

// resolveUI hands an extension_ui_response to the dialog waiting for it
// and reports true; any other record is left alone.
func (c *Conn) resolveUI(rec []byte) bool {
	if !bytes.Contains(rec, []byte(api.CmdExtensionUIResponse)) {
		return false
	}
	var env struct {
		Type string          `json:"type"`
		ID   json.RawMessage `json:"id"`
	}
	if json.Unmarshal(rec, &env) != nil || env.Type != api.CmdExtensionUIResponse {
		return false
	}
	r, err := api.ParseUIResponse(rec)
	if err != nil {
		_ = c.write(response{ID: env.ID, Type: "response", Command: api.CmdExtensionUIResponse, Error: err.Error()})
		return true
	}
	// A late or unknown answer is dropped, as pi does.
	c.broker.Resolve(r)
	return true
}

// handle answers one record.
func (c *Conn) handle(ctx context.Context, rec []byte, srv api.Server, long *sync.WaitGroup) {
	var env envelope
	if err := json.Unmarshal(rec, &env); err != nil {
		msg := err.Error()
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			msg = "a command must be a JSON object, got " + te.Value
		}
		_ = c.write(response{Type: "response", Command: commandParse, Error: "Failed to parse command: " + msg})
		return
	}
	var name string
	if len(env.Type) == 0 || json.Unmarshal(env.Type, &name) != nil || name == "" {
		_ = c.write(response{ID: env.ID, Type: "response", Command: commandParse,
			Error: `Failed to parse command: field "type" must be a string naming the command`})
		return
	}
	if name == api.CmdExtensionUIResponse {
		r, err := api.ParseUIResponse(rec)
		if err != nil {
			_ = c.write(response{ID: env.ID, Type: "response", Command: name, Error: err.Error()})
			return
		}
		// A late or unknown answer is dropped, as pi does.
		c.broker.Resolve(r)
		return
	}
	if !api.Known(name) {
		clipped := api.Clip(name, api.ClipName)
		_ = c.write(response{ID: env.ID, Type: "response", Command: clipped, Error: "Unknown command: " + clipped})
		return
	}
	cmdCtx, sent := api.WithAfterResponse(api.WithCommandID(ctx, env.ID))
	answer := func(data any, err error) {
		resp := response{ID: env.ID, Type: "response", Command: name, Success: err == nil}
		if err != nil {
			resp.Error = errorText(err)
		} else if data != api.NoData {
			resp.Data = data
		}
		_ = c.write(resp)
		sent()
	}
	// The first step runs here, in arrival order; a long command's rest
	// runs in a goroutine the Conn owns.
	finish, err := api.Start(cmdCtx, srv, name, rec)
	if err != nil {
		answer(nil, err)
		return
	}
	if api.KindOf(name) == api.KindLong {
		long.Go(func() { answer(finish()) })
		return
	}
	answer(finish())
}

// errorText is the message a client reads; it never ends in a newline.
func errorText(err error) string {
	return strings.TrimRight(err.Error(), "\n")
}
