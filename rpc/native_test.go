package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/api"
)

// fakeServer answers a few commands; the others panic through the nil
// embedded interface, which the scheduler turns into an error response.
type fakeServer struct {
	api.Server
	conn *Conn

	bashStarted chan struct{}
	bashRelease chan struct{}
	mu          sync.Mutex
	names       []string
}

func (f *fakeServer) GetState(context.Context) (api.State, error) {
	return api.State{SessionID: "s1", SteeringMode: api.QueueAll}, nil
}

func (f *fakeServer) SetSessionName(_ context.Context, p api.NameParams) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.names = append(f.names, p.Name)
	return nil
}

// NewSession asks the client first, as an extension's
// session_before_switch handler may; anything but "yes" cancels.
func (f *fakeServer) NewSession(ctx context.Context, _ api.NewSessionParams) (api.CancelledResult, error) {
	r := f.conn.Ask(ctx, api.UIRequest{Method: api.UIConfirm, Title: "Start over?"})
	return api.CancelledResult{Cancelled: r.Cancelled || r.Confirmed == nil || !*r.Confirmed}, nil
}

func (f *fakeServer) Bash(ctx context.Context, p api.BashParams) (api.BashResult, error) {
	close(f.bashStarted)
	select {
	case <-f.bashRelease:
		return api.BashResult{Output: p.Command}, nil
	case <-ctx.Done():
		return api.BashResult{Cancelled: true}, nil
	}
}

func (f *fakeServer) CycleModel(context.Context) (*api.CycleModelResult, error) { return nil, nil }

type harness struct {
	t    *testing.T
	in   *io.PipeWriter
	out  chan string // lines written by the Conn, read as they come
	srv  *fakeServer
	conn *Conn
	done chan error
}

func newHarness(t *testing.T, max int) *harness {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	conn := NewConn(NewWriter(outW, FramingNewline), nil)
	srv := &fakeServer{conn: conn, bashStarted: make(chan struct{}), bashRelease: make(chan struct{})}
	h := &harness{t: t, in: inW, srv: srv, conn: conn, done: make(chan error, 1), out: make(chan string, 100)}
	go func() {
		defer close(h.out)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<16), 1<<24)
		for sc.Scan() {
			h.out <- sc.Text()
		}
	}()
	go func() { h.done <- conn.Serve(context.Background(), NewLineReader(inR, max), srv) }()
	t.Cleanup(func() {
		_ = inW.Close()
		select {
		case <-h.done:
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after input closed")
		}
		_ = outR.Close()
	})
	return h
}

func (h *harness) send(s string) {
	h.t.Helper()
	_, err := io.WriteString(h.in, s)
	require.NoError(h.t, err)
}

func (h *harness) read() map[string]any {
	h.t.Helper()
	select {
	case l := <-h.out:
		require.NotEmpty(h.t, l, "output ended")
		var m map[string]any
		require.NoError(h.t, json.Unmarshal([]byte(l), &m), l)
		return m
	case <-time.After(5 * time.Second):
		h.t.Fatal("timed out reading output")
	}
	return nil
}

func TestNativeAnswersInOrderAndEchoesIDs(t *testing.T) {
	h := newHarness(t, 0)
	h.send(`{"id":"1","type":"get_state"}` + "\n")
	h.send("{broken\n")
	h.send(`{"id":2,"type":"set_session_name","name":"a\u2028b"}` + "\n")
	h.send(`{"type":"mystery","id":"x"}` + "\n")
	h.send(`{"id":"3","type":"cycle_model"}` + "\n")
	h.send(`{"id":"4","type":"get_messages"}` + "\n")
	h.send(`{"id":"5","type":"get_state"}`) // no final LF
	require.NoError(t, h.in.Close())

	r := h.read()
	assert.Equal(t, "1", r["id"])
	assert.Equal(t, "s1", r["data"].(map[string]any)["sessionId"])
	r = h.read()
	assert.Equal(t, "parse", r["command"])
	assert.NotContains(t, r, "id")
	assert.True(t, strings.HasPrefix(r["error"].(string), "Failed to parse command: "))
	r = h.read()
	assert.EqualValues(t, 2, r["id"])
	assert.Equal(t, true, r["success"])
	assert.NotContains(t, r, "data", "commands without data have no data field")
	r = h.read()
	assert.Equal(t, "Unknown command: mystery", r["error"])
	assert.Equal(t, "x", r["id"])
	r = h.read()
	assert.Contains(t, r, "data", "a nil result is data:null")
	assert.Nil(t, r["data"])
	r = h.read()
	assert.Equal(t, false, r["success"], "a panicking handler becomes an error response")
	assert.Contains(t, r["error"], "internal error in get_messages")
	r = h.read()
	assert.Equal(t, "5", r["id"], "the last line without LF is still a command")
	assert.Equal(t, []string{"a\u2028b"}, h.srv.names, "U+2028 inside a string does not split the record")
}

