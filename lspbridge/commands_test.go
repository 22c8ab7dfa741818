package lspbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.lsp.dev/jsonrpc2"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/rpc"
)

// A result is the native response's data byte for byte: the same encoder
// (encoding/json, no HTML escaping), so a nil slice stays null and an
// omitempty field stays out in both dialects.
func TestResultIsTheNativeDataByteForByte(t *testing.T) {
	rt := newFakeRT()
	rt.getForkMessages = func(context.Context) (api.ForkMessagesResult, error) {
		return api.ForkMessagesResult{Messages: nil}, nil
	}
	rt.getCommands = func(context.Context) (api.CommandsResult, error) {
		return api.CommandsResult{Commands: []api.SlashCommand{{Name: "fix<it>", Description: "a & b → \u2028", Source: "prompt"}}}, nil
	}
	rt.cycleModel = func(context.Context) (*api.CycleModelResult, error) { return nil, nil }
	h := startBridge(t, rt, config{})

	for _, tc := range []struct {
		command string
		want    string // the data, as a check on the comparison itself
	}{
		{"get_fork_messages", `{"messages":null}`},
		{"get_commands", `{"commands":[{"name":"fix<it>","description":"a & b → \u2028","source":"prompt"}]}`},
		{"cycle_model", `null`},
	} {
		t.Run(tc.command, func(t *testing.T) {
			native, errText := nativeData(t, rt, fmt.Sprintf(`{"id":"n","type":%q}`, tc.command))
			require.Empty(t, errText)
			resp := h.request("pi/"+tc.command, nil)
			require.Nil(t, resp.errObj(), resp)
			assert.Equal(t, string(native), string(resp.result()))
			assert.Equal(t, tc.want, string(resp.result()))
		})
	}

	t.Run("no data", func(t *testing.T) {
		native, errText := nativeData(t, rt, `{"id":"n","type":"set_session_name","name":"x"}`)
		require.Empty(t, errText)
		require.Nil(t, native, "the native response has no data member")
		resp := h.request("pi/set_session_name", `{"name":"x"}`)
		require.Nil(t, resp.errObj(), resp)
		assert.Equal(t, "null", string(resp.result()))
	})
}

// Params are read as the native dialect reads them: encoding/json, field
// names matched case-insensitively, params minus type and id.
func TestParamsDecodeAsNative(t *testing.T) {
	rt := newFakeRT()
	h := startBridge(t, rt, config{})
	_, errText := nativeData(t, rt, `{"id":"n","type":"set_session_name","NAME":"native"}`)
	require.Empty(t, errText)
	resp := h.request("pi/set_session_name", `{"NAME":"bridge"}`)
	require.Nil(t, resp.errObj(), resp)
	for _, params := range []string{`null`, `{}`} {
		require.Nil(t, h.request("pi/set_session_name", params).errObj())
	}
	h.request("pi/set_session_name", nil)
	assert.Equal(t, []string{"native", "bridge", "", "", ""}, rt.sessionNames())
}

func TestUnknownMethods(t *testing.T) {
	h := startBridge(t, stateRT(), config{})
	e := errorResponse(t, h.request("pi/no_such_command", nil), "1", -32601)
	assert.Contains(t, e.Message, "pi/no_such_command")
	errorResponse(t, h.request("textDocument/hover", `{}`), "2", -32601)
	// The native UI answer has no pi/ request of its own.
	errorResponse(t, h.request("pi/extension_ui_response", `{"id":"x"}`), "3", -32601)
	// Unknown notifications are ignored, as LSP asks.
	h.notify("$/setTrace", `{"value":"off"}`)
	h.notify("pi/no_such_command", nil)
	assert.Empty(t, h.sync())
}

