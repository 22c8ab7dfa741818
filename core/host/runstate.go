package host

import (
	"context"
	"sync"

	"github.com/gopi-dev/gopi/core/agent"
)

// runPhase is where the prompt in progress stands (see runState).
type runPhase int

const (
	// runIdle: no prompt is in progress.
	runIdle runPhase = iota
	// runRunning: the agent is claimed for a run that has not delivered
	// its agent_end.
	runRunning
	// runSettling: a run delivered agent_end (or a prompt waits for a
	// compaction to end) and the drive decides what follows: a retry, a
	// compaction, a queued message, or the end. It is the one undecided
	// phase; settle waits it out.
	runSettling
	// runRetryWait: a failed reply waits to be tried again.
	runRetryWait
	// runCompacting: a compaction (automatic or manual) or a tree
	// navigation's summary holds the summary slot, or a compact command
	// has been accepted and not ended. It overlays the drive's phase.
	runCompacting
)

func (p runPhase) String() string {
	switch p {
	case runIdle:
		return "idle"
	case runRunning:
		return "running"
	case runSettling:
		return "settling"
	case runRetryWait:
		return "retry wait"
	case runCompacting:
		return "compacting"
	}
	return "unknown"
}

// runState owns the prompt in progress: its phase, which the drive
// (drive.go), the agent's events and the compactions change, and the
// cancels that abort interrupts. Every change closes the channel state
// returned, so a waiter selects on it instead of polling. Its lock is
// taken before the agent's (a run is claimed under it) and never with
// Host.mu.
type runState struct {
	mu sync.Mutex // guards the fields below
	// changed is closed at the next change; nil until someone waits.
	changed chan struct{}
	// phase is the drive's: idle, running, settling or retryWait.
	phase runPhase
	// done closes when the current drive has ended (after its
	// agent_settled); nil without a drive.
	done        chan struct{}
	retryCancel context.CancelFunc // cancels the retry's wait (runRetryWait)
	// summary aborts the work holding the summary slot (pi's
	// isCompacting): a compaction or a tree navigation's summary.
	summary func()
	// manual is the compact command accepted by StartCompact, until it
	// ends.
	manual *manualCompaction
	// waiting is a prompt accepted during a manual compaction, until its
	// run is claimed.
	waiting *waitingPrompt
}

// notify wakes every waiter; s.mu is held.
func (s *runState) notify() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// state is the phase now (runCompacting over the drive's phase), the
// current drive's done channel (nil without one) and a channel closed at
// the next change.
func (s *runState) state() (p runPhase, done, changed <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	p = s.phase
	if s.summary != nil || s.manual != nil {
		p = runCompacting
	}
	return p, s.done, s.changed
}

// await waits until ok holds for the phase and returns that phase; false
// when ctx ended first.
func (s *runState) await(ctx context.Context, ok func(runPhase) bool) (runPhase, bool) {
	for {
		p, _, changed := s.state()
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

// driving reports whether a prompt is in progress, whatever compaction
// runs beside it.
func (s *runState) driving() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase != runIdle
}

// compacting reports whether the summary slot is taken.
func (s *runState) compacting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.summary != nil
}

// beginDrive claims the agent with claim and, when that works, makes it
// the prompt in progress (runRunning) with a fresh done channel. It fails
// with agent.ErrBusy, without calling claim, while another prompt is in
// progress.
func (s *runState) beginDrive(claim func() (func(), error)) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != runIdle {
		return nil, agent.ErrBusy
	}
	run, err := claim()
	if err != nil {
		return nil, err
	}
	s.phase, s.done = runRunning, make(chan struct{})
	s.notify()
	return run, nil
}

// beginWaiting makes w, a prompt that waits for the manual compaction,
// the prompt in progress (runSettling under runCompacting). It fails with
// errStreaming while another prompt is in progress.
func (s *runState) beginWaiting(w *waitingPrompt) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != runIdle {
		return errStreaming
	}
	s.phase, s.done, s.waiting = runSettling, make(chan struct{}), w
	s.notify()
	return nil
}

// claimWaiting claims the run of w, the waiting prompt, under the lock,
// so an abort either marked w before or finds the run; aborted says it
// did the former.
func (s *runState) claimWaiting(w *waitingPrompt, claim func() (func(), error)) (run func(), aborted bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting == w {
		s.waiting = nil
	}
	if run, err = claim(); err != nil {
		return nil, false, err
	}
	s.phase = runRunning
	s.notify()
	return run, w.aborted, nil
}

// dropWaiting forgets w if it still waits.
func (s *runState) dropWaiting(w *waitingPrompt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting == w {
		s.waiting = nil
	}
}

// agentEvent follows the agent: agent_start (end false) makes the prompt
// runRunning, agent_end runSettling. Runs outside a drive do not move it.
func (s *runState) agentEvent(end bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase == runIdle {
		return
	}
	s.phase = runRunning
	if end {
		s.phase = runSettling
	}
	s.notify()
}

// endDrive makes the host idle and returns the ended drive's done
// channel, for the drive to close once it has told the client.
func (s *runState) endDrive() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	done := s.done
	s.phase, s.done = runIdle, nil
	s.notify()
	return done
}

// waitRetry enters runRetryWait; cancel ends the wait early.
func (s *runState) waitRetry(cancel context.CancelFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase, s.retryCancel = runRetryWait, cancel
	s.notify()
}

// retryOver leaves runRetryWait: the drive decides again.
func (s *runState) retryOver() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.retryCancel = nil
	if s.phase == runRetryWait {
		s.phase = runSettling
	}
	s.notify()
}

// cancelRetry ends a retry's wait, if one is under way.
func (s *runState) cancelRetry() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retryCancel != nil {
		s.retryCancel()
	}
}

// claimSummary takes the summary slot with abort as its cancel; false
// when it is taken.
func (s *runState) claimSummary(abort func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.summary != nil {
		return false
	}
	s.summary = abort
	s.notify()
	return true
}

// releaseSummary frees the summary slot.
func (s *runState) releaseSummary() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.summary = nil
	s.notify()
}

// registerManual records c, a compact command; false while a compaction
// runs or another is registered.
func (s *runState) registerManual(c *manualCompaction) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.manual != nil || s.summary != nil {
		return false
	}
	s.manual = c
	s.notify()
	return true
}

// endManual forgets the compact command.
func (s *runState) endManual() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.manual = nil
	s.notify()
}

// manualDone is the channel closed when the registered compact command
// ends, or nil.
func (s *runState) manualDone() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.manual == nil {
		return nil
	}
	return s.manual.done
}

// abort cancels what pauses the prompt (a retry's wait, a compaction, a
// compact command), marks a waiting prompt aborted, and returns the
// drive's done channel (nil without a drive).
func (s *runState) abort() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelPausesLocked()
	if s.manual != nil {
		s.manual.cancel()
	}
	if s.waiting != nil {
		s.waiting.aborted = true
	}
	return s.done
}

// cancelPauses cancels a retry's wait and the summary slot's work (the
// host closing).
func (s *runState) cancelPauses() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelPausesLocked()
}

func (s *runState) cancelPausesLocked() {
	if s.retryCancel != nil {
		s.retryCancel()
	}
	if s.summary != nil {
		s.summary()
	}
}