// Reading goes on while a command waits on a dialog: the
// extension_ui_response that answers it is read and resolved at once
// (an extension's confirm during new_session).
func TestNativeCommandWaitingOnADialogIsAnswered(t *testing.T) {
	h := newHarness(t, 0)
	h.send(`{"id":"n","type":"new_session"}` + "\n")
	req := h.read()
	require.Equal(t, "extension_ui_request", req["type"], req)
	assert.Equal(t, "confirm", req["method"])
	h.send(`{"id":"s","type":"get_state"}` + "\n")
	h.send(`{"type":"extension_ui_response","id":"` + req["id"].(string) + `","confirmed":true}` + "\n")
	r := h.read()
	assert.Equal(t, "n", r["id"])
	assert.Equal(t, false, r["data"].(map[string]any)["cancelled"], "the answer reached new_session")
	r = h.read()
	assert.Equal(t, "s", r["id"], "get_state waited for new_session")
}

func TestNativeCancelsLongCommandsWhenInputEnds(t *testing.T) {
	h := newHarness(t, 0)
	h.send(`{"id":"b","type":"bash","command":"slow"}` + "\n")
	<-h.srv.bashStarted
	require.NoError(t, h.in.Close())
	r := h.read()
	assert.Equal(t, true, r["data"].(map[string]any)["cancelled"])
	select {
	case err := <-h.done:
		assert.NoError(t, err)
		h.done <- err
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
}

func TestNativeOversizedRecordResynchronises(t *testing.T) {
	h := newHarness(t, 1024)
	h.send(`{"id":"big","type":"prompt","message":"` + strings.Repeat("x", 5000) + `"}` + "\n")
	h.send(`{"id":"after","type":"get_state"}` + "\n")
	r := h.read()
	assert.Equal(t, "parse", r["command"])
	assert.Contains(t, r["error"], "limit")
	r = h.read()
	assert.Equal(t, "after", r["id"])
}

// The extension UI sub-protocol, driven by a test-only caller of the
// Conn's api.Client side.
func TestNativeExtensionUIRequests(t *testing.T) {
	h := newHarness(t, 0)
	ctx := context.Background()

	answer := make(chan api.UIResponse, 1)
	go func() {
		answer <- h.conn.Ask(ctx, api.UIRequest{Method: api.UISelect, Title: "Pick", Options: []string{"A", "B"}})
	}()
	req := h.read()
	assert.Equal(t, "extension_ui_request", req["type"])
	assert.Equal(t, "select", req["method"])
	assert.Equal(t, []any{"A", "B"}, req["options"])
	id := req["id"].(string)
	require.NotEmpty(t, id)
	// A response for an unknown id is dropped without an answer.
	h.send(`{"type":"extension_ui_response","id":"nobody","value":"A"}` + "\n")
	h.send(`{"type":"extension_ui_response","id":"` + id + `","value":"B"}` + "\n")
	got := <-answer
	require.NotNil(t, got.Value)
	assert.Equal(t, "B", *got.Value)

	// A malformed response is answered with an error.
	h.send(`{"type":"extension_ui_response","value":"B"}` + "\n")
	r := h.read()
	assert.Equal(t, false, r["success"])
	assert.Contains(t, r["error"], `"id"`)

	// A dialog with a timeout resolves as cancelled when nobody answers.
	start := time.Now()
	got = h.conn.Ask(ctx, api.UIRequest{Method: api.UIConfirm, Title: "Sure?", Timeout: 50})
	req = h.read()
	assert.EqualValues(t, 50, req["timeout"])
	assert.True(t, got.Cancelled)
	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)

	// Fire-and-forget methods just appear on the wire.
	text := "busy"
	h.conn.Notify(api.UIRequest{Method: api.UISetStatus, StatusKey: "k", StatusText: &text})
	req = h.read()
	assert.Equal(t, "setStatus", req["method"])
	assert.Equal(t, "busy", req["statusText"])
	assert.NotEmpty(t, req["id"])

	// A dialog still waiting when the client leaves resolves as cancelled.
	go func() { answer <- h.conn.Ask(ctx, api.UIRequest{Method: api.UIInput, Title: "Name?"}) }()
	h.read()
	require.NoError(t, h.in.Close())
	select {
	case got = <-answer:
		assert.True(t, got.Cancelled)
	case <-time.After(5 * time.Second):
		t.Fatal("a pending dialog hung after the client left")
	}
}

// Issue 37: a command whose id is longer than api.MaxID is refused, and
// the answer leaves the id out rather than echo it; an unknown command's
// name is quoted at most api.ClipName bytes. The next command is served.
func TestNativeHugeInputIsNotEchoed(t *testing.T) {
	h := newHarness(t, 0)
	id := strings.Repeat("i", 1<<20)
	h.send(`{"id":"` + id + `","type":"get_state"}` + "\n")
	h.send(`{"id":"` + id + `","type":"extension_ui_response","value":"x"}` + "\n")
	h.send(`{"id":"n","type":"` + strings.Repeat("x", 1<<20) + `"}` + "\n")
	h.send(`{"id":"after","type":"get_state"}` + "\n")
	for _, command := range []string{"get_state", "extension_ui_response"} {
		r := h.read()
		assert.NotContains(t, r, "id")
		assert.Equal(t, command, r["command"])
		assert.Equal(t, false, r["success"])
		assert.Equal(t, `Failed to parse command: id too long: "id" is 1048578 bytes long; gopi answers requests whose id is at most 256 bytes`, r["error"])
	}
	r := h.read()
	assert.Equal(t, "n", r["id"])
	assert.Equal(t, "Unknown command: "+strings.Repeat("x", api.ClipName)+"…", r["error"])
	assert.Equal(t, "after", h.read()["id"])
}
