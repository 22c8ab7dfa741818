package lspbridge

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

// ask puts a dialog up from the runtime's side, through the client it was
// bound to, as an extension does from its own goroutine.
func ask(ctx context.Context, h *harness, req api.UIRequest) <-chan api.UIResponse {
	c := h.rt.ui()
	ch := make(chan api.UIResponse, 1)
	go func() { ch <- c.Ask(ctx, req) }()
	return ch
}

func answer(t *testing.T, ch <-chan api.UIResponse) api.UIResponse {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitTimeout):
		t.Fatal("the dialog never resolved")
	}
	return api.UIResponse{}
}

func isShowMessageRequest(m *msg) bool { return m.isRequest("window/showMessageRequest") }

func strp(s string) *string { return &s }
func boolp(b bool) *bool    { return &b }

func TestSelectIsShowMessageRequest(t *testing.T) {
	h := startBridge(t, stateRT(), config{})
	require.Nil(t, h.initialize(capsLSP, "").errObj())
	sel := api.UIRequest{ID: "u1", Method: api.UISelect, Title: "Pick one", Options: []string{"A", "B", "C"}}

	for _, tc := range []struct {
		name, result string
		want         api.UIResponse
	}{
		{"chosen", `{"title":"B"}`, api.UIResponse{ID: "u1", Value: strp("B")}},
		{"dismissed", `null`, api.UIResponse{ID: "u1", Cancelled: true}},
		{"not an option", `{"title":"Z"}`, api.UIResponse{ID: "u1", Cancelled: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := ask(context.Background(), h, sel)
			m := h.await("select", isShowMessageRequest)
			assert.JSONEq(t, `{"type":3,"message":"Pick one","actions":[{"title":"A"},{"title":"B"},{"title":"C"}]}`, string(m.params()))
			h.reply(m, tc.result)
			assert.Equal(t, tc.want, answer(t, ch))
		})
	}

	t.Run("client error", func(t *testing.T) {
		ch := ask(context.Background(), h, sel)
		h.replyError(h.await("select", isShowMessageRequest), -32603, "cannot show it")
		assert.Equal(t, api.UIResponse{ID: "u1", Cancelled: true}, answer(t, ch))
	})

	t.Run("details", func(t *testing.T) {
		req := sel
		req.Details = map[string]any{"toolName": "bash"}
		ch := ask(context.Background(), h, req)
		m := h.await("select", isShowMessageRequest)
		assert.JSONEq(t, `{"type":3,"message":"Pick one","actions":[{"title":"A"},{"title":"B"},{"title":"C"}],"details":{"toolName":"bash"}}`, string(m.params()))
		h.reply(m, `{"title":"A"}`)
		assert.Equal(t, strp("A"), answer(t, ch).Value)
	})
}

func TestConfirmIsShowMessageRequest(t *testing.T) {
	h := startBridge(t, stateRT(), config{})
	require.Nil(t, h.initialize(capsLSP, "").errObj())
	conf := api.UIRequest{ID: "c1", Method: api.UIConfirm, Title: "Run it?", Message: "rm -rf build"}

	for _, tc := range []struct {
		result string
		want   api.UIResponse
	}{
		{`{"title":"Yes"}`, api.UIResponse{ID: "c1", Confirmed: boolp(true)}},
		{`{"title":"No"}`, api.UIResponse{ID: "c1", Confirmed: boolp(false)}},
		{`null`, api.UIResponse{ID: "c1", Cancelled: true}},
		{`{"title":"Maybe"}`, api.UIResponse{ID: "c1", Cancelled: true}},
	} {
		ch := ask(context.Background(), h, conf)
		m := h.await("confirm", isShowMessageRequest)
		assert.JSONEq(t, `{"type":2,"message":"Run it?\n\nrm -rf build","actions":[{"title":"Yes"},{"title":"No"}]}`, string(m.params()))
		h.reply(m, tc.result)
		assert.Equal(t, tc.want, answer(t, ch), tc.result)
	}

	// Without a message there is no blank line.
	ch := ask(context.Background(), h, api.UIRequest{ID: "c2", Method: api.UIConfirm, Title: "Sure?"})
	m := h.await("confirm", isShowMessageRequest)
	assert.JSONEq(t, `{"type":2,"message":"Sure?","actions":[{"title":"Yes"},{"title":"No"}]}`, string(m.params()))
	h.reply(m, `{"title":"Yes"}`)
	assert.Equal(t, boolp(true), answer(t, ch).Confirmed)
}

