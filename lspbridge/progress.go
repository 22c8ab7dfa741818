package lspbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
)

const (
	methodProgressCreate = "window/workDoneProgress/create"
	methodProgress       = "$/progress"
	// progressTitle heads every progress the bridge shows.
	progressTitle = "gopi"
	// createTimeout bounds the wait for a client to accept a token.
	createTimeout = 10 * time.Second
)

// progress turns the runtime's events into LSP work-done progress for
// clients that declared window.workDoneProgress: begin when a run (or a
// compaction or retry outside one) starts, a report for each tool call,
// compaction and retry, end with agent_end. Events arrive on the agent's
// goroutine, which must not wait for the client, so observe only queues
// steps; a worker the bridge owns creates tokens and sends them in order.
type progress struct {
	b *Bridge

	mu      sync.Mutex // guards the fields below
	steps   []step
	active  string // token of the open progress, "" when none
	ownedBy string // what opened the active progress: "run", "compaction", "retry"
	n       int    // tokens handed out
	stopped bool

	wake chan struct{} // a step was queued (capacity 1)
	quit chan struct{}
	done chan struct{}
}

type stepKind int

const (
	stepBegin stepKind = iota
	stepReport
	stepEnd
)

type step struct {
	kind    stepKind
	token   string
	message string
}

func newProgress(b *Bridge) *progress {
	p := &progress{b: b, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go p.work()
	return p
}

func (p *progress) enabled() bool {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	return p.b.caps.progress
}

// observe maps one event onto progress steps; the bridge calls it only
// for clients that declared window.workDoneProgress.
func (p *progress) observe(ev api.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := ev.(type) {
	case agent.Event:
		p.agentEvent(e)
	case *agent.Event:
		p.agentEvent(*e)
	case api.AutoCompactionStart:
		msg := "Compacting context"
		if e.Reason == "overflow" {
			msg = "Context overflow: compacting"
		}
		if p.active == "" {
			p.begin("compaction", msg)
		} else {
			p.push(stepReport, p.active, msg)
		}
	case api.AutoCompactionEnd:
		// An overflow compaction that will retry keeps the progress open
		// for the run it continues.
		if p.ownedBy == "compaction" && !e.WillRetry {
			p.end("")
		}
	case api.AutoRetryStart:
		msg := fmt.Sprintf("Retrying in %s (attempt %d of %d): %s", time.Duration(e.DelayMs)*time.Millisecond, e.Attempt, e.MaxAttempts, oneLine(e.ErrorMessage, 120))
		if p.active == "" {
			p.begin("retry", msg)
		} else {
			p.push(stepReport, p.active, msg)
		}
	case api.AutoRetryEnd:
		if !e.Success && p.active != "" {
			p.end(oneLine(e.FinalError, 120))
		}
	case api.AgentSettled:
		// The prompt is over: no retry, compaction or queued message
		// continues it (pi 1.5). The progress spans all of that.
		if p.active != "" {
			msg := ""
			if e.Aborted {
				msg = "Aborted"
			}
			p.end(msg)
		}
	}
}

func (p *progress) agentEvent(e agent.Event) {
	switch e.Type {
	case agent.EventAgentStart:
		if p.active == "" {
			p.begin("run", "Working")
		} else {
			p.ownedBy = "run"
		}
	case agent.EventToolExecutionStart:
		if p.active != "" {
			p.push(stepReport, p.active, agent.Summary(e.ToolName, e.Args, 80))
		}
	}
}

// begin opens a progress; p.mu is held.
func (p *progress) begin(owner, msg string) {
	p.n++
	p.active = fmt.Sprintf("gopi-%d", p.n)
	p.ownedBy = owner
	p.push(stepBegin, p.active, msg)
}

// end closes the open progress; p.mu is held.
func (p *progress) end(msg string) {
	p.push(stepEnd, p.active, msg)
	p.active, p.ownedBy = "", ""
}

func (p *progress) push(kind stepKind, token, msg string) {
	if p.stopped {
		return
	}
	p.steps = append(p.steps, step{kind, token, msg})
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// manual shows a progress for a command's own work (pi/compact) and
// returns the function that ends it.
func (p *progress) manual(msg string) func() {
	if !p.enabled() {
		return func() {}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	token := fmt.Sprintf("gopi-%d", p.n)
	p.push(stepBegin, token, msg)
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.push(stepEnd, token, "")
	}
}

// isRunToken reports whether a client's window/workDoneProgress/cancel
// names the open progress.
func (p *progress) isRunToken(token string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return token != "" && token == p.active
}

// work sends queued steps in order. A token the client refused (or did
// not accept in time) is never used.
func (p *progress) work() {
	defer close(p.done)
	refused := map[string]bool{}
	for {
		select {
		case <-p.wake:
		case <-p.quit:
			return
		}
		for {
			p.mu.Lock()
			if len(p.steps) == 0 {
				p.mu.Unlock()
				break
			}
			s := p.steps[0]
			p.steps = p.steps[1:]
			p.mu.Unlock()
			p.send(s, refused)
		}
	}
}

func (p *progress) send(s step, refused map[string]bool) {
	ctx := p.b.ctx
	if s.kind == stepBegin {
		cctx, cancel := context.WithTimeout(ctx, createTimeout)
		params, err := lspRaw(protocol.WorkDoneProgressCreateParams{Token: progressToken(s.token)})
		if err == nil {
			_, err = p.b.jc.Call(cctx, methodProgressCreate, params, nil)
		}
		cancel()
		if err != nil {
			refused[s.token] = true
			return
		}
	}
	if refused[s.token] {
		if s.kind == stepEnd {
			delete(refused, s.token)
		}
		return
	}
	var msg *string
	if s.message != "" {
		msg = &s.message
	}
	var value any
	switch s.kind {
	case stepBegin:
		cancellable := true
		value = protocol.WorkDoneProgressBegin{Kind: "begin", Title: progressTitle, Cancellable: &cancellable, Message: msg}
	case stepReport:
		value = protocol.WorkDoneProgressReport{Kind: "report", Message: msg}
	case stepEnd:
		value = protocol.WorkDoneProgressEnd{Kind: "end", Message: msg}
	}
	v, err := lspRaw(value)
	if err != nil {
		p.b.opts.Report(err)
		return
	}
	params, err := lspRaw(protocol.ProgressParams{Token: progressToken(s.token), Value: rawOf(json.RawMessage(v))})
	if err != nil {
		p.b.opts.Report(err)
		return
	}
	_ = p.b.jc.Notify(ctx, methodProgress, params)
}

// stop ends the worker; queued steps are dropped (the client is leaving).
func (p *progress) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	close(p.quit)
	<-p.done
}

// oneLine keeps the first line of s, at most max runes.
func oneLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}
