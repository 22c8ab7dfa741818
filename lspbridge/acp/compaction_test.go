package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kaptinlin/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/rpc"
)

// promptRuntime is a fakeRuntime that takes a prompt and stays busy until
// the test releases it.
type promptRuntime struct {
	fakeRuntime
	started chan struct{}
	release chan struct{}
}

func (r *promptRuntime) Prompt(context.Context, api.PromptParams) (api.DispositionResult, error) {
	close(r.started)
	return api.DispositionResult{Disposition: api.DispositionStarted}, nil
}

func (r *promptRuntime) WaitIdle(ctx context.Context) {
	select {
	case <-r.release:
	case <-ctx.Done():
	}
}

func (r *promptRuntime) GetSessionStats(context.Context) (api.SessionStats, error) {
	return api.SessionStats{}, errors.New("no stats in the stand-in")
}

// A compaction during a prompt is told to a client that declared
// session.compaction: in progress, then completed with its summary;
// another client hears nothing of it.
func TestCompactionUpdates(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "schema", "v1", "schema.json"))
	require.NoError(t, err)
	var root map[string]any
	require.NoError(t, json.Unmarshal(raw, &root))
	doc, err := json.Marshal(map[string]any{"$schema": root["$schema"], "$defs": root["$defs"], "$ref": "#/$defs/SessionNotification"})
	require.NoError(t, err)
	schema, err := jsonschema.NewCompiler().Compile(doc)
	require.NoError(t, err)

	for _, declared := range []bool{true, false} {
		rt := &promptRuntime{started: make(chan struct{}), release: make(chan struct{})}
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
		caps := `{}`
		if declared {
			caps = `{"session":{"compaction":{}}}`
		}
		send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":` + caps + `}}`)
		next()
		cwd, _ := json.Marshal(t.TempDir())
		send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":` + string(cwd) + `,"mcpServers":[]}}`)
		for m := next(); m["id"] == nil; m = next() {
		}
		send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"go"}]}}`)
		<-rt.started
		rt.emit(api.CompactionStart{Reason: "threshold"})
		rt.emit(api.CompactionEnd{Reason: "threshold", Result: &api.CompactionResult{Summary: "What happened so far."}})
		close(rt.release)
		var updates []map[string]any
		for m := next(); m["id"] == nil; m = next() {
			params := m["params"].(map[string]any)
			assert.True(t, schema.Validate(params).IsValid(), "%v", params)
			updates = append(updates, params["update"].(map[string]any))
		}
		if !declared {
			assert.Empty(t, updates)
		} else {
			require.Len(t, updates, 2)
			assert.Equal(t, map[string]any{"sessionUpdate": "compaction_update", "compactionId": "compaction-1", "status": "in_progress"}, updates[0])
			assert.Equal(t, "completed", updates[1]["status"])
			assert.Equal(t, "compaction-1", updates[1]["compactionId"])
			assert.Equal(t, []any{map[string]any{"type": "text", "text": "What happened so far."}}, updates[1]["summary"])
		}
		require.NoError(t, inW.Close())
		require.NoError(t, <-done)
	}
}
