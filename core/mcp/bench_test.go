package mcp

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gopi-dev/gopi/core/agent"
)

// BenchmarkConnect is what a prompt waits for at most before its first
// request: one stdio server started, initialized and its tools listed
// (the test server, a Go binary; a Node server adds its own start-up).
func BenchmarkConnect(b *testing.B) {
	for b.Loop() {
		m := NewManager(Options{Servers: entries(map[string]Server{"s": stdio()}), Version: "bench"})
		m.Start()
		if err := m.Wait(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		if len(m.Tools()) == 0 {
			b.Fatal("no tools")
		}
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCall is one call of an MCP tool as the agent makes it (the
// arguments as the model wrote them, the result as the model reads it);
// BenchmarkCallRaw is the same call made with the SDK alone. Their
// difference is gopi's overhead per call.
func BenchmarkCall(b *testing.B) {
	m := NewManager(Options{Servers: entries(map[string]Server{"s": stdio()}), Version: "bench", TempDir: b.TempDir()})
	m.Start()
	defer func() { _ = m.Close() }()
	if err := m.Wait(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	var echo *Tool
	for _, t := range m.Tools() {
		if t.RemoteName() == "echo" {
			echo = t
		}
	}
	if echo == nil {
		b.Fatal("no echo tool")
	}
	call := agent.Call{ID: "c", Name: echo.Spec().Name, Args: json.RawMessage(`{"text":"hello"}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := echo.Run(ctx, call, nil)
		if err != nil || res.IsError {
			b.Fatal(err, res.Content.Text())
		}
	}
}

func BenchmarkCallRaw(b *testing.B) {
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &sdk.CommandTransport{Command: exec.Command(serverBin)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	params := &sdk.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`)}
	b.ReportAllocs()
	for b.Loop() {
		res, err := sess.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err)
		}
	}
}
