package ext

// This file owns the ordered queue that delivers the host's queued
// notifications one at a time, in order, without blocking the read loop.

import (
	"context"
	"encoding/json"
	"sync"
)

// orderedQueue delivers notifications one at a time, in order, without
// ever blocking the one who pushes.
type orderedQueue struct {
	mu        sync.Mutex
	cond      *sync.Cond
	items     []queued
	closed    bool
	pushed    int // items ever pushed
	delivered int // items ever delivered
}

type queued struct {
	method Method
	params json.RawMessage
}

func newOrderedQueue() *orderedQueue {
	q := &orderedQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *orderedQueue) push(method Method, params json.RawMessage) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.items = append(q.items, queued{method, params})
	q.pushed++
	q.cond.Broadcast()
}

// count is how many items have been pushed.
func (q *orderedQueue) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pushed
}

// waitFor waits until the first n items have been delivered; false if
// the queue closed or ctx ended first.
func (q *orderedQueue) waitFor(ctx context.Context, n int) bool {
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		q.cond.Broadcast()
		q.mu.Unlock()
	})
	defer stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.delivered < n {
		if q.closed || ctx.Err() != nil {
			return false
		}
		q.cond.Wait()
	}
	return true
}

func (q *orderedQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// run delivers until the queue is closed and drained.
func (q *orderedQueue) run(deliver func(Method, json.RawMessage)) {
	for {
		q.mu.Lock()
		for len(q.items) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.items) == 0 {
			q.mu.Unlock()
			return
		}
		it := q.items[0]
		q.items[0] = queued{}
		q.items = q.items[1:]
		q.mu.Unlock()
		deliver(it.method, it.params)
		q.mu.Lock()
		q.delivered++
		q.cond.Broadcast()
		q.mu.Unlock()
	}
}
