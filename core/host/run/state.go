package run

import (
	"context"
	"sync"

	"github.com/gopi-dev/gopi/core/agent"
)

// Phase is where the prompt in progress stands (see State).
type Phase int

const (
	// Idle: no prompt is in progress.
	Idle Phase = iota
	// Running: the agent is claimed for a run that has not delivered
	// its agent_end.
	Running
	// Settling: a run delivered agent_end (or a prompt waits for a
	// compaction to end) and the drive decides what follows: a retry, a
	// compaction, a queued message, or the end. It is the one undecided
	// phase; settle waits it out.
	Settling
	// RetryWait: a failed reply waits to be tried again.
	RetryWait
	// Compacting: a compaction (automatic or manual) or a tree
	// navigation's summary holds the summary slot, or a compact command
	// has been accepted and not ended. It overlays the drive's phase.
	Compacting
)

func (p Phase) String() string {
	switch p {
	case Idle:
		return "idle"
	case Running:
		return "running"
	case Settling:
		return "settling"
	case RetryWait:
		return "retry wait"
	case Compacting:
		return "compacting"
	}
	return "unknown"
}

// State owns the prompt in progress: its phase, which the drive
// ([Run.Drive]), the agent's events and the compactions change, and the
// cancels that abort interrupts. Every change closes the channel Now
// returned, so a waiter selects on it instead of polling. Its lock is
// taken before the agent's (a run is claimed under it) and never with
// Host.mu.
type State struct {
	mu sync.Mutex // guards the fields below
	// changed is closed at the next change; nil until someone waits.
	changed chan struct{}
	// phase is the drive's: idle, running, settling or retryWait.
	phase Phase
	// done closes when the current drive has ended (after its
	// agent_settled); nil without a drive.
	done        chan struct{}
	retryCancel context.CancelFunc // cancels the retry's wait (RetryWait)
	// summary aborts the work holding the summary slot (pi's
	// isCompacting): a compaction or a tree navigation's summary.
	summary func()
	// manual is the compact command accepted by StartCompact, until it
	// ends.
	manual *ManualCompaction
	// waiting is a prompt accepted during a manual compaction, until its
	// run is claimed.
	waiting *WaitingPrompt
}

// notify wakes every waiter; s.mu is held.
func (s *State) notify() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// Now is the phase now (Compacting over the drive's phase), the
// current drive's done channel (nil without one) and a channel closed at
// the next change.
func (s *State) Now() (p Phase, done, changed <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	p = s.phase
	if s.summary != nil || s.manual != nil {
		p = Compacting
	}
	return p, s.done, s.changed
}

// Await waits until ok holds for the phase and returns that phase; false
// when ctx ended first.
func (s *State) Await(ctx context.Context, ok func(Phase) bool) (Phase, bool) {
	for {
		p, _, changed := s.Now()
		if ok(p) {
			return p, true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return p, false
		}
	}
}

// Settle reports whether a prompt is in progress: streaming, waiting to
// retry or compacting. It first waits out Settling, the moment after a
// run's agent_end while the agent winds down and the drive decides there
// is nothing more to do: a client that has seen agent_end may prompt at
// once. ctx ending counts as in progress.
func (s *State) Settle(ctx context.Context) bool {
	p, ok := s.Await(ctx, func(p Phase) bool { return p != Settling })
	return !ok || p != Idle
}

// Driving reports whether a prompt is in progress, whatever compaction
// runs beside it.
func (s *State) Driving() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase != Idle
}

// Compacting reports whether the summary slot is taken.
func (s *State) Compacting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.summary != nil
}

// BeginDrive claims the agent with claim and, when that works, makes it
// the prompt in progress (Running) with a fresh done channel. It fails
// with agent.ErrBusy, without calling claim, while another prompt is in
// progress.
func (s *State) BeginDrive(claim func() (func(), error)) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != Idle {
		return nil, agent.ErrBusy
	}
	run, err := claim()
	if err != nil {
		return nil, err
	}
	s.phase, s.done = Running, make(chan struct{})
	s.notify()
	return run, nil
}