func TestCommandErrors(t *testing.T) {
	rt := newFakeRT()
	rt.setSessionName = func(_ context.Context, p api.NameParams) error {
		if p.Name == "taken" {
			return errors.New("a session is already named taken\n")
		}
		return nil
	}
	h := startBridge(t, rt, config{})

	t.Run("bad params", func(t *testing.T) {
		for _, tc := range []struct{ command, params string }{
			{"set_thinking_level", `{"level":"loud"}`},
			{"set_session_name", `{"name":5}`},
			{"set_session_name", `["a"]`},
			{"bash", `{}`},
		} {
			resp := h.request("pi/"+tc.command, tc.params)
			e := errorResponse(t, resp, fmt.Sprint(h.nextID), -32602)
			assert.JSONEq(t, fmt.Sprintf(`{"command":%q}`, tc.command), string(e.Data))
			assert.Contains(t, e.Message, tc.command)
		}
	})

	t.Run("failure", func(t *testing.T) {
		_, native := nativeData(t, rt, `{"id":"n","type":"set_session_name","name":"taken"}`)
		require.Equal(t, "a session is already named taken", native)
		resp := h.request("pi/set_session_name", `{"name":"taken"}`)
		e := errorResponse(t, resp, fmt.Sprint(h.nextID), -32803)
		assert.Equal(t, native, e.Message)
		assert.Equal(t, `{"command":"set_session_name"}`, string(e.Data))
	})

	t.Run("panic", func(t *testing.T) {
		// get_messages is not scripted: the fake's nil api.Server panics.
		resp := h.request("pi/get_messages", nil)
		e := errorResponse(t, resp, fmt.Sprint(h.nextID), -32803)
		assert.Contains(t, e.Message, "get_messages")
		assert.JSONEq(t, `{"command":"get_messages"}`, string(e.Data))
		assert.Nil(t, h.request("pi/set_session_name", `{"name":"after"}`).errObj())
	})
}

// A command that asks the client something while it is being handled
// (an extension's dialog during preflight) must not stall the read loop
// that will carry the answer.
func TestStateCommandAskingTheClientDoesNotDeadlock(t *testing.T) {
	rt := newFakeRT()
	rt.getState = func(ctx context.Context) (api.State, error) {
		r := rt.ui().Ask(ctx, api.UIRequest{ID: "q", Method: api.UISelect, Title: "Which?", Options: []string{"a", "b"}})
		if r.Value == nil {
			return api.State{}, errors.New("no answer")
		}
		return api.State{SessionName: *r.Value}, nil
	}
	h := startBridge(t, rt, config{})
	require.Nil(t, h.initialize(capsLSP, "").errObj())
	id := h.call("pi/get_state", nil)
	req := h.await("the dialog", func(m *msg) bool { return m.isRequest("window/showMessageRequest") })
	h.reply(req, `{"title":"b"}`)
	resp := h.await("get_state", isResponseTo(id))
	require.Nil(t, resp.errObj(), resp)
	assert.Contains(t, string(resp.result()), `"sessionName":"b"`)
}

// blockingBash is a bash that runs until its context ends or release is
// closed; started is closed when it begins, cancelled when it sees its
// context end.
type blockingBash struct {
	started, release, cancelled chan struct{}
}

