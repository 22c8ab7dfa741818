package host

import "sync"

// passes runs a recomputation so that it is never run twice at once and
// every call returns only once a pass that started after it has ended:
// the result then reflects everything that happened before the call.
// Calls that arrive while a pass runs share the next one. Without it two
// concurrent recomputations could finish in the wrong order, the one
// that read the older state last (two MCP servers connecting at once
// left tool_search out of the tools).
type passes struct {
	mu   sync.Mutex // guards the fields below
	cond *sync.Cond // signalled when a pass ends; made on first use
	// running is set while a pass runs; asked counts the calls so far,
	// done is the count the last finished pass covered.
	running     bool
	asked, done uint64
}

// run calls f, or waits for a pass of it that started after this call.
// f must not call run of the same passes.
func (p *passes) run(f func()) {
	p.mu.Lock()
	if p.cond == nil {
		p.cond = sync.NewCond(&p.mu)
	}
	p.asked++
	mine := p.asked
	for p.running && p.done < mine {
		p.cond.Wait()
	}
	if p.done >= mine {
		p.mu.Unlock()
		return
	}
	p.running = true
	covers := p.asked
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.running = false
		p.done = covers
		p.cond.Broadcast()
		p.mu.Unlock()
	}()
	f()
}
