package host

import (
	"sync"

	"github.com/gopi-dev/gopi/core/llm"
)

// heldMessages are messages that wait for a point of the run before they
// join the transcript: its end, a turn's end, or the next prompt.
type heldMessages struct {
	mu sync.Mutex // guards the fields below
	// bash are bash results recorded during a run, added to the
	// transcript before the next prompt so they never split a tool call
	// from its result.
	bash []*llm.BashExecutionMessage
	// custom are extension messages sent during a run with triggerTurn:
	// false, added to the session when the turn ends (as in pi: never
	// between a tool call and its result, and no turn of their own).
	custom []*llm.CustomMessage
	// nextTurn are extension messages (sendMessage with deliverAs
	// "nextTurn") that join the next prompt.
	nextTurn []llm.Message
}

// hold adds m to one of p's lists.
func hold[M llm.Message](p *heldMessages, list *[]M, m M) {
	p.mu.Lock()
	defer p.mu.Unlock()
	*list = append(*list, m)
}

// takeHeld empties one of p's lists and returns what it held.
func takeHeld[M llm.Message](p *heldMessages, list *[]M) []M {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := *list
	*list = nil
	return out
}

// customNow is a copy of the extension messages held for the turn's end.
func (p *heldMessages) customNow() []*llm.CustomMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*llm.CustomMessage(nil), p.custom...)
}

// customCount is how many extension messages wait for the turn's end.
func (p *heldMessages) customCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.custom)
}

// dropBash forgets the bash results held for a session that was replaced.
func (p *heldMessages) dropBash() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bash = nil
}
