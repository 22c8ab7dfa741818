package host

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every call returns after a pass that saw the state as it was at the
// call, and no two passes overlap.
func TestPassesSeeTheStateOfTheirCall(t *testing.T) {
	var (
		p       passes
		state   atomic.Int64 // what the callers change
		seen    atomic.Int64 // what the last pass read
		inside  atomic.Int32
		overlap atomic.Bool
		wg      sync.WaitGroup
	)
	for i := range 64 {
		wg.Go(func() {
			state.Add(1)
			want := state.Load()
			p.run(func() {
				if inside.Add(1) > 1 {
					overlap.Store(true)
				}
				v := state.Load()
				runtime.Gosched() // another pass, if one could run now, would
				seen.Store(v)
				inside.Add(-1)
			})
			assert.GreaterOrEqual(t, seen.Load(), want, "call %d returned before a pass saw its change", i)
		})
	}
	wg.Wait()
	assert.False(t, overlap.Load(), "two passes ran at once")
	assert.Equal(t, state.Load(), seen.Load())
}
