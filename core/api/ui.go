package api

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/google/uuid"
)

// UIMethod is an extension UI request's "method".
type UIMethod string

const (
	UISelect        UIMethod = "select"
	UIConfirm       UIMethod = "confirm"
	UIInput         UIMethod = "input"
	UIEditor        UIMethod = "editor"
	UINotify        UIMethod = "notify"
	UISetStatus     UIMethod = "setStatus"
	UISetWidget     UIMethod = "setWidget"
	UISetTitle      UIMethod = "setTitle"
	UISetEditorText UIMethod = "set_editor_text"
)

// IsDialog reports whether the method waits for an answer.
func (m UIMethod) IsDialog() bool {
	return m == UISelect || m == UIConfirm || m == UIInput || m == UIEditor
}

// UIRequest is an "extension_ui_request". Only the fields of its method
// are set.
type UIRequest struct {
	ID          string   `json:"id"`
	Method      UIMethod `json:"method"`
	Title       string   `json:"title,omitempty"`
	Message     string   `json:"message,omitempty"`
	Options     []string `json:"options,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Prefill     string   `json:"prefill,omitempty"`
	// Timeout in milliseconds; the request resolves as cancelled after it.
	Timeout         int64    `json:"timeout,omitempty"`
	NotifyType      string   `json:"notifyType,omitempty"`
	StatusKey       string   `json:"statusKey,omitempty"`
	StatusText      *string  `json:"statusText,omitempty"`
	WidgetKey       string   `json:"widgetKey,omitempty"`
	WidgetLines     []string `json:"widgetLines,omitempty"`
	WidgetPlacement string   `json:"widgetPlacement,omitempty"`
	Text            *string  `json:"text,omitempty"`
	// Details is gopi's extra for richer clients (the approval gate puts
	// the tool name, arguments and a diff here). pi clients ignore it.
	Details any `json:"details,omitempty"`
}

func (UIRequest) EventType() string { return EventExtensionUIRequest }

func (r UIRequest) MarshalJSON() ([]byte, error) {
	type alias UIRequest
	return typed(EventExtensionUIRequest, alias(r))
}

// UIResponse is an "extension_ui_response".
type UIResponse struct {
	ID        string  `json:"id"`
	Value     *string `json:"value,omitempty"`
	Confirmed *bool   `json:"confirmed,omitempty"`
	Cancelled bool    `json:"cancelled,omitempty"`
	// Content is gopi's extra for an approval question about an edit or
	// write: the whole text the user wants the file to hold, the proposal
	// as they changed it before answering Allow. nil keeps the proposal.
	Content *string `json:"content,omitempty"`
}

// Cancelled is the answer a dialog gets when nobody answered.
func Cancelled(id string) UIResponse { return UIResponse{ID: id, Cancelled: true} }

// UIBroker matches dialog requests with their responses for a dialect that
// carries both on one stream (pi's native protocol): it sends the
// request, then waits for [UIBroker.Resolve] with the same id, the
// request's timeout, or ctx.
type UIBroker struct {
	send func(UIRequest) error

	mu      sync.Mutex // guards pending and shut
	pending map[string]chan UIResponse
	shut    bool // nobody can answer any more
}

// NewUIBroker sends requests with send.
func NewUIBroker(send func(UIRequest) error) *UIBroker {
	return &UIBroker{send: send, pending: map[string]chan UIResponse{}}
}

// Ask sends a dialog request and waits for its answer. A timeout, ctx's
// end or a send failure resolves it as cancelled, never a hang.
func (b *UIBroker) Ask(ctx context.Context, req UIRequest) UIResponse {
	if req.ID == "" {
		req.ID = uuid.NewString()
	}
	ch := make(chan UIResponse, 1)
	b.mu.Lock()
	if b.shut {
		b.mu.Unlock()
		return Cancelled(req.ID)
	}
	b.pending[req.ID] = ch
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.pending, req.ID)
		b.mu.Unlock()
	}()
	if err := b.send(req); err != nil {
		return Cancelled(req.ID)
	}
	var timeout <-chan time.Time
	if req.Timeout > 0 {
		t := time.NewTimer(time.Duration(req.Timeout) * time.Millisecond)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case r := <-ch:
		return r
	case <-timeout:
		return Cancelled(req.ID)
	case <-ctx.Done():
		return Cancelled(req.ID)
	}
}

// Notify sends a fire-and-forget request.
func (b *UIBroker) Notify(req UIRequest) {
	if req.ID == "" {
		req.ID = uuid.NewString()
	}
	_ = b.send(req)
}

// Resolve delivers a client's response; it reports false when no request
// with that id is waiting (late, duplicate or unknown).
func (b *UIBroker) Resolve(r UIResponse) bool {
	b.mu.Lock()
	ch, ok := b.pending[r.ID]
	if ok {
		delete(b.pending, r.ID)
	}
	b.mu.Unlock()
	if ok {
		ch <- r
	}
	return ok
}

// Shut resolves every waiting dialog as cancelled and every later one at
// once: the client can no longer answer (its input ended).
func (b *UIBroker) Shut() {
	b.mu.Lock()
	b.shut = true
	b.mu.Unlock()
	b.CancelAll()
}

// CancelAll resolves every waiting dialog as cancelled (the client left).
func (b *UIBroker) CancelAll() {
	b.mu.Lock()
	pending := b.pending
	b.pending = map[string]chan UIResponse{}
	b.mu.Unlock()
	for id, ch := range pending {
		ch <- Cancelled(id)
	}
}

// ParseUIResponse decodes an extension_ui_response record.
func ParseUIResponse(raw json.RawMessage) (UIResponse, error) {
	var r UIResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, &ParamError{Command: CmdExtensionUIResponse, Reason: err.Error()}
	}
	if r.ID == "" {
		return r, &ParamError{Command: CmdExtensionUIResponse, Field: "id", Reason: "is required"}
	}
	return r, nil
}
