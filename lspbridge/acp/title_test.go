package acp

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

// fakeRuntime is a runtime whose events the test sends; the commands it
// does not serve panic (the embedded nil Server).
type fakeRuntime struct {
	api.Server
	mu  sync.Mutex
	sub func(api.Event)
}

func (f *fakeRuntime) GetState(context.Context) (api.State, error) {
	return api.State{SessionID: "s-1"}, nil
}

func (f *fakeRuntime) Subscribe(fn func(api.Event)) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sub = fn
	return func() {}
}

func (f *fakeRuntime) emit(ev api.Event) {
	f.mu.Lock()
	fn := f.sub
	f.mu.Unlock()
	fn(ev)
}

// GetCommands fails: no available_commands_update comes between the
// frames the test awaits.
func (f *fakeRuntime) GetCommands(context.Context) (api.CommandsResult, error) {
	return api.CommandsResult{}, errors.New("the stand-in has no commands")
}

func (f *fakeRuntime) Close(context.Context) error { return nil }
func (f *fakeRuntime) Abort(context.Context) error { return nil }
func (f *fakeRuntime) History() []llm.Message      { return nil }
func (f *fakeRuntime) Bind(api.Client)             {}

// A session that gets a name (an extension's pi.setSessionName) sends
// its title at once, whether a prompt runs or not.
func TestNamedSessionSendsItsTitle(t *testing.T) {
	schema := schemaFor(t, "SessionNotification")
	rt := &fakeRuntime{}
	c := serveRuntime(t, rt)
	c.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}}})
	assert.Equal(t, "s-1", c.next()["result"].(map[string]any)["sessionId"])

	name := "Treasure map"
	rt.emit(api.SessionInfoChanged{Name: &name})
	// The update comes before the answer to a request sent after it.
	c.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "no/such", "params": map[string]any{}})
	m := c.next()
	assert.Equal(t, "session/update", m["method"])
	params := m["params"].(map[string]any)
	assert.True(t, schema.Validate(params).IsValid(), "%v", params)
	update := params["update"].(map[string]any)
	assert.Equal(t, "session_info_update", update["sessionUpdate"])
	assert.Equal(t, name, update["title"])
	assert.EqualValues(t, 2, c.next()["id"])
	c.close()
}

// A read's title names the lines it reads.
func TestReadTitleLines(t *testing.T) {
	for args, want := range map[string]string{
		`{"path":"src/main.go"}`:                        "Read src/main.go",
		`{"path":"src/main.go","offset":10,"limit":31}`: "Read src/main.go:10-40",
		`{"path":"src/main.go","offset":10}`:            "Read src/main.go:10",
		`{"path":"src/main.go","limit":5}`:              "Read src/main.go:1-5",
	} {
		assert.Equal(t, want, describeTool("/p", "read", json.RawMessage(args)).title, args)
	}
}
