// Package faux is gopi's offline scripted model: API "faux", provider
// "faux". It needs no network and no key, so it is the model gopi falls
// back to when no provider has credentials, and what `make run` talks to.
// Call [New] for a [Provider] with realistic pauses (the zero value streams
// without any) and list its models with [Models].
//
// The model reads the latest user message and follows the directive it
// starts with (the keyword is case-insensitive; the argument may span
// lines):
//
//	reply: <text>                   answer with exactly <text>
//	stream: <N>                     stream "1 2 ... N", one delta per number
//	think: <text>                   a thinking block with <text>, then an answer
//	bash: <command>                 call bash {"command"}
//	read: <path>                    call read {"path"}
//	write: <path> :: <content>      call write {"path","content"}
//	edit: <path> :: <old> => <new>  call edit {"path","edits":[{"oldText","newText"}]}
//	ls: [path]                      call ls {"path"}
//	grep: <pattern>                 call grep {"pattern"}
//	find: <glob>                    call find {"pattern"}
//	call: <tool> [JSON object]      call any offered tool with those arguments
//	tools: <d1>; <d2>; ...          several tool directives as parallel calls
//	error: <status> [times]         fail like a provider (429, 500, 503, 529...),
//	                                every attempt or only the first <times>
//
// A tool is only called when the request offers it; otherwise the model
// says so. When the conversation ends in tool results, it answers
// "Tool said: <first lines>" for each and stops. Any other message gets a
// short greeting listing the directives. With thinking on, faux-1 first
// thinks briefly about its plan. Usage is estimated at four characters per
// token and costs nothing. Cancelling ctx mid-stream ends the message as
// aborted. README.md has the same list with examples.
package faux

import (
	"context"
	_ "embed"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/gopi-dev/gopi/core/llm"
)

// Wire names of the faux model.
const (
	API          = llm.APIFaux
	ProviderName = "faux"
	ModelID      = "faux-1"
	FastModelID  = "faux-fast"
)

// DefaultDelay is the pause before each streamed piece in a [New] provider:
// about forty pieces a second, quick but visibly streaming.
const DefaultDelay = 25 * time.Millisecond

//go:embed help.md
var helpText string

// Models lists the faux models: faux-1 reasons (so thinking levels and
// thinking blocks can be tried) and streams with pauses; faux-fast does
// neither.
func Models() []llm.Model {
	base := llm.Model{
		API:           API,
		Provider:      ProviderName,
		BaseURL:       "",
		Input:         []string{"text", "image"},
		ContextWindow: 128000,
		MaxTokens:     16384,
	}
	m1, fast := base, base
	m1.ID, m1.Name, m1.Reasoning = ModelID, "Faux 1 (offline)", true
	fast.ID, fast.Name = FastModelID, "Faux Fast (offline)"
	return []llm.Model{m1, fast}
}

// Provider is the faux model. The zero value streams without pauses.
type Provider struct {
	// Delay is the pause before each streamed piece of faux-1; faux-fast
	// never pauses.
	Delay time.Duration

	mu sync.Mutex // guards failed
	// failed counts the attempts that already failed per "error: <status>
	// <times>" message, so a retry of the same message can recover.
	failed map[string]int
}

var _ llm.Provider = (*Provider)(nil)

// New returns a faux provider that streams with [DefaultDelay].
func New() *Provider { return &Provider{Delay: DefaultDelay} }

// plan is what one reply will contain.
type plan struct {
	thinking string
	text     string
	// pieces, when set, are the exact text deltas (text is their join).
	pieces []string
	calls  []toolCall
	fail   *failure
}

// Stream answers req following the directives above. It never touches the
// network.
func (p *Provider) Stream(ctx context.Context, model *llm.Model, req *llm.Request) iter.Seq[llm.StreamEvent] {
	return func(yield func(llm.StreamEvent) bool) {
		if ctx == nil {
			ctx = context.Background()
		}
		b := llm.NewBuilder(model)
		if !yield(b.Start()) {
			return
		}
		if req == nil {
			req = &llm.Request{}
		}
		pl := p.plan(model, req)
		b.Usage().Input = estimateTokens(promptChars(req))

		delay := p.Delay
		if model != nil && model.ID == FastModelID {
			delay = 0
		}
		s := &streamer{ctx: ctx, b: b, yield: yield, delay: delay}
		if !s.run(pl) {
			return
		}
		if pl.fail != nil {
			yield(b.Fail(ctx, pl.fail.err()))
			return
		}
		yield(b.Done(""))
	}
}

