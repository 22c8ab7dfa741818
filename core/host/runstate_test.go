package host

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
)

func claimed() (func(), error) { return func() {}, nil }

func phaseOf(s *runState) runPhase {
	p, _, _ := s.state()
	return p
}

// decided is settle's question: any phase but the one it waits out.
func decided(p runPhase) bool { return p != runSettling }

// awaitAsync runs s.await in a goroutine the test waits for.
func awaitAsync(t *testing.T, s *runState, ok func(runPhase) bool) <-chan runPhase {
	t.Helper()
	out := make(chan runPhase, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	go func() {
		defer cancel()
		p, done := s.await(ctx, ok)
		if !done {
			t.Errorf("await gave up in phase %v", p)
		}
		out <- p
	}()
	return out
}

// notYet fails if the waiter has returned: it must be asleep until the
// state changes, not decide on its own.
func notYet(t *testing.T, got <-chan runPhase) {
	t.Helper()
	select {
	case p := <-got:
		t.Fatalf("await returned %v before the change it waits for", p)
	case <-time.After(20 * time.Millisecond):
	}
}

// The moment after agent_end is undecided: a waiter sleeps through it and
// wakes when the drive ends (idle) or another run starts (running).
func TestRunStateSettlingWakesWaiters(t *testing.T) {
	var s runState
	if _, err := s.beginDrive(claimed); err != nil {
		t.Fatal(err)
	}
	if p := phaseOf(&s); p != runRunning {
		t.Fatalf("after the claim: %v, want running", p)
	}
	s.agentEvent(false)
	s.agentEvent(true)
	got := awaitAsync(t, &s, decided)
	notYet(t, got)
	s.agentEvent(false) // a continued run starts
	if p := <-got; p != runRunning {
		t.Fatalf("woke in %v, want running", p)
	}

	s.agentEvent(true)
	got = awaitAsync(t, &s, decided)
	notYet(t, got)
	done := s.endDrive()
	if p := <-got; p != runIdle {
		t.Fatalf("woke in %v, want idle", p)
	}
	close(done)
}

// A retry's wait and a compaction are decided phases, and compacting
// overlays whatever the drive is doing.
func TestRunStatePauses(t *testing.T) {
	var s runState
	_, _ = s.beginDrive(claimed)
	s.agentEvent(true)
	ctx, cancel := context.WithCancel(t.Context())
	s.waitRetry(cancel)
	if p := phaseOf(&s); p != runRetryWait {
		t.Fatalf("waiting to retry: %v", p)
	}
	if !s.claimSummary(func() {}) {
		t.Fatal("the summary slot was free")
	}
	if s.claimSummary(func() {}) {
		t.Fatal("the summary slot was taken twice")
	}
	if p := phaseOf(&s); p != runCompacting || !s.compacting() {
		t.Fatalf("with the summary slot taken: %v", p)
	}
	if done := s.abort(); done == nil {
		t.Fatal("abort gave no drive to wait for")
	}
	if ctx.Err() == nil {
		t.Fatal("abort left the retry's wait running")
	}
	s.releaseSummary()
	s.retryOver()
	if p := phaseOf(&s); p != runSettling {
		t.Fatalf("after the retry's wait: %v, want settling", p)
	}
	close(s.endDrive())
	if p := phaseOf(&s); p != runIdle || s.driving() {
		t.Fatalf("after the drive: %v", p)
	}
}

// One prompt at a time: a second claim fails without touching the agent.
func TestRunStateOneDrive(t *testing.T) {
	var s runState
	_, _ = s.beginDrive(claimed)
	called := false
	_, err := s.beginDrive(func() (func(), error) { called = true; return claimed() })
	if !errors.Is(err, agent.ErrBusy) || called {
		t.Fatalf("second drive: err %v, claim called %v", err, called)
	}
	if err := s.beginWaiting(&waitingPrompt{}); !errors.Is(err, errStreaming) {
		t.Fatalf("waiting prompt during a drive: %v", err)
	}
	close(s.endDrive())

	// A failed claim leaves the host idle.
	boom := errors.New("boom")
	if _, err := s.beginDrive(func() (func(), error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed claim: %v", err)
	}
	if s.driving() {
		t.Fatal("a failed claim left a drive")
	}
}

// A prompt accepted during a manual compaction counts as in progress at
// once, and an abort before its claim is reported by the claim.
func TestRunStateWaitingPrompt(t *testing.T) {
	var s runState
	c := &manualCompaction{done: make(chan struct{}), cancel: func() {}}
	if !s.registerManual(c) {
		t.Fatal("registering the compaction")
	}
	w := &waitingPrompt{}
	if err := s.beginWaiting(w); err != nil {
		t.Fatal(err)
	}
	if p := phaseOf(&s); p != runCompacting {
		t.Fatalf("prompt behind a compaction: %v", p)
	}
	_ = s.abort()
	s.endManual()
	if p := phaseOf(&s); p != runSettling {
		t.Fatalf("after the compaction: %v, want settling", p)
	}
	_, aborted, err := s.claimWaiting(w, claimed)
	if err != nil || !aborted {
		t.Fatalf("claim: aborted %v, err %v", aborted, err)
	}
	if p := phaseOf(&s); p != runRunning {
		t.Fatalf("after the claim: %v", p)
	}
	close(s.endDrive())
}

// A waiter gives up when its context ends.
func TestRunStateAwaitCancelled(t *testing.T) {
	var s runState
	_, _ = s.beginDrive(claimed)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, ok := s.await(ctx, func(p runPhase) bool { return p == runIdle }); ok {
		t.Fatal("await reported idle during a drive")
	}
	close(s.endDrive())
}
