package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kaptinlin/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/rpc"
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

// acpConn serves one connection to a runtime over pipes.
type acpConn struct {
	t      *testing.T
	in     *io.PipeWriter
	frames chan map[string]any
	done   chan error
}

func serveRuntime(t *testing.T, rt Runtime) *acpConn {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &acpConn{t: t, in: inW, frames: make(chan map[string]any, 16), done: make(chan error, 1)}
	go func() {
		c.done <- Serve(context.Background(), rpc.NewLineReader(inR, 0), rpc.NewWriter(outW, rpc.FramingNewline), Options{
			NewRuntime: func(context.Context, SessionConfig) (Runtime, error) { return rt, nil },
		})
		_ = outW.Close()
	}()
	go func() {
		defer close(c.frames)
		lines := bufio.NewScanner(outR)
		for lines.Scan() {
			var m map[string]any
			if json.Unmarshal(lines.Bytes(), &m) == nil {
				c.frames <- m
			}
		}
	}()
	return c
}

func (c *acpConn) next() map[string]any {
	m, ok := <-c.frames
	require.True(c.t, ok, "gopi's output ended")
	return m
}

func (c *acpConn) send(v any) {
	b, err := json.Marshal(v)
	require.NoError(c.t, err)
	_, err = c.in.Write(append(b, '\n'))
	require.NoError(c.t, err)
}

func (c *acpConn) close() {
	require.NoError(c.t, c.in.Close())
	require.NoError(c.t, <-c.done)
}

// open initializes the connection with the client's capabilities and
// opens a session.
func (c *acpConn) open(caps map[string]any) {
	c.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": 1, "clientCapabilities": caps}})
	assert.EqualValues(c.t, 1, c.next()["id"])
	c.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": map[string]any{"cwd": c.t.TempDir(), "mcpServers": []any{}}})
	assert.EqualValues(c.t, 2, c.next()["id"])
}

func elicitationSchemaValidator(t *testing.T) *jsonschema.Schema {
	raw, err := os.ReadFile(filepath.Join("testdata", "schema", "v1", "schema.json"))
	require.NoError(t, err)
	var root map[string]any
	require.NoError(t, json.Unmarshal(raw, &root))
	doc, err := json.Marshal(map[string]any{"$schema": root["$schema"], "$defs": root["$defs"], "$ref": "#/$defs/CreateElicitationRequest"})
	require.NoError(t, err)
	schema, err := jsonschema.NewCompiler().Compile(doc)
	require.NoError(t, err)
	return schema
}

// An extension's dialogs go to a client that declares form elicitation
// as one-field forms, and their answers come back as the dialog's.
func TestDialogsAsElicitation(t *testing.T) {
	schema := elicitationSchemaValidator(t)
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
