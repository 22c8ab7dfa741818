package lspbridge

import (
	"context"
	"slices"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/gopi-dev/gopi/core/api"
)

// Methods of the extension UI mapping (architecture.md's table).
const (
	methodShowMessageRequest = "window/showMessageRequest"
	methodShowMessage        = "window/showMessage"
	methodUIInput            = "pi/ui/input"
	methodUIEditor           = "pi/ui/editor"
	methodUISetStatus        = "pi/ui/setStatus"
	methodUISetWidget        = "pi/ui/setWidget"
	methodUISetTitle         = "pi/ui/setTitle"
	methodUISetEditorText    = "pi/ui/setEditorText"
)

// Answers of a confirm dialog.
const (
	confirmYes = "Yes"
	confirmNo  = "No"
)

// messageRequest encodes a window/showMessageRequest: LSP's
// ShowMessageRequestParams, plus "details", gopi's own addition (the
// approval gate's tool, arguments and diff), which LSP clients ignore.
func messageRequest(t protocol.MessageType, msg string, titles []string, details any) (jsonrpc2.RawMessage, error) {
	actions := make([]protocol.MessageActionItem, len(titles))
	for i, title := range titles {
		actions[i] = protocol.MessageActionItem{Title: title}
	}
	raw, err := lspRaw(protocol.ShowMessageRequestParams{Type: t, Message: msg, Actions: actions})
	if err != nil || details == nil {
		return raw, err
	}
	d, err := marshal(details)
	if err != nil {
		return nil, err
	}
	// raw is a JSON object: add the member before its closing brace.
	out := append(raw[:len(raw)-1:len(raw)-1], `,"details":`...)
	out = append(out, d...)
	return append(out, '}'), nil
}

type inputParams struct {
	Title       string `json:"title"`
	Placeholder string `json:"placeholder,omitempty"`
	Timeout     int64  `json:"timeout,omitempty"`
	Details     any    `json:"details,omitempty"`
}

type editorParams struct {
	Title   string `json:"title"`
	Prefill string `json:"prefill,omitempty"`
}

// selectResult is a window/showMessageRequest's result: LSP's
// MessageActionItem, plus "content", gopi's own addition (the file as the
// user changed it before approving an edit or write).
type selectResult struct {
	Title   string  `json:"title"`
	Content *string `json:"content,omitempty"`
}

type valueResult struct {
	Value     *string `json:"value"`
	Cancelled bool    `json:"cancelled"`
}

// CanAsk reports whether the client declared a way to show dialogs of
// kind m (see caps); [Bridge.Ask] resolves the others as cancelled without
// asking anyone.
func (b *Bridge) CanAsk(m api.UIMethod) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.caps.canShow(m)
}

// CanShowDialog is [Bridge.CanAsk], for the built-in commands' dialogs
// (core/host/mcpstate).
func (b *Bridge) CanShowDialog(m api.UIMethod) bool { return b.CanAsk(m) }

