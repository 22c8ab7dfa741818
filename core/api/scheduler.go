package api

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/gopi-dev/gopi/core/llm"
)

// Scheduler owns the order in which one connection's commands run, for
// every dialect (architecture.md, "The scheduler"):
//
//   - State commands run one at a time, in arrival order; the next starts
//     once the previous one's response has been written, so set_model then
//     prompt behaves as written.
//   - Long commands (bash, compact, export_html, list_sessions) take their
//     first step in arrival order (a bash is registered, so an abort_bash
//     right behind it reaches it) and finish in a goroutine the Scheduler
//     owns, alongside the commands after them.
//   - A response is written before anything its command started emits
//     events: what a Server hands to [AfterResponse] runs once the dialect
//     reports the response written ([Call.Written]).
//
// A dialect calls [Scheduler.Queue] for each command on the goroutine that
// reads them, then [Call.Run] with the decoded command; it frames the
// reply and maps errors to its wire. [Scheduler.Close] cancels what is
// left, with [ErrShutdown] as the cause, and waits for it.
type Scheduler struct {
	ctx    context.Context // parent of every command's context
	cancel context.CancelCauseFunc
	// slots bounds the commands waiting for their turn; nil for no bound.
	slots chan struct{}

	mu     sync.Mutex      // guards last and closed, and orders work.Go before work.Wait
	last   <-chan struct{} // closed when the latest queued command has had its turn
	closed bool
	work   sync.WaitGroup // one goroutine per command run
}

// NewScheduler returns a Scheduler whose commands run under ctx. When
// maxWaiting is above 0, [Scheduler.Queue] waits while that many commands
// wait for their turn, so a client cannot read ahead without bound.
func NewScheduler(ctx context.Context, maxWaiting int) *Scheduler {
	ctx, cancel := context.WithCancelCause(ctx)
	first := make(chan struct{})
	close(first)
	s := &Scheduler{ctx: ctx, cancel: cancel, last: first}
	if maxWaiting > 0 {
		s.slots = make(chan struct{}, maxWaiting)
	}
	return s
}

// Command is one command as a dialect hands it to [Call.Run].
type Command struct {
	// Name is the command's type ("get_state"); Params its JSON object
	// (the whole native record will do: other fields are ignored).
	Name   string
	Params json.RawMessage
	// ID is the id the client gave the command, as JSON (nil for none);
	// events about the command repeat it ([CommandID]).
	ID json.RawMessage
	// Err, when set, answers the command in its turn without reaching
	// the Server: a record the dialect could not decode keeps its place.
	Err error

	// Reply receives the outcome, once, on a goroutine the Scheduler
	// owns: data is [NoData] for a command whose success carries none.
	// An error wrapping [ErrNotStarted] means the command never ran.
	Reply func(data any, err error)
	// WrittenLater says the response is not written by the time Reply
	// returns: the dialect calls [Call.Written] once it is. Without it,
	// Reply's return counts as the write.
	WrittenLater bool

	// Queued, when set, hears the message the command put in one of the
	// runtime's queues, before the run can take it ([Queued]): ACP tells
	// a queued prompt's turn by it.
	Queued func(msg llm.Message)

	// BeforeStart and AfterStart, when set, run in arrival order just
	// before the command's first step and once that step has succeeded
	// (a long command's rest then runs alongside later commands).
	BeforeStart, AfterStart func()
}

// A Call is one command's place in its Scheduler's order.
type Call struct {
	s    *Scheduler
	prev <-chan struct{} // closed when the command before has had its turn
	turn chan struct{}   // closed when this one has had its turn
	slot bool            // holds one of s.slots until its turn comes

	ctx    context.Context // the command's; carries its AfterResponse hooks
	cancel context.CancelCauseFunc
	sent   func() // runs the AfterResponse hooks

	written   chan struct{} // closed by Written
	writeOnce sync.Once
}

// Queue takes the next place in arrival order. Call it on the goroutine
// that reads commands, then [Call.Run] the command; a dialect whose
// params are not ready yet (lspbridge, until jsonrpc2.Async has copied
// them) may run it later from another goroutine.
func (s *Scheduler) Queue() *Call {
	c := &Call{s: s, turn: make(chan struct{}), written: make(chan struct{})}
	if s.slots != nil {
		select {
		case s.slots <- struct{}{}:
			c.slot = true
		case <-s.ctx.Done():
		}
	}
	ctx, cancel := context.WithCancelCause(s.ctx)
	c.ctx, c.sent = withAfterResponse(ctx)
	c.cancel = cancel
	s.mu.Lock()
	c.prev, s.last = s.last, c.turn
	s.mu.Unlock()
	return c
}