func newBlockingBash(rt *fakeRT) *blockingBash {
	bb := &blockingBash{started: make(chan struct{}), release: make(chan struct{}), cancelled: make(chan struct{})}
	rt.bash = func(ctx context.Context, p api.BashParams) (api.BashResult, error) {
		close(bb.started)
		select {
		case <-bb.release:
			code := 0
			return api.BashResult{Output: p.Command, ExitCode: &code}, nil
		case <-ctx.Done():
			close(bb.cancelled)
			return api.BashResult{Output: "partial", Cancelled: true}, nil
		}
	}
	return bb
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// A $/cancelRequest for a request still waiting for its turn answers it
// at once with RequestCancelled; it never runs, and the request before it
// runs on.
func TestCancelRequestBeforeItsTurn(t *testing.T) {
	rt := newFakeRT()
	started, release := make(chan struct{}), make(chan struct{})
	rt.setSessionName = func(_ context.Context, p api.NameParams) error {
		if p.Name == "hold" {
			close(started)
			<-release
		}
		return nil
	}
	h := startBridge(t, rt, config{})
	first := h.call("pi/set_session_name", `{"name":"hold"}`)
	waitClosed(t, started, "the first command")
	second := h.call("pi/set_session_name", `{"name":"never"}`)
	h.notify("$/cancelRequest", fmt.Sprintf(`{"id":%d}`, second))
	e := errorResponse(t, h.await("the cancelled request", isResponseTo(second)), fmt.Sprint(second), int(RequestCancelled))
	assert.Equal(t, "set_session_name was cancelled before it started", e.Message)
	close(release)
	require.Nil(t, h.await("the first command", isResponseTo(first)).errObj())
	assert.Equal(t, []string{"hold"}, rt.sessionNames())
}

// The end of input cancels what still runs, and Serve returns once it has.
func TestEndOfInputCancelsRunningCommands(t *testing.T) {
	rt := stateRT()
	bb := newBlockingBash(rt)
	h := startBridge(t, rt, config{})
	h.call("pi/bash", `{"command":"sleep 100"}`)
	waitClosed(t, bb.started, "bash to start")
	h.closeInput()
	waitClosed(t, bb.cancelled, "bash's context to end")
	assert.Equal(t, 0, h.exitCode())
}

func TestShutdownCancelsRunningCommands(t *testing.T) {
	rt := stateRT()
	bb := newBlockingBash(rt)
	h := startBridge(t, rt, config{})
	bashID := h.call("pi/bash", `{"command":"sleep 100"}`)
	waitClosed(t, bb.started, "bash to start")
	require.Nil(t, h.request("shutdown", nil).errObj())
	waitClosed(t, bb.cancelled, "bash's context to end")
	resp := h.await("bash", isResponseTo(bashID))
	assert.Contains(t, string(resp.result()), `"cancelled":true`)
	h.notify("exit", nil)
	assert.Equal(t, 0, h.exitCode())
}

func TestCancelRequestOfBashCancelsIt(t *testing.T) {
	for _, id := range []string{"41", `"bash-1"`} {
		t.Run(id, func(t *testing.T) {
			rt := stateRT()
			bb := newBlockingBash(rt)
			h := startBridge(t, rt, config{})
			h.sendRecord(`{"jsonrpc":"2.0","id":` + id + `,"method":"pi/bash","params":{"command":"sleep 100"}}`)
			waitClosed(t, bb.started, "bash to start")
			// Another id cancels nothing.
			h.notify("$/cancelRequest", `{"id":999}`)
			require.Nil(t, h.request("pi/get_state", nil).errObj())
			select {
			case <-bb.cancelled:
				t.Fatal("a $/cancelRequest for another id cancelled bash")
			default:
			}

			h.notify("$/cancelRequest", `{"id":`+id+`}`)
			waitClosed(t, bb.cancelled, "bash's context to end")
			resp := h.await("bash", func(m *msg) bool { return m.isResponse() && m.id() == id })
			require.Nil(t, resp.errObj(), resp)
			assert.Contains(t, string(resp.result()), `"cancelled":true`)
			assert.Empty(t, rt.aborts, "cancelling bash does not abort the run")
		})
	}
}

// promptRT starts a "run" after the prompt's response: agent_start through
// api.AfterResponse, as the host does.
func promptRT() *fakeRT {
	rt := stateRT()
	rt.prompt = func(ctx context.Context, p api.PromptParams) error {
		api.AfterResponse(ctx, func() { rt.emit(agent.Event{Type: agent.EventAgentStart}) })
		return nil
	}
	return rt
}

func TestPromptIsAnsweredBeforeItsRunEmits(t *testing.T) {
	for _, framing := range []rpc.Framing{rpc.FramingNewline, rpc.FramingHeader} {
		h := startBridge(t, promptRT(), config{framing: framing})
		id := h.call("pi/prompt", `{"message":"hi"}`)
		first := h.next()
		require.True(t, isResponseTo(id)(first), "the prompt's response must come first, got %s", first)
		assert.JSONEq(t, `{"disposition":"started"}`, string(first.result()))
		ev := h.next()
		require.True(t, ev.isNotification("pi/event"), ev.String())
		assert.JSONEq(t, `{"type":"agent_start"}`, string(ev.params()))
	}
}

func TestCancelRequestOfThePromptAbortsItsRun(t *testing.T) {
	rt := promptRT()
	h := startBridge(t, rt, config{})
	h.sendRecord(`{"jsonrpc":"2.0","id":"p1","method":"pi/prompt","params":{"message":"hi"}}`)
	resp := h.await("prompt", func(m *msg) bool { return m.isResponse() && m.id() == `"p1"` })
	require.Nil(t, resp.errObj(), resp)
	h.await("agent_start", func(m *msg) bool { return m.isNotification("pi/event") })

	// Cancelling some other request aborts nothing.
	h.notify("$/cancelRequest", `{"id":"p2"}`)
	h.notify("$/cancelRequest", `{"id":1}`)
	h.sync()
	require.Empty(t, rt.aborts)

	h.notify("$/cancelRequest", `{"id":"p1"}`)
	select {
	case <-rt.aborts:
	case <-time.After(waitTimeout):
		t.Fatal("$/cancelRequest of the prompt did not abort its run")
	}
}

// State commands run one after another in arrival order, each answered
// before the next starts, though every handler leaves the read loop.
// Regression (issue 5): a command's name borrowed the frame, so commands
// read while an earlier one ran were run under the next frame's bytes.
func TestStateCommandsRunInArrivalOrder(t *testing.T) {
	rt := newFakeRT()
	started, release := make(chan struct{}), make(chan struct{})
	rt.setSessionName = func(_ context.Context, p api.NameParams) error {
		if p.Name == "0" {
			close(started)
			<-release
		}
		return nil
	}
	h := startBridge(t, rt, config{})
	var ids []int
	var want []string
	for i := range 20 {
		ids = append(ids, h.call("pi/set_session_name", fmt.Sprintf(`{"name":"%d"}`, i)))
		want = append(want, fmt.Sprint(i))
	}
	// Every request has been read (and handed off) by now; none may
	// have overtaken the first, which still waits.
	for _, m := range h.sync() {
		t.Errorf("answered before the first command finished: %s", m)
	}
	waitClosed(t, started, "the first command")
	assert.Equal(t, []string{"0"}, rt.sessionNames())
	close(release)
	for _, id := range ids {
		m := h.next()
		require.True(t, isResponseTo(id)(m), "want the response to %d, got %s", id, m)
		require.Nil(t, m.errObj(), m.String())
	}
	assert.Equal(t, want, rt.sessionNames())
}

// A notification whose handler fails is reported, not fatal.
func TestFailingNotificationKeepsTheConnection(t *testing.T) {
	rt := stateRT()
	release := make(chan struct{})
	rt.setSessionName = func(context.Context, api.NameParams) error {
		<-release
		return nil
	}
	h := startBridge(t, rt, config{})
	// The notifications wait their turn behind a command still running
	// while the read loop reads (and its reader reuses the buffer of)
	// the frames after them: what they report must still name them.
	first := h.call("pi/set_session_name", `{"name":"hold"}`)
	h.notify("pi/set_thinking_level", `{"level":"loud"}`)
	// A panicking command sent as a notification, too.
	h.notify("pi/get_messages", nil)
	h.sync()
	h.sync()
	close(release)
	require.Nil(t, h.await("the first command", isResponseTo(first)).errObj())

	err := h.awaitReport("notification pi/set_thinking_level")
	assert.ErrorContains(t, err, `field "level"`)
	err = h.awaitReport("notification pi/get_messages")
	assert.ErrorContains(t, err, "internal error in get_messages")
	resp := h.request("pi/get_state", nil)
	require.Nil(t, resp.errObj(), resp)
}

// guard keeps the connection alive when a handler panics or a
// notification's handler fails; bare jsonrpc2 would end it.
func TestGuardKeepsTheConnectionAlive(t *testing.T) {
	var mu sync.Mutex
	var reports []string
	b := New(Options{Report: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, err.Error())
	}})
	srvEnd, cliEnd := net.Pipe()
	srv := jsonrpc2.NewConn(jsonrpc2.NewStream(srvEnd))
	srv.Go(context.Background(), b.guard(func(_ context.Context, req *jsonrpc2.Request) (any, error) {
		switch req.Method() {
		case "boom":
			panic("kaboom")
		case "fail":
			return nil, errors.New("nope")
		}
		return "fine", nil
	}))
	cli := jsonrpc2.NewConn(jsonrpc2.NewStream(cliEnd))
	cli.Go(context.Background(), jsonrpc2.MethodNotFoundHandler)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()

	_, err := cli.Call(ctx, "boom", nil, nil)
	var je *jsonrpc2.Error
	require.ErrorAs(t, err, &je)
	assert.Equal(t, jsonrpc2.InternalError, je.Code)
	assert.Contains(t, je.Message, "kaboom")

	require.NoError(t, cli.Notify(ctx, "boom", nil))
	require.NoError(t, cli.Notify(ctx, "fail", nil))
	var s string
	_, err = cli.Call(ctx, "ok", nil, &s)
	require.NoError(t, err, "the connection must survive")
	assert.Equal(t, "fine", s)
	_, err = cli.Call(ctx, "fail", nil, nil)
	require.ErrorContains(t, err, "nope")

	require.NoError(t, cli.Close())
	select {
	case <-srv.Done():
	case <-time.After(waitTimeout):
		t.Fatal("the server end did not see the client go")
	}
	_ = srv.Close()
	assert.NoError(t, srv.Err())
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reports, 2)
	assert.Contains(t, reports[0], "boom")
	assert.Contains(t, reports[1], "nope")
}

