package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gopi-dev/gopi/core/llm"
)

// Every test closes its Scheduler: no command's goroutine may outlive it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitLimit only guards against a hang; nothing waits for it to pass.
const waitLimit = 5 * time.Second

// outcome is one Reply.
type outcome struct {
	id   string
	data any
	err  error
}

// schedHarness queues commands on a Scheduler and collects their replies
// in the order they come.
type schedHarness struct {
	t       *testing.T
	s       *Scheduler
	srv     Server
	replies chan outcome
}

func newSchedHarness(t *testing.T, srv Server, maxWaiting int) *schedHarness {
	h := &schedHarness{t: t, s: NewScheduler(context.Background(), maxWaiting), srv: srv, replies: make(chan outcome, 100)}
	t.Cleanup(h.s.Close)
	return h
}

// run queues and runs one command; id names its reply.
func (h *schedHarness) run(id, name, params string) *Call {
	c := h.s.Queue()
	c.Run(h.srv, h.command(id, name, params))
	return c
}

func (h *schedHarness) command(id, name, params string) Command {
	return Command{Name: name, Params: json.RawMessage(params), ID: json.RawMessage(fmt.Sprintf("%q", id)),
		Reply: func(data any, err error) { h.replies <- outcome{id, data, err} }}
}

// next is the next reply.
func (h *schedHarness) next() outcome {
	h.t.Helper()
	select {
	case o := <-h.replies:
		return o
	case <-time.After(waitLimit):
		h.t.Fatal("timed out waiting for a reply")
	}
	return outcome{}
}

// none checks that no reply is waiting.
func (h *schedHarness) none(why string) {
	h.t.Helper()
	select {
	case o := <-h.replies:
		h.t.Fatalf("%s, yet %s was answered", why, o.id)
	case <-time.After(20 * time.Millisecond):
	}
}

// gated is a Server whose commands wait where a test says:
// set_session_name "hold" until release is closed (held is closed when it
// begins), bash's first step
// until bashStart is closed and its rest until bashEnd is (or its context
// ends). It logs what ran, in order.
type gated struct {
	recorder
	release, held, bashStart, bashEnd chan struct{}
	event                             func(string) // where a prompt's run "emits"

	mu  sync.Mutex
	log []string
}

func newGated() *gated {
	g := &gated{release: make(chan struct{}), held: make(chan struct{}), bashStart: make(chan struct{}), bashEnd: make(chan struct{})}
	close(g.bashStart)
	return g
}

func (g *gated) note(s string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.log = append(g.log, s)
}

func (g *gated) ran() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.log...)
}

func (g *gated) SetSessionName(_ context.Context, p NameParams) error {
	g.note(p.Name)
	if p.Name == "hold" {
		close(g.held)
		<-g.release
	}
	return nil
}

func (g *gated) GetState(context.Context) (State, error) {
	g.note("get_state")
	return State{SessionID: "s"}, nil
}

func (g *gated) Prompt(ctx context.Context, p PromptParams) (DispositionResult, error) {
	g.note("prompt")
	AfterResponse(ctx, func() { g.event("agent_start") })
	return DispositionResult{Disposition: DispositionStarted}, nil
}

var _ BashStarter = (*gated)(nil)

func (g *gated) StartBash(ctx context.Context, p BashParams) (func() (BashResult, error), error) {
	<-g.bashStart
	g.note("bash started")
	if got := string(CommandID(ctx)); got != `"b"` {
		return nil, fmt.Errorf("bash sees id %s", got)
	}
	return func() (BashResult, error) {
		select {
		case <-g.bashEnd:
			return BashResult{Output: p.Command}, nil
		case <-ctx.Done():
			return BashResult{Cancelled: true, Output: context.Cause(ctx).Error()}, nil
		}
	}, nil
}

// State commands run one at a time in arrival order, each after the one
// before has been answered.
func TestSchedulerRunsStateCommandsInArrivalOrder(t *testing.T) {
	g := newGated()
	h := newSchedHarness(t, g, 0)
	h.run("0", CmdSetSessionName, `{"name":"hold"}`)
	var want []string
	for i := 1; i <= 20; i++ {
		h.run(fmt.Sprint(i), CmdSetSessionName, fmt.Sprintf(`{"name":"%d"}`, i))
		want = append(want, fmt.Sprint(i))
	}
	h.none("the first command still runs")
	assert.Equal(t, []string{"hold"}, g.ran())
	close(g.release)
	for i := 0; i <= 20; i++ {
		o := h.next()
		require.Equal(t, fmt.Sprint(i), o.id)
		require.NoError(t, o.err)
		assert.Equal(t, NoData, o.data)
	}
	assert.Equal(t, append([]string{"hold"}, want...), g.ran())
}

