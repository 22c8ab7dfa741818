package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kaptinlin/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/rpc"
)

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

// schemaFor compiles the vendored schema's definition def.
func schemaFor(t *testing.T, def string) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "schema", "v1", "schema.json"))
	require.NoError(t, err)
	var root map[string]any
	require.NoError(t, json.Unmarshal(raw, &root))
	doc, err := json.Marshal(map[string]any{"$schema": root["$schema"], "$defs": root["$defs"], "$ref": "#/$defs/" + def})
	require.NoError(t, err)
	schema, err := jsonschema.NewCompiler().Compile(doc)
	require.NoError(t, err)
	return schema
}