// Run runs cmd against srv in the place c holds; it returns at once, and
// cmd.Reply hears the outcome. Every queued Call is run exactly once: the
// commands behind it wait for its turn.
func (c *Call) Run(srv Server, cmd Command) {
	c.ctx = withQueued(withCommandID(c.ctx, cmd.ID), cmd.Queued)
	s := c.s
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.work.Go(func() { c.run(srv, cmd) })
	}
	s.mu.Unlock()
	if closed {
		c.release()
		c.reply(cmd, nil, c.notStarted(cmd.Name))
		c.cancel(nil)
		close(c.turn)
	}
}

// Written reports that the command's response is on the wire: the work it
// started may now emit events, and the next command may start. Calling it
// more than once is harmless.
func (c *Call) Written() {
	c.writeOnce.Do(func() {
		c.sent()
		close(c.written)
	})
}

// Cancel cancels the command's context (the cause is context.Canceled). A
// command still waiting for its turn is answered at once with an error
// wrapping [ErrNotStarted]; the commands behind it keep waiting for the
// ones before it.
func (c *Call) Cancel() { c.cancel(nil) }

// Drain returns once every command queued so far has had its turn: state
// commands answered, long ones past their first step. It returns early
// when the Scheduler's context ends.
func (s *Scheduler) Drain() {
	s.mu.Lock()
	last := s.last
	s.mu.Unlock()
	select {
	case <-last:
	case <-s.ctx.Done():
	}
}

// Close cancels every command still waiting or running, with [ErrShutdown]
// as the cause, and returns once each has been answered. Commands run
// after Close are answered at once with an error wrapping [ErrNotStarted].
func (s *Scheduler) Close() {
	s.cancel(ErrShutdown)
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.work.Wait()
}

// run waits for c's turn, then runs cmd.
func (c *Call) run(srv Server, cmd Command) {
	defer c.cancel(nil)
	select {
	case <-c.prev:
	case <-c.ctx.Done():
	}
	c.release()
	if c.ctx.Err() != nil {
		c.reply(cmd, nil, c.notStarted(cmd.Name))
		// The turn passes only once the command before has had its own,
		// so the commands behind this one still wait for that one.
		select {
		case <-c.prev:
		case <-c.s.ctx.Done():
		}
		close(c.turn)
		return
	}
	if cmd.Err != nil {
		c.reply(cmd, nil, cmd.Err)
		c.passWhenWritten()
		return
	}
	if cmd.BeforeStart != nil {
		cmd.BeforeStart()
	}
	finish, err := start(c.ctx, srv, cmd.Name, cmd.Params)
	if err != nil {
		c.reply(cmd, nil, err)
		c.passWhenWritten()
		return
	}
	if cmd.AfterStart != nil {
		cmd.AfterStart()
	}
	if kindOf(cmd.Name) == kindLong {
		close(c.turn) // later commands go on while this one finishes
		data, err := finish()
		c.reply(cmd, data, err)
		return
	}
	data, err := finish()
	c.reply(cmd, data, err)
	c.passWhenWritten()
}

// reply hands the outcome to the dialect; without WrittenLater, the
// response is written by the time Reply returns.
func (c *Call) reply(cmd Command, data any, err error) {
	cmd.Reply(data, err)
	if !cmd.WrittenLater {
		c.Written()
	}
}

// passWhenWritten lets the next command go once c's response is written
// (or the Scheduler is closing, when no response may ever be).
func (c *Call) passWhenWritten() {
	select {
	case <-c.written:
	case <-c.s.ctx.Done():
	}
	close(c.turn)
}

// release gives back c's slot among the waiting commands.
func (c *Call) release() {
	if c.slot {
		<-c.s.slots
		c.slot = false
	}
}

func (c *Call) notStarted(name string) error {
	return fmt.Errorf("%s was %w: %w", name, ErrNotStarted, context.Cause(c.ctx))
}