// A long command takes its first step in arrival order and finishes
// alongside the commands after it.
func TestSchedulerLongCommandFinishesAlongsideLaterOnes(t *testing.T) {
	g := newGated()
	g.bashStart = make(chan struct{})
	h := newSchedHarness(t, g, 0)
	h.run("b", CmdBash, `{"command":"slow"}`)
	h.run("s", CmdGetState, ``)
	h.none("bash's first step waits")
	assert.Empty(t, g.ran(), "get_state waits for bash's first step")

	close(g.bashStart)
	o := h.next()
	require.Equal(t, "s", o.id, "get_state is answered while bash runs")
	assert.Equal(t, []string{"bash started", "get_state"}, g.ran())

	close(g.bashEnd)
	o = h.next()
	require.Equal(t, "b", o.id)
	require.NoError(t, o.err)
	assert.Equal(t, "slow", o.data.(BashResult).Output)
}

// A response is written before anything its command started emits, and
// the next command starts only after it, even when the dialect writes it
// after Reply returns (lspbridge: jsonrpc2 writes once the handler
// returns).
func TestSchedulerResponsePrecedesTheEventsOfItsWork(t *testing.T) {
	g := newGated()
	var mu sync.Mutex
	var wire []string
	put := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		wire = append(wire, s)
	}
	g.event = put
	h := newSchedHarness(t, g, 0)

	// Written at once (the native dialect).
	c := h.s.Queue()
	cmd := h.command("p1", CmdPrompt, `{"message":"hi"}`)
	reply := cmd.Reply
	cmd.Reply = func(data any, err error) { put("response p1"); reply(data, err) }
	c.Run(g, cmd)
	require.Equal(t, "p1", h.next().id)

	// Written later.
	c = h.s.Queue()
	cmd = h.command("p2", CmdPrompt, `{"message":"hi"}`)
	cmd.WrittenLater = true
	c.Run(g, cmd)
	h.run("s", CmdGetState, ``)
	require.Equal(t, "p2", h.next().id)
	h.none("p2's response is not written yet")
	mu.Lock()
	assert.Equal(t, []string{"response p1", "agent_start"}, wire, "p2's run has not started")
	mu.Unlock()
	put("response p2")
	c.Written()
	c.Written() // harmless
	require.Equal(t, "s", h.next().id)
	mu.Lock()
	assert.Equal(t, []string{"response p1", "agent_start", "response p2", "agent_start"}, wire)
	mu.Unlock()
}

// A command cancelled while it waits for its turn is answered at once
// and never runs; the commands behind it still wait for the ones before.
func TestSchedulerCancelBeforeStart(t *testing.T) {
	g := newGated()
	h := newSchedHarness(t, g, 0)
	h.run("hold", CmdSetSessionName, `{"name":"hold"}`)
	cancelled := h.run("x", CmdSetSessionName, `{"name":"x"}`)
	h.run("after", CmdSetSessionName, `{"name":"after"}`)
	cancelled.Cancel()
	o := h.next()
	require.Equal(t, "x", o.id)
	assert.ErrorIs(t, o.err, ErrNotStarted)
	assert.ErrorIs(t, o.err, context.Canceled)
	assert.EqualError(t, o.err, "set_session_name was cancelled before it started: context canceled")
	h.none("the first command still runs")

	close(g.release)
	assert.Equal(t, "hold", h.next().id)
	assert.Equal(t, "after", h.next().id)
	assert.Equal(t, []string{"hold", "after"}, g.ran())
}

// Close cancels what runs or waits, with ErrShutdown as the cause, and
// returns once everything is answered; Drain returns once everything
// queued has had its turn, while a long command still runs.
func TestSchedulerDrainAndClose(t *testing.T) {
	g := newGated()
	h := newSchedHarness(t, g, 0)
	h.run("b", CmdBash, `{"command":"slow"}`)
	h.run("s", CmdGetState, ``)
	h.s.Drain()
	assert.Equal(t, "s", h.next().id)

	h.run("hold", CmdSetSessionName, `{"name":"hold"}`)
	h.run("w", CmdGetState, ``)
	<-g.held
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		h.s.Close()
	}()
	got := map[string]outcome{}
	for range 2 {
		o := h.next()
		got[o.id] = o
	}
	assert.True(t, got["b"].data.(BashResult).Cancelled)
	assert.Equal(t, ErrShutdown.Error(), got["b"].data.(BashResult).Output, "the cause bash sees")
	assert.ErrorIs(t, got["w"].err, ErrNotStarted)
	assert.ErrorIs(t, got["w"].err, ErrShutdown)
	select {
	case <-closed:
		t.Fatal("Close returned while set_session_name still ran")
	case <-time.After(20 * time.Millisecond):
	}
	close(g.release)
	assert.Equal(t, "hold", h.next().id)
	select {
	case <-closed:
	case <-time.After(waitLimit):
		t.Fatal("Close did not return")
	}

	// After Close, a command is answered at once.
	h.run("late", CmdGetState, ``)
	o := h.next()
	assert.Equal(t, "late", o.id)
	assert.ErrorIs(t, o.err, ErrNotStarted)
}