func TestInputAndEditorArePiUIRequests(t *testing.T) {
	h := startBridge(t, stateRT(), config{})
	require.Nil(t, h.initialize(capsPiUI, "").errObj())

	for _, tc := range []struct {
		name   string
		req    api.UIRequest
		method string
		params string
		result string
		want   api.UIResponse
	}{
		{"input", api.UIRequest{ID: "i1", Method: api.UIInput, Title: "Name", Placeholder: "your name"},
			"pi/ui/input", `{"title":"Name","placeholder":"your name"}`, `{"value":"Ada"}`, api.UIResponse{ID: "i1", Value: strp("Ada")}},
		{"input empty value", api.UIRequest{ID: "i2", Method: api.UIInput, Title: "Name"},
			"pi/ui/input", `{"title":"Name"}`, `{"value":""}`, api.UIResponse{ID: "i2", Value: strp("")}},
		{"input cancelled", api.UIRequest{ID: "i3", Method: api.UIInput, Title: "Name"},
			"pi/ui/input", `{"title":"Name"}`, `{"cancelled":true}`, api.UIResponse{ID: "i3", Cancelled: true}},
		{"input null", api.UIRequest{ID: "i4", Method: api.UIInput, Title: "Name"},
			"pi/ui/input", `{"title":"Name"}`, `null`, api.UIResponse{ID: "i4", Cancelled: true}},
		{"editor", api.UIRequest{ID: "e1", Method: api.UIEditor, Title: "Edit", Prefill: "draft"},
			"pi/ui/editor", `{"title":"Edit","prefill":"draft"}`, `{"value":"final"}`, api.UIResponse{ID: "e1", Value: strp("final")}},
		{"editor cancelled", api.UIRequest{ID: "e2", Method: api.UIEditor, Title: "Edit"},
			"pi/ui/editor", `{"title":"Edit"}`, `{"cancelled":true}`, api.UIResponse{ID: "e2", Cancelled: true}},
		// A pi-aware client answers window/showMessageRequest too.
		{"select", api.UIRequest{ID: "s1", Method: api.UISelect, Title: "Pick", Options: []string{"x"}},
			"window/showMessageRequest", `{"type":3,"message":"Pick","actions":[{"title":"x"}]}`, `{"title":"x"}`, api.UIResponse{ID: "s1", Value: strp("x")}},
		// An approval's answer may carry the user's version of the file.
		{"select with content", api.UIRequest{ID: "s2", Method: api.UISelect, Title: "Allow write: a.txt?", Options: []string{"Allow", "Deny"}},
			"window/showMessageRequest", `{"type":3,"message":"Allow write: a.txt?","actions":[{"title":"Allow"},{"title":"Deny"}]}`,
			`{"title":"Allow","content":"mine\n"}`, api.UIResponse{ID: "s2", Value: strp("Allow"), Content: strp("mine\n")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := ask(context.Background(), h, tc.req)
			m := h.await(tc.method, func(m *msg) bool { return m.isRequest(tc.method) })
			assert.JSONEq(t, tc.params, string(m.params()))
			h.reply(m, tc.result)
			assert.Equal(t, tc.want, answer(t, ch))
		})
	}
}