func TestCompactShowsItsOwnProgress(t *testing.T) {
	rt := newFakeRT()
	rt.compact = func(context.Context, api.CompactParams) (api.CompactionResult, error) {
		return api.CompactionResult{Summary: "short", FirstKeptEntryID: "e1", TokensBefore: 10}, nil
	}
	h := startBridge(t, rt, config{auto: acceptProgress})
	require.Nil(t, h.initialize(capsProgress, "").errObj())
	resp := h.request("pi/compact", `{}`)
	require.Nil(t, resp.errObj(), resp)
	var res api.CompactionResult
	require.NoError(t, json.Unmarshal(resp.result(), &res))
	assert.Equal(t, "short", res.Summary)
	begin := h.await("begin", func(m *msg) bool { return m.isNotification("$/progress") })
	assert.JSONEq(t, `{"token":"gopi-1","value":{"kind":"begin","title":"gopi","cancellable":true,"message":"Compacting context"}}`, string(begin.params()))
	end := h.await("end", func(m *msg) bool { return m.isNotification("$/progress") })
	assert.JSONEq(t, `{"token":"gopi-1","value":{"kind":"end"}}`, string(end.params()))
}

// A JSON-RPC 2.0 batch is answered as one array. Its members are handled
// like single requests, but their responses go out together, so no
// member may wait for its own response to be written before the next
// command starts. Regression (issue 5): that stalled the batch and every
// command after it.
func TestBatches(t *testing.T) {
	rt := promptRT()
	h := startBridge(t, rt, config{})

	h.sendRecord(`[{"jsonrpc":"2.0","id":"a","method":"pi/set_session_name","params":{"name":"x"}},` +
		`{"jsonrpc":"2.0","method":"pi/set_session_name","params":{"name":"y"}},` +
		`{"jsonrpc":"2.0","id":"b","method":"pi/get_state"},` +
		`{"jsonrpc":"2.0","id":"c","method":"pi/no_such_command"}]`)
	m := h.next()
	var batch []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(m.raw, &batch), "want an array, got %s", m)
	require.Len(t, batch, 3, m.String())
	byID := map[string]map[string]json.RawMessage{}
	for _, r := range batch {
		byID[string(r["id"])] = r
	}
	assert.Equal(t, "null", string(byID[`"a"`]["result"]))
	assert.Contains(t, string(byID[`"b"`]["result"]), `"sessionId":"s1"`)
	assert.Contains(t, string(byID[`"c"`]["error"]), `-32601`)
	assert.Equal(t, []string{"x", "y"}, rt.sessionNames())
	require.Nil(t, h.request("pi/get_state", nil).errObj(), "a command after the batch")

	// A prompt in a batch still starts its run.
	h.sendRecord(`[{"jsonrpc":"2.0","id":"p","method":"pi/prompt","params":{"message":"hi"}}]`)
	h.await("the batch's response", func(m *msg) bool { return len(m.raw) > 0 && m.raw[0] == '[' })
	ev := h.await("agent_start", isEvent)
	assert.JSONEq(t, `{"type":"agent_start"}`, string(ev.params()))
	require.Nil(t, h.request("pi/get_state", nil).errObj())

	// An empty batch is an invalid request.
	h.sendRecord(`[]`)
	errorResponse(t, h.next(), "null", -32600)
	stillServes(t, h)
}