// plan decides the reply from the end of the conversation.
func (p *Provider) plan(model *llm.Model, req *llm.Request) plan {
	var results []*llm.ToolResultMessage
	for i := len(req.Messages) - 1; i >= 0; i-- {
		tr, ok := req.Messages[i].(*llm.ToolResultMessage)
		if !ok {
			break
		}
		results = append(results, tr)
	}
	if len(results) > 0 {
		slices.Reverse(results)
		return plan{text: toolSummary(results)}
	}

	var user *llm.UserMessage
	for i := len(req.Messages) - 1; i >= 0 && user == nil; i-- {
		user, _ = req.Messages[i].(*llm.UserMessage)
	}
	if user == nil {
		return plan{text: strings.TrimSpace(helpText)}
	}
	text := user.Content.Text()
	d, ok := parseDirective(text)
	if !ok {
		return plan{text: strings.TrimSpace(helpText)}
	}
	pl := p.follow(d, user, req)
	if thinks(model, req) && pl.thinking == "" && pl.fail == nil {
		pl.thinking = planThought(d, pl)
	}
	return pl
}

func thinks(model *llm.Model, req *llm.Request) bool {
	return model != nil && model.Reasoning && req.Options.Thinking != "" && req.Options.Thinking != llm.ThinkingOff
}

// follow carries out one directive.
func (p *Provider) follow(d directive, user *llm.UserMessage, req *llm.Request) plan {
	arg := strings.TrimSpace(d.arg)
	switch d.name {
	case dirReply:
		if arg == "" {
			return plan{text: "The reply directive needs the text to answer with: `reply: <text>`."}
		}
		return plan{text: arg}
	case dirStream:
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 || n > maxStream {
			return plan{text: fmt.Sprintf("The stream directive needs a count from 1 to %d: `stream: 20`.", maxStream)}
		}
		pieces := make([]string, n)
		for i := range pieces {
			pieces[i] = strconv.Itoa(i + 1)
			if i > 0 {
				pieces[i] = " " + pieces[i]
			}
		}
		return plan{pieces: pieces, text: strings.Join(pieces, "")}
	case dirThink:
		if arg == "" {
			return plan{text: "The think directive needs something to think about: `think: <text>`."}
		}
		return plan{thinking: arg, text: "Done thinking."}
	case dirError:
		f, problem := parseFailure(arg)
		if problem != "" {
			return plan{text: problem}
		}
		if f.times > 0 {
			key := fmt.Sprintf("%d\x00%s", user.Timestamp, user.Content.Text())
			p.mu.Lock()
			if p.failed == nil {
				p.failed = map[string]int{}
			}
			p.failed[key]++
			attempt := p.failed[key]
			p.mu.Unlock()
			if attempt > f.times {
				return plan{text: fmt.Sprintf("Recovered after %d failed attempt(s).", f.times)}
			}
		}
		return plan{fail: &f}
	case dirTools:
		var calls []toolCall
		for _, part := range strings.Split(arg, ";") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			sub, ok := parseDirective(part)
			if !ok || !isToolDirective(sub.name) {
				return plan{text: fmt.Sprintf("Each entry of a tools directive must be a tool directive (bash, read, write, edit, ls, grep, find, call); %q is not.", strings.TrimSpace(part))}
			}
			c, problem := callFor(sub)
			if problem != "" {
				return plan{text: problem}
			}
			calls = append(calls, c)
		}
		if len(calls) == 0 {
			return plan{text: "The tools directive needs tool directives separated by semicolons: `tools: ls: .; read: go.mod`."}
		}
		return withTools(calls, req)
	default:
		c, problem := callFor(d)
		if problem != "" {
			return plan{text: problem}
		}
		return withTools([]toolCall{c}, req)
	}
}

