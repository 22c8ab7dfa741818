package codemode

import (
	"context"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
)

// DefaultMaxWorkers is how many scripts may run at once in one process,
// across all its sessions, as pi allows; PI_CODEMODE_MAX_WORKERS (a
// positive integer, read for each script) changes it.
const DefaultMaxWorkers = 2

// workerWait bounds a script's wait for a free worker: past it the script
// fails without running (pi's 60 seconds). A variable for the tests.
var workerWait = 60 * time.Second

// maxWorkers is PI_CODEMODE_MAX_WORKERS when it is a positive integer,
// else [DefaultMaxWorkers].
func maxWorkers() int {
	if n, err := strconv.Atoi(os.Getenv("PI_CODEMODE_MAX_WORKERS")); err == nil && n > 0 {
		return n
	}
	return DefaultMaxWorkers
}

// workerSlots are the process's workers: a script takes one before it
// runs and gives it back when its VM is gone; at capacity, scripts wait
// in arrival order.
type workerSlots struct {
	mu     sync.Mutex // guards active and queue
	active int
	// queue are the waiting scripts, first come first; each channel is
	// closed when its script is given a slot.
	queue []chan struct{}
}

// workers are this process's.
var workers = &workerSlots{}

// waitOutcome is how a script's wait for a worker ended.
type waitOutcome int

const (
	slotTaken   waitOutcome = iota
	waitEnded               // ctx ended: the script's deadline or its abort
	waitTooLong             // no worker within workerWait
)

// acquire waits for a slot until ctx ends or wait passes; with
// slotTaken, the caller gives the slot back with release.
func (w *workerSlots) acquire(ctx context.Context, wait time.Duration) waitOutcome {
	if ctx.Err() != nil {
		return waitEnded
	}
	granted := make(chan struct{})
	w.mu.Lock()
	w.queue = append(w.queue, granted)
	w.admit()
	w.mu.Unlock()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	var out waitOutcome
	select {
	case <-granted:
		return slotTaken
	case <-ctx.Done():
		out = waitEnded
	case <-timer.C:
		out = waitTooLong
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if i := slices.Index(w.queue, granted); i >= 0 {
		w.queue = slices.Delete(w.queue, i, i+1)
		return out
	}
	// Given a slot as the wait ended: hand it on.
	w.active--
	w.admit()
	return out
}

// release gives a slot back to the next script waiting.
func (w *workerSlots) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.active--
	w.admit()
}

// admit gives free slots to the waiting scripts in arrival order.
func (w *workerSlots) admit() {
	for len(w.queue) > 0 && w.active < maxWorkers() {
		w.active++
		close(w.queue[0])
		w.queue = w.queue[1:]
	}
}
