package lspbridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/rpc"
)

// Every test closes its pipes and waits for Serve, so nothing the bridge
// starts (the input pump, the progress worker, handlers) may outlive it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitTimeout only guards against a hang; nothing waits for it to pass.
const waitTimeout = 10 * time.Second

// Client capabilities the tests declare in initialize.
const (
	capsLSP      = `{"window":{"showMessage":{}}}`
	capsPiUI     = `{"experimental":{"pi":{"ui":true}}}`
	capsProgress = `{"window":{"workDoneProgress":true}}`
)

// fakeRT is a Runtime whose commands are scripted per test. The embedded
// nil api.Server makes every method a test did not script panic, which
// the api.Scheduler turns into the command's error.
type fakeRT struct {
	api.Server

	mu      sync.Mutex
	client  api.Client
	subs    map[int]func(api.Event)
	nextSub int
	ready   chan struct{} // closed at the first Subscribe (Serve binds first)
	names   []string      // SetSessionName calls, in order

	aborts      chan struct{} // one value per Abort call
	abortBashes atomic.Int32

	getState        func(ctx context.Context) (api.State, error)
	prompt          func(ctx context.Context, p api.PromptParams) error
	bash            func(ctx context.Context, p api.BashParams) (api.BashResult, error)
	setSessionName  func(ctx context.Context, p api.NameParams) error
	setThinking     func(ctx context.Context, p api.ThinkingParams) error
	getForkMessages func(ctx context.Context) (api.ForkMessagesResult, error)
	getCommands     func(ctx context.Context) (api.CommandsResult, error)
	cycleModel      func(ctx context.Context) (*api.CycleModelResult, error)
	compact         func(ctx context.Context, p api.CompactParams) (api.CompactionResult, error)
}

func newFakeRT() *fakeRT {
	return &fakeRT{subs: map[int]func(api.Event){}, ready: make(chan struct{}), aborts: make(chan struct{}, 64)}
}

var _ Runtime = (*fakeRT)(nil)

func (f *fakeRT) Bind(c api.Client) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.client = c
}

func (f *fakeRT) Subscribe(fn func(api.Event)) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextSub++
	n := f.nextSub
	f.subs[n] = fn
	select {
	case <-f.ready:
	default:
		close(f.ready)
	}
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.subs, n)
	}
}

// ui is the client the runtime was bound to (nil once detached).
func (f *fakeRT) ui() api.Client {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.client
}

func (f *fakeRT) subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

// emit delivers ev to every subscriber, as the host's event loop does.
func (f *fakeRT) emit(ev api.Event) {
	f.mu.Lock()
	subs := make([]func(api.Event), 0, len(f.subs))
	for _, s := range f.subs {
		subs = append(subs, s)
	}
	f.mu.Unlock()
	for _, s := range subs {
		s(ev)
	}
}

func (f *fakeRT) sessionNames() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.names...)
}

// Abort and AbortBash are always served: Serve and shutdown call them.
func (f *fakeRT) Abort(context.Context) error {
	select {
	case f.aborts <- struct{}{}:
	default:
	}
	return nil
}

func (f *fakeRT) AbortBash(context.Context) error {
	f.abortBashes.Add(1)
	return nil
}

func (f *fakeRT) GetState(ctx context.Context) (api.State, error) {
	if f.getState == nil {
		return f.Server.GetState(ctx)
	}
	return f.getState(ctx)
}

func (f *fakeRT) Prompt(ctx context.Context, p api.PromptParams) (api.DispositionResult, error) {
	if f.prompt == nil {
		return f.Server.Prompt(ctx, p)
	}
	return api.DispositionResult{Disposition: api.DispositionStarted}, f.prompt(ctx, p)
}

func (f *fakeRT) Bash(ctx context.Context, p api.BashParams) (api.BashResult, error) {
	if f.bash == nil {
		return f.Server.Bash(ctx, p)
	}
	return f.bash(ctx, p)
}

func (f *fakeRT) SetSessionName(ctx context.Context, p api.NameParams) error {
	f.mu.Lock()
	f.names = append(f.names, p.Name)
	f.mu.Unlock()
	if f.setSessionName == nil {
		return nil
	}
	return f.setSessionName(ctx, p)
}

func (f *fakeRT) SetThinkingLevel(ctx context.Context, p api.ThinkingParams) error {
	if f.setThinking == nil {
		return f.Server.SetThinkingLevel(ctx, p)
	}
	return f.setThinking(ctx, p)
}

