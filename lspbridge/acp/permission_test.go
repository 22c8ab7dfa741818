package acp

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gopi-dev/gopi/core/api"
)

// askingRuntime is the stand-in runtime of title_test.go that keeps the
// client it is bound to, so the test can ask as an extension would.
type askingRuntime struct {
	*fakeRuntime
	mu     sync.Mutex
	client api.Client
}

func (r *askingRuntime) Bind(c api.Client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.client = c
}

func (r *askingRuntime) ask(req api.UIRequest) api.UIResponse {
	r.mu.Lock()
	c := r.client
	r.mu.Unlock()
	return c.Ask(context.Background(), req)
}

// An extension's dialogs go to a client that declares form elicitation
// as one-field forms, and their answers come back as the dialog's.
func TestDialogsAsElicitation(t *testing.T) {
	schema := schemaFor(t, "CreateElicitationRequest")
	rt := &askingRuntime{fakeRuntime: &fakeRuntime{}}
	c := serveRuntime(t, rt)
	c.open(map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})

	for _, tc := range []struct {
		req    api.UIRequest
		field  string
		schema map[string]any
		answer map[string]any
		want   api.UIResponse
	}{
		{
			req:    api.UIRequest{ID: "q1", Method: api.UISelect, Title: "Pick a colour", Options: []string{"red", "blue"}},
			field:  "value",
			schema: map[string]any{"type": "string", "title": "Pick a colour", "enum": []any{"red", "blue"}},
			answer: map[string]any{"action": "accept", "content": map[string]any{"value": "blue"}},
			want:   api.UIResponse{ID: "q1", Value: new("blue")},
		},
		{
			req:    api.UIRequest{ID: "q2", Method: api.UIConfirm, Title: "Deploy?", Message: "to production"},
			field:  "confirmed",
			schema: map[string]any{"type": "boolean", "title": "Deploy?"},
			answer: map[string]any{"action": "decline"},
			want:   api.UIResponse{ID: "q2", Confirmed: new(false)},
		},
		{
			req:    api.UIRequest{ID: "q3", Method: api.UIEditor, Title: "Commit message", Prefill: "fix: "},
			field:  "value",
			schema: map[string]any{"type": "string", "title": "Commit message", "default": "fix: "},
			answer: map[string]any{"action": "accept", "content": map[string]any{"value": "fix: typo"}},
			want:   api.UIResponse{ID: "q3", Value: new("fix: typo")},
		},
		{
			req:    api.UIRequest{ID: "q4", Method: api.UIInput, Title: "Name", Placeholder: "your name"},
			field:  "value",
			schema: map[string]any{"type": "string", "title": "Name", "description": "your name"},
			answer: map[string]any{"action": "cancel"},
			want:   api.Cancelled("q4"),
		},
	} {
		got := make(chan api.UIResponse, 1)
		go func() { got <- rt.ask(tc.req) }()
		m := c.next()
		assert.Equal(t, "elicitation/create", m["method"])
		params := m["params"].(map[string]any)
		assert.True(t, schema.Validate(params).IsValid(), "%v", params)
		assert.Equal(t, "form", params["mode"])
		assert.Equal(t, "s-1", params["sessionId"])
		rs := params["requestedSchema"].(map[string]any)
		assert.Equal(t, tc.schema, rs["properties"].(map[string]any)[tc.field], "%s", tc.req.Method)
		assert.Equal(t, []any{tc.field}, rs["required"])
		c.send(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": tc.answer})
		assert.Equal(t, tc.want, <-got, "%s", tc.req.Method)
	}
	c.close()
}

// Without form elicitation, a dialog is cancelled at once; nothing is
// sent.
func TestDialogsWithoutElicitation(t *testing.T) {
	rt := &askingRuntime{fakeRuntime: &fakeRuntime{}}
	c := serveRuntime(t, rt)
	c.open(map[string]any{"elicitation": map[string]any{"url": map[string]any{}}})
	assert.Equal(t, api.Cancelled("q"), rt.ask(api.UIRequest{ID: "q", Method: api.UISelect, Title: "Pick", Options: []string{"a"}}))
	c.close()
	_, more := <-c.frames
	assert.False(t, more, "nothing sent for the dialog")
}

// The sandbox's escape question is a session/request_permission with
// two options, allow once and reject once, on the call's card, titled
// as a step out of the sandbox; an option it did not offer rejects it.
func TestSandboxEscapeAsPermission(t *testing.T) {
	rt := &askingRuntime{fakeRuntime: &fakeRuntime{}}
	c := serveRuntime(t, rt)
	c.open(map[string]any{})
	req := api.UIRequest{ID: "q", Method: api.UISelect, Title: "escape?", Options: []string{api.AnswerAllowOnce, api.AnswerDeny},
		Details: api.ApprovalDetails{ToolName: "bash", ToolCallID: "b1", Args: []byte(`{"command":"touch ../x"}`), SandboxEscape: true}}
	for _, tc := range []struct {
		option string
		want   api.UIResponse
	}{
		{"allow_once", api.UIResponse{ID: "q", Value: new(api.AnswerAllow)}},
		{"reject_once", api.UIResponse{ID: "q", Value: new(api.AnswerDeny)}},
		{"allow_always", api.Cancelled("q")},
	} {
		got := make(chan api.UIResponse, 1)
		go func() { got <- rt.ask(req) }()
		m := c.next()
		assert.Equal(t, "session/request_permission", m["method"])
		params := m["params"].(map[string]any)
		assert.Equal(t, []any{
			map[string]any{"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
			map[string]any{"optionId": "reject_once", "name": "Deny", "kind": "reject_once"},
		}, params["options"])
		tc0 := params["toolCall"].(map[string]any)
		assert.Equal(t, "b1", tc0["toolCallId"])
		assert.Equal(t, "Run outside gopi's sandbox: touch ../x", tc0["title"])
		c.send(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": tc.option}}})
		assert.Equal(t, tc.want, <-got, tc.option)
	}
	c.close()
}
