package run

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
)

func claimed() (func(), error) { return func() {}, nil }

func phaseOf(s *State) Phase {
	p, _, _ := s.Now()
	return p
}

// decided is settle's question: any phase but the one it waits out.
func decided(p Phase) bool { return p != Settling }

// awaitAsync runs s.await in a goroutine the test waits for.
func awaitAsync(t *testing.T, s *State, ok func(Phase) bool) <-chan Phase {
	t.Helper()
	out := make(chan Phase, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	go func() {
		defer cancel()
		p, done := s.Await(ctx, ok)
		if !done {
			t.Errorf("await gave up in phase %v", p)
		}
		out <- p
	}()
	return out
}

// notYet fails if the waiter has returned: it must be asleep until the
// Now changes, not decide on its own.
func notYet(t *testing.T, got <-chan Phase) {
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
	var s State
	if _, err := s.BeginDrive(claimed); err != nil {
		t.Fatal(err)
	}
	if p := phaseOf(&s); p != Running {
		t.Fatalf("after the claim: %v, want running", p)
	}
	s.AgentEvent(false)
	s.AgentEvent(true)
	got := awaitAsync(t, &s, decided)
	notYet(t, got)
	s.AgentEvent(false) // a continued run starts
	if p := <-got; p != Running {
		t.Fatalf("woke in %v, want running", p)
	}

	s.AgentEvent(true)
	got = awaitAsync(t, &s, decided)
	notYet(t, got)
	done := s.EndDrive()
	if p := <-got; p != Idle {
		t.Fatalf("woke in %v, want idle", p)
	}
	close(done)
}

// A retry's wait and a compaction are decided phases, and compacting
// overlays whatever the drive is doing.
func TestRunStatePauses(t *testing.T) {
	var s State
	_, _ = s.BeginDrive(claimed)
	s.AgentEvent(true)
	ctx, cancel := context.WithCancel(t.Context())
	s.WaitRetry(cancel)
	if p := phaseOf(&s); p != RetryWait {
		t.Fatalf("waiting to retry: %v", p)
	}
	if !s.ClaimSummary(func() {}) {
		t.Fatal("the summary slot was free")
	}
	if s.ClaimSummary(func() {}) {
		t.Fatal("the summary slot was taken twice")
	}
	if p := phaseOf(&s); p != Compacting || !s.Compacting() {
		t.Fatalf("with the summary slot taken: %v", p)
	}
	if done := s.Abort(); done == nil {
		t.Fatal("abort gave no drive to wait for")
	}
	if ctx.Err() == nil {
		t.Fatal("abort left the retry's wait running")
	}
	s.ReleaseSummary()
	s.RetryOver()
	if p := phaseOf(&s); p != Settling {
		t.Fatalf("after the retry's wait: %v, want settling", p)
	}
	close(s.EndDrive())
	if p := phaseOf(&s); p != Idle || s.Driving() {
		t.Fatalf("after the drive: %v", p)
	}
}

// One prompt at a time: a second claim fails without touching the agent.
func TestRunStateOneDrive(t *testing.T) {
	var s State
	_, _ = s.BeginDrive(claimed)
	called := false
	_, err := s.BeginDrive(func() (func(), error) { called = true; return claimed() })
	if !errors.Is(err, agent.ErrBusy) || called {
		t.Fatalf("second drive: err %v, claim called %v", err, called)
	}
	if err := s.BeginWaiting(&WaitingPrompt{}); !errors.Is(err, ErrStreaming) {
		t.Fatalf("waiting prompt during a drive: %v", err)
	}
	close(s.EndDrive())

	// A failed claim leaves the host idle.
	boom := errors.New("boom")
	if _, err := s.BeginDrive(func() (func(), error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed claim: %v", err)
	}
	if s.Driving() {
		t.Fatal("a failed claim left a drive")
	}
}

// A prompt accepted during a manual compaction counts as in progress at
// once, and an abort before its claim is reported by the claim.
func TestRunStateWaitingPrompt(t *testing.T) {
	var s State
	c := &ManualCompaction{Done: make(chan struct{}), Cancel: func() {}}
	if !s.RegisterManual(c) {
		t.Fatal("registering the compaction")
	}
	w := &WaitingPrompt{}
	if err := s.BeginWaiting(w); err != nil {
		t.Fatal(err)
	}
	if p := phaseOf(&s); p != Compacting {
		t.Fatalf("prompt behind a compaction: %v", p)
	}
	_ = s.Abort()
	s.EndManual()
	if p := phaseOf(&s); p != Settling {
		t.Fatalf("after the compaction: %v, want settling", p)
	}
	_, aborted, err := s.ClaimWaiting(w, claimed)
	if err != nil || !aborted {
		t.Fatalf("claim: aborted %v, err %v", aborted, err)
	}
	if p := phaseOf(&s); p != Running {
		t.Fatalf("after the claim: %v", p)
	}
	close(s.EndDrive())
}

// A waiter gives up when its context ends.
func TestRunStateAwaitCancelled(t *testing.T) {
	var s State
	_, _ = s.BeginDrive(claimed)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, ok := s.Await(ctx, func(p Phase) bool { return p == Idle }); ok {
		t.Fatal("await reported idle during a drive")
	}
	close(s.EndDrive())
}
