package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

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
// The Conn frames records, answers the ones that are not commands and
// resolves extension_ui_response records; the order commands run in (and
// that a prompt's response precedes its run's events) is an
// [api.Scheduler]'s. Each response is written as soon as the command is
// done.
type Conn struct {
	w      *Writer
	broker *api.UIBroker
	report func(error)

	reportOnce sync.Once

	// serving is the running Serve's scheduler (Drain), nil before it.
	serving atomic.Pointer[api.Scheduler]
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
		// Never echo a client's input back unbounded (take refuses a
		// longer id before it could come here).
		r.Command, r.Error = api.Clip(r.Command, api.ClipName), api.Clip(r.Error, api.ClipMessage)
		if len(r.ID) > api.MaxID {
			r.ID = nil
		}
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

// Drain returns once every command read so far has had its turn: its
// response written, a long one past its first step (api.Scheduler.Drain).
// Before Serve, and once Serve's context ends, it returns at once.
func (c *Conn) Drain() {
	if s := c.serving.Load(); s != nil {
		s.Drain()
	}
}

// Serve reads commands from in and answers them on the Conn's writer until
// in ends or ctx is cancelled. When in ends, the commands already read are
// still answered (every dialog then resolves as cancelled: nobody is left
// to answer one); then long commands still running are cancelled. When
// ctx ends, commands whose turn had not come go unanswered. Serve returns
// once every command that started has answered. A read error other than
// the end of input is returned.
//
// The goroutine reading in is released when in is closed or returns an
// error; Serve does not wait for it when ctx ends first (a blocked read of
// stdin cannot be interrupted; the process exits instead).
func (c *Conn) Serve(ctx context.Context, in RecordReader, srv api.Server) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // releases the reading goroutine
	sched := api.NewScheduler(ctx, maxQueuedCommands)
	c.serving.Store(sched)
	// On the way out: dialogs resolve as cancelled from now on, the
	// commands already read take their turn, then what still runs is
	// cancelled (api.ErrShutdown) and waited for.
	defer func() {
		c.broker.Shut()
		sched.Drain()
		sched.Close()
	}()

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

	// This loop only reads: commands run on the scheduler's goroutines, so
	// the answer to a dialog that a command waits on (an extension's
	// confirm during new_session) still gets through.
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
			c.take(sched, it.rec, srv)
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

// take handles one record on the reading goroutine: an
// extension_ui_response goes to the dialog waiting for it at once (a
// command may be that dialog's asker); anything else takes its place in
// the scheduler's order, a record that is no command included, so every
// answer comes in arrival order.
func (c *Conn) take(sched *api.Scheduler, rec []byte, srv api.Server) {
	var env envelope
	if err := json.Unmarshal(rec, &env); err != nil {
		msg := err.Error()
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			msg = "a command must be a JSON object, got " + te.Value
		}
		sched.Queue().Run(srv, c.failed(nil, commandParse, "Failed to parse command: "+msg))
		return
	}
	var name string
	if len(env.ID) > api.MaxID {
		// The answer would echo the id whole: refused, without it.
		command := commandParse
		if json.Unmarshal(env.Type, &name) == nil && name != "" {
			command = name
		}
		sched.Queue().Run(srv, c.failed(nil, command, "Failed to parse command: "+api.IDTooLong(len(env.ID)).Error()))
		return
	}
	if len(env.Type) == 0 || json.Unmarshal(env.Type, &name) != nil || name == "" {
		sched.Queue().Run(srv, c.failed(env.ID, commandParse, `Failed to parse command: field "type" must be a string naming the command`))
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
		sched.Queue().Run(srv, c.failed(env.ID, clipped, "Unknown command: "+clipped))
		return
	}
	sched.Queue().Run(srv, api.Command{Name: name, Params: rec, ID: env.ID, Reply: c.replier(env.ID, name)})
}

// failed is a record answered with an error in its turn.
func (c *Conn) failed(id json.RawMessage, command, text string) api.Command {
	return api.Command{Err: errors.New(text), Reply: c.replier(id, command)}
}

// replier writes a command's response.
func (c *Conn) replier(id json.RawMessage, command string) func(any, error) {
	return func(data any, err error) {
		if errors.Is(err, api.ErrNotStarted) {
			return // the connection ended before its turn: nobody hears an answer
		}
		resp := response{ID: id, Type: "response", Command: command, Success: err == nil}
		if err != nil {
			resp.Error = errorText(err)
		} else if data != api.NoData {
			resp.Data = data
		}
		_ = c.write(resp)
	}
}

// errorText is the message a client reads; it never ends in a newline.
func errorText(err error) string {
	return strings.TrimRight(err.Error(), "\n")
}
