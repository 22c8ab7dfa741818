// Package fanout hands each value to every subscriber, in subscription
// order. Emit reads an immutable snapshot of the subscribers, so it takes
// no lock while it calls them and a subscriber may subscribe or
// unsubscribe from inside its call. Start at [Fanout].
package fanout

import "sync"

// Fanout is a set of subscribers to values of type T. The zero value is
// ready to use; it must not be copied after first use.
type Fanout[T any] struct {
	mu   sync.Mutex // guards subs
	subs []*sub[T]  // in subscription order; replaced on change, never modified
}

// sub is one subscription; its identity is what Subscribe's returned func
// removes.
type sub[T any] struct{ f func(T) }

// Subscribe adds f for every later value; the returned func removes it
// and may be called more than once.
func (o *Fanout[T]) Subscribe(f func(T)) (unsubscribe func()) {
	s := &sub[T]{f: f}
	o.mu.Lock()
	next := make([]*sub[T], len(o.subs), len(o.subs)+1)
	copy(next, o.subs)
	o.subs = append(next, s)
	o.mu.Unlock()
	return func() { o.remove(s) }
}

func (o *Fanout[T]) remove(s *sub[T]) {
	o.mu.Lock()
	defer o.mu.Unlock()
	next := make([]*sub[T], 0, len(o.subs))
	for _, x := range o.subs {
		if x != s {
			next = append(next, x)
		}
	}
	o.subs = next
}

// Emit calls every subscriber with v, in subscription order, on the
// caller's goroutine. A subscriber added or removed during Emit takes
// effect from the next value.
func (o *Fanout[T]) Emit(v T) {
	o.mu.Lock()
	subs := o.subs
	o.mu.Unlock()
	for _, s := range subs {
		s.f(v)
	}
}

// Len is how many subscribers there are now.
func (o *Fanout[T]) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.subs)
}
