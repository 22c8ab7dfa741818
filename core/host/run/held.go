package run

import (
	"sync"

	"github.com/gopi-dev/gopi/core/llm"
)

// Held are messages that wait for a point of the run before they join the
// transcript: its end, a turn's end, or the next prompt.
type Held struct {
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
func hold[M llm.Message](p *Held, list *[]M, m M) {
	p.mu.Lock()
	defer p.mu.Unlock()
	*list = append(*list, m)
}

// take empties one of p's lists and returns what it held.
func take[M llm.Message](p *Held, list *[]M) []M {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := *list
	*list = nil
	return out
}

// HoldBash keeps a bash result recorded during a run for the next prompt.
func (p *Held) HoldBash(m *llm.BashExecutionMessage) { hold(p, &p.bash, m) }

// TakeBash empties the bash results held and returns them.
func (p *Held) TakeBash() []*llm.BashExecutionMessage { return take(p, &p.bash) }

// DropBash forgets the bash results held for a session that was replaced.
func (p *Held) DropBash() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bash = nil
}

// HoldCustom keeps an extension message for the turn's end.
func (p *Held) HoldCustom(m *llm.CustomMessage) { hold(p, &p.custom, m) }

// TakeCustom empties the extension messages held for the turn's end and
// returns them.
func (p *Held) TakeCustom() []*llm.CustomMessage { return take(p, &p.custom) }

// CustomNow is a copy of the extension messages held for the turn's end.
func (p *Held) CustomNow() []*llm.CustomMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*llm.CustomMessage(nil), p.custom...)
}

// CustomCount is how many extension messages wait for the turn's end.
func (p *Held) CustomCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.custom)
}

// HoldNextTurn keeps an extension message for the next prompt.
func (p *Held) HoldNextTurn(m llm.Message) { hold(p, &p.nextTurn, m) }

// TakeNextTurn empties the messages held for the next prompt and returns
// them.
func (p *Held) TakeNextTurn() []llm.Message { return take(p, &p.nextTurn) }
