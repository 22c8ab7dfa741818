package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kaptinlin/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/rpc"
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

func (f *fakeRuntime) WaitIdle(context.Context)    {}
func (f *fakeRuntime) Close(context.Context) error { return nil }
func (f *fakeRuntime) Abort(context.Context) error { return nil }
func (f *fakeRuntime) History() []llm.Message      { return nil }
func (f *fakeRuntime) Bind(api.Client)             {}

// A session that gets a name (an extension's pi.setSessionName) sends
// its title at once, whether a prompt runs or not.
func TestNamedSessionSendsItsTitle(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "schema", "v1", "schema.json"))
	require.NoError(t, err)
	var root map[string]any
	require.NoError(t, json.Unmarshal(raw, &root))
	doc, err := json.Marshal(map[string]any{"$schema": root["$schema"], "$defs": root["$defs"], "$ref": "#/$defs/SessionNotification"})
	require.NoError(t, err)
	schema, err := jsonschema.NewCompiler().Compile(doc)
	require.NoError(t, err)

	rt := &fakeRuntime{}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), rpc.NewLineReader(inR, 0), rpc.NewWriter(outW, rpc.FramingNewline), Options{
			NewRuntime: func(context.Context, SessionConfig) (Runtime, error) { return rt, nil },
		})
		_ = outW.Close()
	}()
	frames := make(chan map[string]any, 16)
	go func() {
		defer close(frames)
		lines := bufio.NewScanner(outR)
		for lines.Scan() {
			var m map[string]any
			if json.Unmarshal(lines.Bytes(), &m) == nil {
				frames <- m
			}
		}
	}()
	next := func() map[string]any {
		m, ok := <-frames
		require.True(t, ok, "gopi's output ended")
		return m
	}
	send := func(s string) {
		_, err := io.WriteString(inW, s+"\n")
		require.NoError(t, err)
	}
	cwd, err := json.Marshal(t.TempDir())
	require.NoError(t, err)
	send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":` + string(cwd) + `,"mcpServers":[]}}`)
	assert.Equal(t, "s-1", next()["result"].(map[string]any)["sessionId"])

	name := "Treasure map"
	rt.emit(api.SessionInfoChanged{Name: &name})
	// The update comes before the answer to a request sent after it.
	send(`{"jsonrpc":"2.0","id":2,"method":"no/such","params":{}}`)
	m := next()
	assert.Equal(t, "session/update", m["method"])
	params := m["params"].(map[string]any)
	assert.True(t, schema.Validate(params).IsValid(), "%v", params)
	update := params["update"].(map[string]any)
	assert.Equal(t, "session_info_update", update["sessionUpdate"])
	assert.Equal(t, name, update["title"])
	assert.EqualValues(t, 2, next()["id"])

	require.NoError(t, inW.Close())
	require.NoError(t, <-done)
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