// withTools calls the tools if the request offers all of them, else
// explains which are missing.
func withTools(calls []toolCall, req *llm.Request) plan {
	var missing []string
	for _, c := range calls {
		offered := slices.ContainsFunc(req.Tools, func(t llm.ToolSpec) bool { return t.Name == c.name })
		if !offered && !slices.Contains(missing, c.name) {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		return plan{text: fmt.Sprintf("I would call the %s tool, but this session does not offer it, so I can't.", strings.Join(missing, " and "))}
	}
	return plan{calls: calls}
}

// planThought is the short reasoning faux-1 shows when thinking is on.
func planThought(d directive, pl plan) string {
	switch {
	case len(pl.calls) > 0:
		names := make([]string, len(pl.calls))
		for i, c := range pl.calls {
			names[i] = c.name
		}
		return fmt.Sprintf("The message starts with the %q directive. I'll call %s and wait for the result.", d.name, strings.Join(names, ", "))
	default:
		return fmt.Sprintf("The message starts with the %q directive. I'll answer in text.", d.name)
	}
}

// Tool summaries stay short: a few lines of a few hundred characters.
const (
	summaryLines = 3
	summaryChars = 300
)

func toolSummary(results []*llm.ToolResultMessage) string {
	out := make([]string, 0, len(results))
	for _, r := range results {
		text := strings.TrimSpace(r.Content.Text())
		if text == "" {
			text = "(no text output)"
		}
		lines := strings.Split(text, "\n")
		cut := len(lines) > summaryLines
		if cut {
			lines = lines[:summaryLines]
		}
		s := strings.Join(lines, "\n")
		if utf8.RuneCountInString(s) > summaryChars {
			s = string([]rune(s)[:summaryChars])
			cut = true
		}
		if cut {
			s += "…"
		}
		out = append(out, "Tool said: "+s)
	}
	return strings.Join(out, "\n\n")
}

// estimateTokens counts four characters per token, rounding up.
func estimateTokens(chars int) int { return (chars + 3) / 4 }

// promptChars sizes everything the model was sent.
func promptChars(req *llm.Request) int {
	n := len(req.SystemPrompt)
	for _, m := range req.Messages {
		switch m := m.(type) {
		case *llm.UserMessage:
			n += contentChars(m.Content)
		case *llm.AssistantMessage:
			n += contentChars(m.Content)
		case *llm.ToolResultMessage:
			n += len(m.ToolName) + contentChars(m.Content)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n
}

func contentChars(cs llm.Contents) int {
	n := 0
	for _, c := range cs {
		switch c := c.(type) {
		case llm.TextContent:
			n += len(c.Text)
		case llm.ThinkingContent:
			n += len(c.Thinking)
		case llm.ToolCall:
			n += len(c.Name) + len(c.Arguments)
		case llm.ImageContent:
			n += len(c.Data)
		}
	}
	return n
}

// streamer emits a plan through the Builder, pausing between pieces.
type streamer struct {
	ctx   context.Context
	b     *llm.Builder
	yield func(llm.StreamEvent) bool
	delay time.Duration
	out   int // characters produced, for usage
}

// run streams the plan's blocks; false means the stream already ended
// (aborted, or the consumer stopped).
func (s *streamer) run(pl plan) bool {
	if pl.thinking != "" {
		i, ev := s.b.BeginThinking()
		if !s.emit(ev) {
			return false
		}
		for _, piece := range split(pl.thinking) {
			if !s.pause() || !s.emit(s.b.ThinkingDelta(i, piece)) {
				return false
			}
		}
		if !s.emit(s.b.EndThinking(i)) {
			return false
		}
	}
	if pl.text != "" {
		pieces := pl.pieces
		if pieces == nil {
			pieces = split(pl.text)
		}
		i, ev := s.b.BeginText()
		if !s.emit(ev) {
			return false
		}
		for _, piece := range pieces {
			if !s.pause() || !s.emit(s.b.TextDelta(i, piece)) {
				return false
			}
		}
		if !s.emit(s.b.EndText(i)) {
			return false
		}
	}
	for _, c := range pl.calls {
		i, ev := s.b.BeginToolCall("call_faux_"+strings.ReplaceAll(uuid.NewString(), "-", "")[:12], c.name)
		if !s.emit(ev) {
			return false
		}
		for _, piece := range split(string(c.args)) {
			if !s.pause() || !s.emit(s.b.ToolCallDelta(i, piece)) {
				return false
			}
		}
		if !s.emit(s.b.EndToolCall(i)) {
			return false
		}
	}
	return s.pause()
}

// emit counts the characters a delta adds and passes the event on.
func (s *streamer) emit(ev llm.StreamEvent) bool {
	s.out += len(ev.Delta)
	s.b.Usage().Output = estimateTokens(s.out)
	return s.yield(ev)
}

// pause waits for the next piece; if ctx ends first it emits the aborted
// message and reports false.
func (s *streamer) pause() bool {
	if s.delay > 0 {
		t := time.NewTimer(s.delay)
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
		}
	}
	if err := s.ctx.Err(); err != nil {
		s.yield(s.b.Fail(s.ctx, err))
		return false
	}
	return true
}

// split cuts text into token-sized pieces: a piece ends after a space once
// it holds four runes, or at ten runes, never inside a rune.
func split(text string) []string {
	var out []string
	start, runes := 0, 0
	for i, r := range text {
		runes++
		end := i + utf8.RuneLen(r)
		if (runes >= 4 && r == ' ') || runes >= 10 {
			out = append(out, text[start:end])
			start, runes = end, 0
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