// A dialog the client cannot show resolves as cancelled at once: no
// request is sent, and nothing waits for an answer that cannot come.
func TestDialogsTheClientCannotShowAreCancelledAtOnce(t *testing.T) {
	all := []api.UIMethod{api.UISelect, api.UIConfirm, api.UIInput, api.UIEditor}
	for _, tc := range []struct {
		name      string
		caps      string // "" skips initialize
		cancelled []api.UIMethod
	}{
		{"no initialize", "", all},
		{"no capabilities", `{}`, all},
		{"showMessage false", `{"window":{"showMessage":false}}`, all},
		{"pi.ui false", `{"experimental":{"pi":{"ui":false}}}`, all},
		{"LSP client", capsLSP, []api.UIMethod{api.UIInput, api.UIEditor}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startBridge(t, stateRT(), config{})
			if tc.caps != "" {
				require.Nil(t, h.initialize(tc.caps, "").errObj())
			}
			for _, method := range append(tc.cancelled, api.UIMethod("no_such_dialog")) {
				req := api.UIRequest{ID: "d-" + string(method), Method: method, Title: "T", Options: []string{"a"}}
				assert.Equal(t, api.Cancelled(req.ID), h.rt.ui().Ask(context.Background(), req), method)
			}
			assert.Empty(t, h.sync(), "no request may reach the client")
		})
	}
}

// A dialog nobody answers in time is cancelled on the client with
// $/cancelRequest and resolves as cancelled; the late answer is dropped.
func TestDialogTimeoutCancelsTheClientRequest(t *testing.T) {
	h := startBridge(t, stateRT(), config{})
	require.Nil(t, h.initialize(`{"window":{"showMessage":{}},"experimental":{"pi":{"ui":true}}}`, "").errObj())

	for _, tc := range []struct {
		req    api.UIRequest
		method string
	}{
		{api.UIRequest{ID: "t1", Method: api.UISelect, Title: "Quick", Options: []string{"a"}, Timeout: 20}, "window/showMessageRequest"},
		{api.UIRequest{ID: "t2", Method: api.UIInput, Title: "Quick", Timeout: 20}, "pi/ui/input"},
	} {
		ch := ask(context.Background(), h, tc.req)
		m := h.await(tc.method, func(m *msg) bool { return m.isRequest(tc.method) })
		if tc.req.Method == api.UIInput {
			assert.JSONEq(t, `{"title":"Quick","timeout":20}`, string(m.params()), "the client may show the timeout")
		}
		cancel := h.await("$/cancelRequest", func(m *msg) bool { return m.isNotification("$/cancelRequest") })
		assert.JSONEq(t, fmt.Sprintf(`{"id":%s}`, m.id()), string(cancel.params()))
		assert.Equal(t, api.Cancelled(tc.req.ID), answer(t, ch))
		// An answer after the timeout goes nowhere.
		h.reply(m, `{"title":"a","value":"late"}`)
		assert.Empty(t, h.sync())
	}
}

// The asker's context ending (the run was aborted) also takes the dialog
// down, and so does the end of the connection.
func TestDialogEndsWithItsContextAndWithTheConnection(t *testing.T) {
	h := startBridge(t, stateRT(), config{})
	require.Nil(t, h.initialize(capsLSP, "").errObj())
	req := api.UIRequest{ID: "x", Method: api.UIConfirm, Title: "Go?"}

	ctx, cancel := context.WithCancel(context.Background())
	ch := ask(ctx, h, req)
	m := h.await("confirm", isShowMessageRequest)
	cancel()
	c := h.await("$/cancelRequest", func(m *msg) bool { return m.isNotification("$/cancelRequest") })
	assert.JSONEq(t, fmt.Sprintf(`{"id":%s}`, m.id()), string(c.params()))
	assert.Equal(t, api.Cancelled("x"), answer(t, ch))

	ch = ask(context.Background(), h, req)
	h.await("confirm", isShowMessageRequest)
	h.closeInput()
	assert.Equal(t, api.Cancelled("x"), answer(t, ch))
	assert.Equal(t, 0, h.exitCode())
}

func TestNotifyIsShowMessage(t *testing.T) {
	for _, caps := range []string{`{}`, capsLSP, capsPiUI} {
		h := startBridge(t, stateRT(), config{})
		require.Nil(t, h.initialize(caps, "").errObj())
		for _, tc := range []struct {
			notifyType string
			want       int
		}{{"error", 1}, {"warning", 2}, {"info", 3}, {"", 3}} {
			h.rt.ui().Notify(api.UIRequest{ID: "n", Method: api.UINotify, NotifyType: tc.notifyType, Message: "heads <up> & on"})
			m := h.next()
			require.True(t, m.isNotification("window/showMessage"), m.String())
			assert.Equal(t, fmt.Sprintf(`{"type":%d,"message":"heads <up> & on"}`, tc.want), string(m.params()))
		}
	}
}

