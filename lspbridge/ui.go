package lspbridge

import (
	"context"
	"slices"
	"time"

	"go.lsp.dev/jsonrpc2"

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

// LSP MessageType values.
const (
	messageError   = 1
	messageWarning = 2
	messageInfo    = 3
)

// Answers of a confirm dialog.
const (
	confirmYes = "Yes"
	confirmNo  = "No"
)

type actionItem struct {
	Title string `json:"title"`
}

// showMessageRequestParams is LSP's ShowMessageRequestParams; "details" is
// gopi's extra (the approval gate's tool, arguments and diff), which LSP
// clients ignore.
type showMessageRequestParams struct {
	Type    int          `json:"type"`
	Message string       `json:"message"`
	Actions []actionItem `json:"actions"`
	Details any          `json:"details,omitempty"`
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

type valueResult struct {
	Value     *string `json:"value"`
	Cancelled bool    `json:"cancelled"`
}

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
		actions := make([]actionItem, len(req.Options))
		for i, o := range req.Options {
			actions[i] = actionItem{Title: o}
		}
		var res *actionItem
		id, err = b.jc.Call(ctx, methodShowMessageRequest, showMessageRequestParams{
			Type: messageInfo, Message: req.Title, Actions: actions, Details: req.Details,
		}, &res)
		if err == nil && res != nil && slices.Contains(req.Options, res.Title) {
			resp.Value = &res.Title
		} else {
			resp.Cancelled = true
		}
	case api.UIConfirm:
		msg := req.Title
		if req.Message != "" {
			msg += "\n\n" + req.Message
		}
		var res *actionItem
		id, err = b.jc.Call(ctx, methodShowMessageRequest, showMessageRequestParams{
			Type: messageWarning, Message: msg, Actions: []actionItem{{confirmYes}, {confirmNo}}, Details: req.Details,
		}, &res)
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
		_ = b.jc.Notify(context.Background(), methodCancelRequest, cancelParams{ID: idValue(id)})
	}
	return resp
}

type cancelParams struct {
	ID any `json:"id"`
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
		t := messageInfo
		switch req.NotifyType {
		case "error":
			t = messageError
		case "warning":
			t = messageWarning
		}
		_ = b.jc.Notify(ctx, methodShowMessage, struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}{t, req.Message})
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
