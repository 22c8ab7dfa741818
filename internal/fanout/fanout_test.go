package fanout

import (
	"slices"
	"sync"
	"testing"
)

func TestEmitInSubscriptionOrder(t *testing.T) {
	var o Fanout[int]
	var got []string
	o.Subscribe(func(v int) { got = append(got, "a") })
	unsubB := o.Subscribe(func(v int) { got = append(got, "b") })
	o.Subscribe(func(v int) { got = append(got, "c") })
	o.Emit(1)
	unsubB()
	unsubB() // a second call is harmless
	o.Emit(2)
	want := []string{"a", "b", "c", "a", "c"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if n := o.Len(); n != 2 {
		t.Fatalf("Len = %d, want 2", n)
	}
}

// A subscriber may change the set from inside Emit; the change applies to
// the next value, and nothing deadlocks.
func TestSubscribeDuringEmit(t *testing.T) {
	var o Fanout[int]
	var got []int
	var unsub func()
	unsub = o.Subscribe(func(v int) {
		got = append(got, v)
		unsub()
		o.Subscribe(func(v int) { got = append(got, 10*v) })
	})
	o.Emit(1)
	o.Emit(2)
	if want := []int{1, 20}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Emit and Subscribe from many goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	var o Fanout[int]
	var mu sync.Mutex
	n := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			unsub := o.Subscribe(func(int) { mu.Lock(); n++; mu.Unlock() })
			for i := range 100 {
				o.Emit(i)
			}
			unsub()
		})
	}
	wg.Wait()
	if o.Len() != 0 {
		t.Fatalf("Len = %d after every unsubscribe", o.Len())
	}
	if n < 8*100 {
		t.Fatalf("%d deliveries, want at least %d (each subscriber sees its own emits)", n, 8*100)
	}
}

// Emit is on every streamed delta's path.
func BenchmarkEmit(b *testing.B) {
	var o Fanout[int]
	sum := 0
	for range 3 {
		o.Subscribe(func(v int) { sum += v })
	}
	b.ReportAllocs()
	for b.Loop() {
		o.Emit(1)
	}
}

func TestEmitDoesNotAllocate(t *testing.T) {
	var o Fanout[int]
	o.Subscribe(func(int) {})
	if allocs := testing.AllocsPerRun(100, func() { o.Emit(1) }); allocs != 0 {
		t.Fatalf("Emit allocates %v times", allocs)
	}
}