// BeginWaiting makes w, a prompt that waits for the manual compaction,
// the prompt in progress (Settling under Compacting). It fails with
// ErrStreaming while another prompt is in progress.
func (s *State) BeginWaiting(w *WaitingPrompt) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != Idle {
		return ErrStreaming
	}
	s.phase, s.done, s.waiting = Settling, make(chan struct{}), w
	s.notify()
	return nil
}

// ClaimWaiting claims the run of w, the waiting prompt, under the lock,
// so an abort either marked w before or finds the run; aborted says it
// did the former.
func (s *State) ClaimWaiting(w *WaitingPrompt, claim func() (func(), error)) (run func(), aborted bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting == w {
		s.waiting = nil
	}
	if run, err = claim(); err != nil {
		return nil, false, err
	}
	s.phase = Running
	s.notify()
	return run, w.aborted, nil
}

// DropWaiting forgets w if it still waits.
func (s *State) DropWaiting(w *WaitingPrompt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting == w {
		s.waiting = nil
	}
}

// AgentEvent follows the agent: agent_start (end false) makes the prompt
// Running, agent_end Settling. Runs outside a drive do not move it.
func (s *State) AgentEvent(end bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase == Idle {
		return
	}
	s.phase = Running
	if end {
		s.phase = Settling
	}
	s.notify()
}

// EndDrive makes the host idle and returns the ended drive's done
// channel, for the drive to close once it has told the client.
func (s *State) EndDrive() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	done := s.done
	s.phase, s.done = Idle, nil
	s.notify()
	return done
}

// WaitRetry enters RetryWait; cancel ends the wait early.
func (s *State) WaitRetry(cancel context.CancelFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase, s.retryCancel = RetryWait, cancel
	s.notify()
}

// RetryOver leaves RetryWait: the drive decides again.
func (s *State) RetryOver() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.retryCancel = nil
	if s.phase == RetryWait {
		s.phase = Settling
	}
	s.notify()
}

// CancelRetry ends a retry's wait, if one is under way.
func (s *State) CancelRetry() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retryCancel != nil {
		s.retryCancel()
	}
}

// ClaimSummary takes the summary slot with abort as its cancel; false
// when it is taken.
func (s *State) ClaimSummary(abort func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.summary != nil {
		return false
	}
	s.summary = abort
	s.notify()
	return true
}

// ReleaseSummary frees the summary slot.
func (s *State) ReleaseSummary() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.summary = nil
	s.notify()
}

// RegisterManual records c, a compact command; false while a compaction
// runs or another is registered.
func (s *State) RegisterManual(c *ManualCompaction) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.manual != nil || s.summary != nil {
		return false
	}
	s.manual = c
	s.notify()
	return true
}

// EndManual forgets the compact command.
func (s *State) EndManual() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.manual = nil
	s.notify()
}

// ManualDone is the channel closed when the registered compact command
// ends, or nil.
func (s *State) ManualDone() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.manual == nil {
		return nil
	}
	return s.manual.Done
}

// Abort cancels what pauses the prompt (a retry's wait, a compaction, a
// compact command), marks a waiting prompt aborted, and returns the
// drive's done channel (nil without a drive).
func (s *State) Abort() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelPausesLocked()
	if s.manual != nil {
		s.manual.Cancel()
	}
	if s.waiting != nil {
		s.waiting.aborted = true
	}
	return s.done
}

// CancelPauses cancels a retry's wait and the summary slot's work (the
// host closing).
func (s *State) CancelPauses() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelPausesLocked()
}

func (s *State) cancelPausesLocked() {
	if s.retryCancel != nil {
		s.retryCancel()
	}
	if s.summary != nil {
		s.summary()
	}
}

// ManualCompaction is a compact command from its start step to its end.
type ManualCompaction struct {
	Done   chan struct{} // closed when the compaction has ended
	Cancel func()        // aborts it
}

// WaitingPrompt is a prompt that waits for a manual compaction to end.
type WaitingPrompt struct {
	aborted bool // an abort arrived while it waited; guarded by State.mu
}