func TestStatusWidgetTitleAndEditorTextArePiUINotifications(t *testing.T) {
	reqs := []api.UIRequest{
		{ID: "1", Method: api.UISetStatus, StatusKey: "git", StatusText: strp("main*")},
		{ID: "2", Method: api.UISetStatus, StatusKey: "git"},
		{ID: "3", Method: api.UISetWidget, WidgetKey: "todo", WidgetLines: []string{"a", "b"}, WidgetPlacement: "belowEditor"},
		{ID: "4", Method: api.UISetWidget, WidgetKey: "todo"},
		{ID: "5", Method: api.UISetTitle, Title: "gopi: repo"},
		{ID: "6", Method: api.UISetEditorText, Text: strp("draft")},
	}
	want := []struct{ method, params string }{
		{"pi/ui/setStatus", `{"statusKey":"git","statusText":"main*"}`},
		{"pi/ui/setStatus", `{"statusKey":"git","statusText":null}`},
		{"pi/ui/setWidget", `{"widgetKey":"todo","widgetLines":["a","b"],"widgetPlacement":"belowEditor"}`},
		{"pi/ui/setWidget", `{"widgetKey":"todo","widgetLines":null}`},
		{"pi/ui/setTitle", `{"title":"gopi: repo"}`},
		{"pi/ui/setEditorText", `{"text":"draft"}`},
	}

	t.Run("pi.ui client", func(t *testing.T) {
		h := startBridge(t, stateRT(), config{})
		require.Nil(t, h.initialize(capsPiUI, "").errObj())
		for i, req := range reqs {
			h.rt.ui().Notify(req)
			m := h.next()
			require.True(t, m.isNotification(want[i].method), "want %s, got %s", want[i].method, m)
			assert.Equal(t, want[i].params, string(m.params()))
		}
	})

	t.Run("other clients", func(t *testing.T) {
		for _, caps := range []string{"", `{}`, capsLSP} {
			h := startBridge(t, stateRT(), config{})
			if caps != "" {
				require.Nil(t, h.initialize(caps, "").errObj())
			}
			for _, req := range reqs {
				h.rt.ui().Notify(req)
			}
			assert.Empty(t, h.sync(), "caps %s", caps)
		}
	})
}

// Issue 10: experimental.pi.ui may be true, false or a list of the dialog
// kinds the client shows; any other shape is ignored with a note, and
// initialize succeeds whatever the shape.
func TestPiUICapabilityShapes(t *testing.T) {
	all := []api.UIMethod{api.UISelect, api.UIConfirm, api.UIInput, api.UIEditor}
	for _, tc := range []struct {
		name   string
		caps   string
		shown  []api.UIMethod
		report string // a note expected on the report channel
	}{
		{"true", `{"experimental":{"pi":{"ui":true}}}`, all, ""},
		{"false", `{"experimental":{"pi":{"ui":false}}}`, nil, ""},
		{"list", `{"experimental":{"pi":{"ui":["input","editor"]}}}`, []api.UIMethod{api.UIInput, api.UIEditor}, ""},
		{"list wins over showMessage", `{"window":{"showMessage":{}},"experimental":{"pi":{"ui":["confirm"]}}}`, []api.UIMethod{api.UIConfirm}, ""},
		{"empty list", `{"experimental":{"pi":{"ui":[]}}}`, nil, ""},
		{"list with strangers", `{"experimental":{"pi":{"ui":["select",7,"hologram"]}}}`, []api.UIMethod{api.UISelect}, "does not know"},
		{"object", `{"experimental":{"pi":{"ui":{"input":true}}}}`, nil, "neither a boolean nor a list"},
		{"number", `{"experimental":{"pi":{"ui":3}}}`, nil, "neither a boolean nor a list"},
		{"string", `{"experimental":{"pi":{"ui":"yes"}}}`, nil, "neither a boolean nor a list"},
		{"garbage with showMessage", `{"window":{"showMessage":{}},"experimental":{"pi":{"ui":"yes"}}}`, []api.UIMethod{api.UISelect, api.UIConfirm}, "neither a boolean nor a list"},
		{"pi not an object", `{"experimental":{"pi":[1,2]}}`, nil, "experimental.pi is not an object"},
		{"experimental not an object", `{"experimental":"x"}`, nil, "experimental is not an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startBridge(t, stateRT(), config{})
			require.Nil(t, h.initialize(tc.caps, "").errObj(), "initialize must succeed whatever the capability's shape")
			if tc.report != "" {
				h.awaitReport(tc.report)
			}
			for _, method := range all {
				req := api.UIRequest{ID: "d-" + string(method), Method: method, Title: "T", Options: []string{"a"}}
				if !slices.Contains(tc.shown, method) {
					assert.Equal(t, api.Cancelled(req.ID), h.rt.ui().Ask(context.Background(), req), "%s must resolve as cancelled at once", method)
					continue
				}
				ch := ask(context.Background(), h, req)
				m := h.await(string(method), func(m *msg) bool { return !m.isResponse() && m.has("id") })
				h.replyError(m, -32800, "dismissed")
				assert.Equal(t, api.Cancelled(req.ID), answer(t, ch), method)
			}
			assert.Empty(t, h.sync(), "no other request may reach the client")
		})
	}
}