func (f *fakeRT) GetForkMessages(ctx context.Context) (api.ForkMessagesResult, error) {
	if f.getForkMessages == nil {
		return f.Server.GetForkMessages(ctx)
	}
	return f.getForkMessages(ctx)
}

func (f *fakeRT) GetCommands(ctx context.Context) (api.CommandsResult, error) {
	if f.getCommands == nil {
		return f.Server.GetCommands(ctx)
	}
	return f.getCommands(ctx)
}

func (f *fakeRT) CycleModel(ctx context.Context) (*api.CycleModelResult, error) {
	if f.cycleModel == nil {
		return f.Server.CycleModel(ctx)
	}
	return f.cycleModel(ctx)
}

func (f *fakeRT) Compact(ctx context.Context, p api.CompactParams) (api.CompactionResult, error) {
	if f.compact == nil {
		return f.Server.Compact(ctx, p)
	}
	return f.compact(ctx, p)
}

// msg is one JSON value the server wrote, kept both raw and by member.
type msg struct {
	raw []byte
	f   map[string]json.RawMessage
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (m *msg) has(k string) bool { _, ok := m.f[k]; return ok }

func (m *msg) str(k string) string {
	var s string
	_ = json.Unmarshal(m.f[k], &s)
	return s
}

func (m *msg) method() string { return m.str("method") }

// id is the id as written ("" when absent).
func (m *msg) id() string { return string(m.f["id"]) }

func (m *msg) params() json.RawMessage { return m.f["params"] }

func (m *msg) result() json.RawMessage { return m.f["result"] }

func (m *msg) isResponse() bool { return !m.has("method") }

func (m *msg) isRequest(method string) bool {
	return m.has("id") && m.has("method") && m.method() == method
}

func (m *msg) isNotification(method string) bool {
	return !m.has("id") && m.method() == method
}

func (m *msg) errObj() *rpcError {
	raw, ok := m.f["error"]
	if !ok {
		return nil
	}
	var e rpcError
	if err := json.Unmarshal(raw, &e); err != nil {
		return &rpcError{Code: -1, Message: "undecodable error: " + string(raw)}
	}
	return &e
}

func (m *msg) String() string { return string(m.raw) }

func isResponseTo(id int) func(*msg) bool {
	want := strconv.Itoa(id)
	return func(m *msg) bool { return m.isResponse() && m.id() == want }
}

// syncBuffer collects everything the server wrote, byte for byte.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// outgoing is one write to the server's input: a record to frame, bytes
// to write as they are, or the end of input.
type outgoing struct {
	data  []byte
	raw   bool
	close bool
}

// peer is the client end: it writes to the server's input through a
// queue (so neither the test nor the auto-responder ever blocks on the
// unbuffered pipe while the server writes) and reads every server message
// into a channel.
type peer struct {
	t       *testing.T
	framing rpc.Framing
	inW     *io.PipeWriter
	outR    *io.PipeReader
	sendq   chan outgoing
	msgs    chan *msg
	raw     syncBuffer
	backlog []*msg
	nextID  int
	// auto, when set, answers some server requests from the read
	// goroutine; it reports whether it did.
	auto    func(p *peer, m *msg) bool
	readEnd chan struct{}
	sendEnd chan struct{}
}

func newPeer(t *testing.T, framing rpc.Framing, inW *io.PipeWriter, outR *io.PipeReader, auto func(*peer, *msg) bool) *peer {
	p := &peer{
		t: t, framing: framing, inW: inW, outR: outR, auto: auto,
		sendq: make(chan outgoing, 1024), msgs: make(chan *msg, 4096),
		readEnd: make(chan struct{}), sendEnd: make(chan struct{}),
	}
	go p.writeLoop()
	go p.readLoop()
	return p
}

func (p *peer) writeLoop() {
	defer close(p.sendEnd)
	w := rpc.NewWriter(p.inW, p.framing)
	for o := range p.sendq {
		switch {
		case o.close:
			_ = p.inW.Close()
		case o.raw:
			_, _ = p.inW.Write(o.data)
		default:
			_ = w.WriteRecord(o.data)
		}
	}
}

func (p *peer) readLoop() {
	defer close(p.readEnd)
	defer close(p.msgs)
	src := bufio.NewReader(io.TeeReader(p.outR, &p.raw))
	var in rpc.RecordReader
	if p.framing == rpc.FramingHeader {
		in = rpc.NewHeaderReader(src, 0)
	} else {
		in = rpc.NewLineReader(src, 0)
	}
	for {
		rec, err := in.Next()
		if err != nil {
			return
		}
		m := &msg{raw: append([]byte(nil), rec...)}
		if err := json.Unmarshal(m.raw, &m.f); err != nil {
			m.f = map[string]json.RawMessage{"undecodable": json.RawMessage(strconv.Quote(string(rec)))}
		}
		if p.auto != nil && m.has("id") && m.has("method") && p.auto(p, m) {
			continue
		}
		p.msgs <- m
	}
}

// stop ends the peer's goroutines; the server must be done writing.
func (p *peer) stop() {
	_ = p.inW.Close()
	_ = p.outR.Close()
	<-p.readEnd
	close(p.sendq)
	<-p.sendEnd
}

func (p *peer) sendRecord(s string) { p.sendq <- outgoing{data: []byte(s)} }

func (p *peer) sendBytes(s string) { p.sendq <- outgoing{data: []byte(s), raw: true} }

// closeInput ends the server's input after everything queued before it.
func (p *peer) closeInput() { p.sendq <- outgoing{close: true} }

func paramsJSON(params any) string {
	switch v := params.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.RawMessage:
		return string(v)
	}
	b, err := json.Marshal(params)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// call sends a request (params: nil, raw JSON text, or a value to encode)
// and returns its id.
func (p *peer) call(method string, params any) int {
	p.nextID++
	id := p.nextID
	rec := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q`, id, method)
	if ps := paramsJSON(params); ps != "" {
		rec += `,"params":` + ps
	}
	p.sendRecord(rec + "}")
	return id
}

func (p *peer) notify(method string, params any) {
	rec := fmt.Sprintf(`{"jsonrpc":"2.0","method":%q`, method)
	if ps := paramsJSON(params); ps != "" {
		rec += `,"params":` + ps
	}
	p.sendRecord(rec + "}")
}

// request sends a request and waits for its response.
func (p *peer) request(method string, params any) *msg {
	p.t.Helper()
	return p.await("response to "+method, isResponseTo(p.call(method, params)))
}

// reply answers a server request with a result (raw JSON text).
func (p *peer) reply(m *msg, result string) {
	p.sendRecord(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.id(), result))
}

func (p *peer) replyError(m *msg, code int, message string) {
	p.sendRecord(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, m.id(), code, message))
}

// recv is the next message from the wire, ignoring the backlog.
func (p *peer) recv(what string) *msg {
	p.t.Helper()
	select {
	case m, ok := <-p.msgs:
		if !ok {
			p.t.Fatalf("waiting for %s: the server's output ended", what)
		}
		return m
	case <-time.After(waitTimeout):
		p.t.Fatalf("timed out waiting for %s", what)
	}
	return nil
}

// next is the oldest message not yet taken.
func (p *peer) next() *msg {
	p.t.Helper()
	if len(p.backlog) > 0 {
		m := p.backlog[0]
		p.backlog = p.backlog[1:]
		return m
	}
	return p.recv("the next message")
}

// await returns the first message matching pred; the others stay, in
// order, for later calls.
func (p *peer) await(what string, pred func(*msg) bool) *msg {
	p.t.Helper()
	for i, m := range p.backlog {
		if pred(m) {
			p.backlog = append(p.backlog[:i:i], p.backlog[i+1:]...)
			return m
		}
	}
	for {
		m := p.recv(what)
		if pred(m) {
			return m
		}
		p.backlog = append(p.backlog, m)
	}
}

// sync is a barrier: it sends a request only the read loop answers and
// returns (and takes) every message written before that answer. Whatever
// the server did in reaction to earlier input on its read loop has been
// written by then.
func (p *peer) sync() []*msg {
	p.t.Helper()
	id := p.call("test/ping", nil)
	before := p.backlog
	p.backlog = nil
	for {
		m := p.recv("the barrier's response")
		if isResponseTo(id)(m) {
			return before
		}
		before = append(before, m)
	}
}

// harness is a Bridge serving a fake runtime to a peer over io.Pipes.
type harness struct {
	*peer
	b        *Bridge
	rt       *fakeRT
	reports  chan error
	reported []error // taken from reports, not yet matched
	served   chan struct{}
	code     int
	cancel   context.CancelFunc
}

type config struct {
	framing     rpc.Framing
	max         int // the server reader's record limit (0: rpc.MaxRecord)
	reconfigure Reconfigure
	auto        func(*peer, *msg) bool
}

func startBridge(t *testing.T, rt *fakeRT, cfg config) *harness {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &harness{rt: rt, reports: make(chan error, 256), served: make(chan struct{})}
	h.b = New(Options{
		Runtime:     rt,
		Reconfigure: cfg.reconfigure,
		Version:     "1.2.3-test",
		Report: func(err error) {
			select {
			case h.reports <- err:
			default:
			}
		},
	})
	h.peer = newPeer(t, cfg.framing, inW, outR, cfg.auto)
	var in rpc.RecordReader
	if cfg.framing == rpc.FramingHeader {
		in = rpc.NewHeaderReader(inR, cfg.max)
	} else {
		in = rpc.NewLineReader(inR, cfg.max)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		defer close(h.served)
		h.code = h.b.Serve(ctx, in, rpc.NewWriter(outW, cfg.framing))
	}()
	t.Cleanup(func() {
		h.closeInput()
		select {
		case <-h.served:
		case <-time.After(waitTimeout):
			t.Error("Serve did not return after the input ended")
			cancel()
			<-h.served
		}
		cancel()
		h.peer.stop()
		_ = inR.Close()
	})
	select {
	case <-rt.ready:
	case <-time.After(waitTimeout):
		t.Fatal("Serve never attached the runtime")
	}
	return h
}

// exitCode waits for Serve to return.
func (h *harness) exitCode() int {
	h.t.Helper()
	select {
	case <-h.served:
		return h.code
	case <-time.After(waitTimeout):
		h.t.Fatal("Serve did not return")
	}
	return -1
}

// initialize sends initialize with the given capabilities (and extra
// members, raw JSON after a comma) and returns the response.
func (h *harness) initialize(caps string, extra string) *msg {
	h.t.Helper()
	params := `{"processId":null,"clientInfo":{"name":"test"},"capabilities":` + caps
	if extra != "" {
		params += "," + extra
	}
	return h.request("initialize", params+"}")
}

// awaitReport returns the first report mentioning sub; the others are
// kept for later calls (reports from concurrent handlers come in any
// order).
func (h *harness) awaitReport(sub string) error {
	h.t.Helper()
	deadline := time.After(waitTimeout)
	for {
		for i, err := range h.reported {
			if strings.Contains(err.Error(), sub) {
				h.reported = append(h.reported[:i:i], h.reported[i+1:]...)
				return err
			}
		}
		select {
		case err := <-h.reports:
			h.reported = append(h.reported, err)
		case <-deadline:
			h.t.Fatalf("no report mentioning %q", sub)
			return nil
		}
	}
}

// nativeData runs one command through pi's native dialect on the same
// fake and returns its response's "data" member as written (nil when the
// response has none) and its "error" text.
func nativeData(t *testing.T, rt api.Server, command string) (data json.RawMessage, errText string) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	conn := rpc.NewConn(rpc.NewWriter(outW, rpc.FramingNewline), nil)
	done := make(chan error, 1)
	go func() { done <- conn.Serve(context.Background(), rpc.NewLineReader(inR, 0), rt) }()
	lines := make(chan []byte, 1)
	go func() {
		rec, err := rpc.NewLineReader(outR, 0).Next()
		if err != nil {
			rec = nil
		}
		lines <- append([]byte(nil), rec...)
	}()
	go func() { _, _ = io.WriteString(inW, command+"\n") }()
	var line []byte
	select {
	case line = <-lines:
	case <-time.After(waitTimeout):
		t.Fatal("the native dialect did not answer")
	}
	_ = inW.Close()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("native Serve did not return")
	}
	_ = outR.Close()
	var f map[string]json.RawMessage
	if err := json.Unmarshal(line, &f); err != nil {
		t.Fatalf("native response %q: %v", line, err)
	}
	_ = json.Unmarshal(f["error"], &errText)
	return f["data"], errText
}

// nativeEvent is ev as the native dialect writes it.
func nativeEvent(t *testing.T, ev api.Event) string {
	t.Helper()
	var buf bytes.Buffer
	rpc.NewConn(rpc.NewWriter(&buf, rpc.FramingNewline), nil).Emit(ev)
	return strings.TrimSuffix(buf.String(), "\n")
}

// textMessage is an assistant message saying text.
func textMessage(text string) *llm.AssistantMessage {
	return &llm.AssistantMessage{
		Content: llm.Contents{llm.TextContent{Text: text}}, API: "faux", Provider: "faux", Model: "m",
		StopReason: llm.StopReason("stop"), Timestamp: 1700000000000,
	}
}