// Ask puts a dialog in front of the user through the editor. It never
// hangs: clients that cannot show it get it cancelled at once, a timeout
// or ctx's end cancels the request on the client ($/cancelRequest) and
// resolves it as cancelled, and so does an error from the client.
func (b *Bridge) Ask(ctx context.Context, req api.UIRequest) api.UIResponse {
	b.mu.Lock()
	caps := b.caps
	b.mu.Unlock()
	if !caps.canShow(req.Method) {
		return api.Cancelled(req.ID)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(b.ctx, cancel)
	defer stop()
	if req.Timeout > 0 {
		var cancelT context.CancelFunc
		ctx, cancelT = context.WithTimeout(ctx, time.Duration(req.Timeout)*time.Millisecond)
		defer cancelT()
	}

	var (
		id  jsonrpc2.ID
		err error
	)
	resp := api.UIResponse{ID: req.ID}
	switch req.Method {
	case api.UISelect:
		var params jsonrpc2.RawMessage
		var res *selectResult
		if params, err = messageRequest(protocol.MessageTypeInfo, req.Title, req.Options, req.Details); err == nil {
			id, err = b.jc.Call(ctx, methodShowMessageRequest, params, &res)
		}
		if err == nil && res != nil && slices.Contains(req.Options, res.Title) {
			resp.Value, resp.Content = &res.Title, res.Content
		} else {
			resp.Cancelled = true
		}
	case api.UIConfirm:
		msg := req.Title
		if req.Message != "" {
			msg += "\n\n" + req.Message
		}
		var params jsonrpc2.RawMessage
		var res *protocol.MessageActionItem
		if params, err = messageRequest(protocol.MessageTypeWarning, msg, []string{confirmYes, confirmNo}, req.Details); err == nil {
			id, err = b.jc.Call(ctx, methodShowMessageRequest, params, &res)
		}
		switch {
		case err == nil && res != nil && res.Title == confirmYes:
			yes := true
			resp.Confirmed = &yes
		case err == nil && res != nil && res.Title == confirmNo:
			no := false
			resp.Confirmed = &no
		default:
			resp.Cancelled = true
		}
	case api.UIInput, api.UIEditor:
		var res valueResult
		if req.Method == api.UIInput {
			id, err = b.jc.Call(ctx, methodUIInput, inputParams{Title: req.Title, Placeholder: req.Placeholder, Timeout: req.Timeout, Details: req.Details}, &res)
		} else {
			id, err = b.jc.Call(ctx, methodUIEditor, editorParams{Title: req.Title, Prefill: req.Prefill}, &res)
		}
		if err == nil && !res.Cancelled && res.Value != nil {
			resp.Value = res.Value
		} else {
			resp.Cancelled = true
		}
	}
	if err != nil && ctx.Err() != nil && id.IsValid() {
		// Nobody answered in time (or the run ended): take the dialog
		// down on the client.
		if params, err := lspRaw(protocol.CancelParams{ID: requestID(id)}); err == nil {
			_ = b.jc.Notify(context.Background(), methodCancelRequest, params)
		}
	}
	return resp
}

// idValue is an id as JSON encodes it.
func idValue(id jsonrpc2.ID) any {
	if n, ok := id.Number(); ok {
		return n
	}
	s, _ := id.StringValue()
	return s
}

// Notify sends a fire-and-forget UI request: notify becomes
// window/showMessage; setStatus, setWidget, setTitle and set_editor_text
// become pi/ui/* notifications for clients that declared
// experimental.pi.ui.
func (b *Bridge) Notify(req api.UIRequest) {
	b.mu.Lock()
	caps := b.caps
	b.mu.Unlock()
	ctx := context.Background()
	switch req.Method {
	case api.UINotify:
		t := protocol.MessageTypeInfo
		switch req.NotifyType {
		case "error":
			t = protocol.MessageTypeError
		case "warning":
			t = protocol.MessageTypeWarning
		}
		if params, err := lspRaw(protocol.ShowMessageParams{Type: t, Message: req.Message}); err == nil {
			_ = b.jc.Notify(ctx, methodShowMessage, params)
		}
		return
	}
	if !caps.piUI {
		return
	}
	var method string
	var params any
	switch req.Method {
	case api.UISetStatus:
		method, params = methodUISetStatus, struct {
			StatusKey  string  `json:"statusKey"`
			StatusText *string `json:"statusText"`
		}{req.StatusKey, req.StatusText}
	case api.UISetWidget:
		method, params = methodUISetWidget, struct {
			WidgetKey       string   `json:"widgetKey"`
			WidgetLines     []string `json:"widgetLines"`
			WidgetPlacement string   `json:"widgetPlacement,omitempty"`
		}{req.WidgetKey, req.WidgetLines, req.WidgetPlacement}
	case api.UISetTitle:
		method, params = methodUISetTitle, struct {
			Title string `json:"title"`
		}{req.Title}
	case api.UISetEditorText:
		method, params = methodUISetEditorText, struct {
			Text *string `json:"text"`
		}{req.Text}
	default:
		return
	}
	_ = b.jc.Notify(ctx, method, params)
}