// Issue 10: capabilities are read with go.lsp.dev/protocol's types, and a
// capability of the wrong shape is a note, not a failed initialize.
func TestMisshapenLSPCapabilityDoesNotFailInitialize(t *testing.T) {
	h := startBridge(t, stateRT(), config{})
	res := h.initialize(`{"window":{"workDoneProgress":"yes","showMessage":{}},"experimental":{"pi":{"ui":["input"]}}}`, "")
	require.Nil(t, res.errObj(), "initialize must succeed")
	h.awaitReport("not LSP ClientCapabilities")
	// experimental.pi is still read.
	req := api.UIRequest{ID: "x", Method: api.UISelect, Title: "T", Options: []string{"a"}}
	assert.Equal(t, api.Cancelled("x"), h.rt.ui().Ask(context.Background(), req))
	ch := ask(context.Background(), h, api.UIRequest{ID: "y", Method: api.UIInput, Title: "Name"})
	m := h.await("pi/ui/input", func(m *msg) bool { return m.isRequest("pi/ui/input") })
	h.reply(m, `{"value":"ok"}`)
	got := answer(t, ch)
	require.NotNil(t, got.Value)
	assert.Equal(t, "ok", *got.Value)
}

// Issue 17: a session that cannot be written is shown to the editor's
// user as an error message, besides the pi/event.
func TestSessionWriteErrorIsShownAsAnError(t *testing.T) {
	h := startBridge(t, stateRT(), config{})
	require.Nil(t, h.initialize(`{}`, "").errObj())
	h.b.Emit(api.SessionWriteError{Error: "saving a message: no space left on device", SessionFile: "/s.jsonl"})
	m := h.next()
	require.True(t, m.isNotification("pi/event"), m.String())
	m = h.next()
	require.True(t, m.isNotification("window/showMessage"), m.String())
	assert.Contains(t, string(m.params()), `"type":1`)
	assert.Contains(t, string(m.params()), "no space left on device")
}

// Events go out whole whichever encoder writes them: one the fast path
// declines (a tool result's message_end) still has its params.
func TestEventsTheFastEncoderDeclinesAreSentWhole(t *testing.T) {
	h := startBridge(t, stateRT(), config{})
	require.Nil(t, h.initialize(`{}`, "").errObj())
	h.b.Emit(agent.Event{Type: agent.EventMessageEnd, Message: &llm.ToolResultMessage{ToolCallID: "t", ToolName: "read", Content: llm.Contents{llm.TextContent{Text: "x"}}}})
	h.b.Emit(agent.Event{Type: agent.EventMessageStart, Message: &llm.UserMessage{Content: llm.Contents{llm.TextContent{Text: "hi"}}}})
	for _, want := range []string{`"role":"toolResult"`, `"role":"user"`} {
		m := h.next()
		require.True(t, m.isNotification("pi/event"), m.String())
		assert.Contains(t, string(m.params()), want)
	}
}