// A panic in a handler becomes the command's error, and the commands
// after it run.
func TestSchedulerPanicBecomesAnError(t *testing.T) {
	h := newSchedHarness(t, &recorder{}, 0)
	h.run("1", CmdBash, `{"command":"ls"}`)
	h.run("2", CmdGetState, ``)
	// bash is long: its panic happens in the part that runs alongside
	// get_state, so the two answers may come in either order.
	got := map[string]outcome{}
	for range 2 {
		o := h.next()
		got[o.id] = o
	}
	assert.EqualError(t, got["1"].err, "internal error in bash: boom")
	assert.NoError(t, got["2"].err)
	assert.Contains(t, got, "2", "the connection goes on after the panic")
}

// A command the dialect could not decode keeps its place: its error is
// the answer, in its turn, and the Server never sees it.
func TestSchedulerAnswersUndecodedCommandsInTurn(t *testing.T) {
	g := newGated()
	h := newSchedHarness(t, g, 0)
	h.run("hold", CmdSetSessionName, `{"name":"hold"}`)
	c := h.s.Queue()
	bad := errors.New("Failed to parse command: oops")
	c.Run(g, Command{Err: bad, Reply: func(data any, err error) { h.replies <- outcome{"bad", data, err} }})
	h.none("the first command still runs")
	close(g.release)
	assert.Equal(t, "hold", h.next().id)
	o := h.next()
	assert.Equal(t, "bad", o.id)
	assert.Equal(t, bad, o.err)
	assert.Equal(t, []string{"hold"}, g.ran())
}

// With a bound, Queue waits while that many commands wait for their turn.
func TestSchedulerBoundsTheCommandsWaiting(t *testing.T) {
	g := newGated()
	h := newSchedHarness(t, g, 2)
	h.run("hold", CmdSetSessionName, `{"name":"hold"}`) // runs: not waiting
	h.run("1", CmdGetState, ``)
	h.run("2", CmdGetState, ``)
	queued := make(chan struct{})
	go func() {
		defer close(queued)
		h.run("3", CmdGetState, ``)
	}()
	select {
	case <-queued:
		t.Fatal("a third command was queued while two waited")
	case <-time.After(20 * time.Millisecond):
	}
	close(g.release)
	<-queued
	for _, id := range []string{"hold", "1", "2", "3"} {
		assert.Equal(t, id, h.next().id)
	}
}

// schedule runs one command through a Scheduler, as a dialect would, and
// returns its outcome.
func schedule(srv Server, name string, params json.RawMessage) (any, error) {
	s := NewScheduler(context.Background(), 0)
	defer s.Close()
	out := make(chan outcome, 1)
	s.Queue().Run(srv, Command{Name: name, Params: params, Reply: func(data any, err error) { out <- outcome{"", data, err} }})
	o := <-out
	return o.data, o.err
}

// queuer is a Server whose prompt is queued: it tells the command's
// dialect which message it queued.
type queuer struct {
	recorder
	msg llm.Message
}

func (q *queuer) Prompt(ctx context.Context, p PromptParams) (DispositionResult, error) {
	Queued(ctx, q.msg)
	return DispositionResult{Disposition: DispositionQueued}, nil
}

// A command's Queued hears the message its Server queued, before the
// reply; a command without one is not disturbed.
func TestSchedulerTellsTheQueuedMessage(t *testing.T) {
	q := &queuer{msg: llm.UserText("later")}
	s := NewScheduler(context.Background(), 0)
	defer s.Close()
	var got llm.Message
	done := make(chan struct{})
	s.Queue().Run(q, Command{Name: CmdPrompt, Params: json.RawMessage(`{"message":"later"}`),
		Queued: func(m llm.Message) { got = m },
		Reply:  func(any, error) { close(done) }})
	<-done
	assert.Same(t, q.msg, got, "the very message queued")

	done = make(chan struct{})
	s.Queue().Run(q, Command{Name: CmdPrompt, Params: json.RawMessage(`{"message":"again"}`), Reply: func(any, error) { close(done) }})
	<-done
}
