package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// startApprovalJSONRPC runs gopi in the JSON-RPC dialect with the
// approval gate on and initializes it with capabilities.
func (w *world) startApprovalJSONRPC(capabilities map[string]any) *jproc {
	w.t.Helper()
	p := w.startJSONRPC(true, scriptedArgs("--mode", "jsonrpc", "--approval", "writes")...)
	p.call("initialize", map[string]any{"capabilities": capabilities})
	p.notify("initialized", map[string]any{})
	return p
}

// jsonrpcToolEnd finds the tool_execution_end event of a call.
func jsonrpcToolEnd(rs []record, callID string) record {
	for _, r := range rs {
		if event(r, "tool_execution_end") && r.obj("params").str("toolCallId") == callID {
			return r.obj("params")
		}
	}
	return nil
}

// Issue 25: in the JSON-RPC dialect too, an abort while an approval
// question waits sends no further question; the later calls end as
// aborted.
func TestJSONRPCApprovalAbortAsksNoMore(t *testing.T) {
	w := newWorld(t,
		llmtest.ToolCalls(
			llmtest.Call("w1", "write", `{"path":"a.txt","content":"a\n"}`),
			llmtest.Call("b1", "bash", `{"command":"echo x > x.txt"}`),
			llmtest.Call("w2", "write", `{"path":"c.txt","content":"c\n"}`),
		),
	)
	p := w.startApprovalJSONRPC(map[string]any{"window": map[string]any{"showMessage": map[string]any{}}})
	p.request("pi/prompt", map[string]any{"message": "write a; bash x; write c"})
	rs := p.until(func(r record) bool { return r["method"] == "window/showMessageRequest" })
	assert.Equal(t, "Allow write: a.txt?", rs[len(rs)-1].obj("params").str("message"))

	abort := p.request("pi/abort", nil)
	rs = p.proc.collect(
		func(r record) bool { return r["method"] == nil && r["id"] == abort },
		func(r record) bool { return event(r, "agent_end") },
	)
	for _, r := range rs {
		assert.NotEqual(t, "window/showMessageRequest", r["method"], "asked after the abort: %v", r)
	}
	for _, id := range []string{"w1", "b1", "w2"} {
		end := jsonrpcToolEnd(rs, id)
		require.NotNil(t, end, "%s has no end\n%s", id, p.transcript())
		assert.Equal(t, true, end["isError"])
		assert.Equal(t, "Operation aborted", resultText(end), id)
	}
	for _, f := range []string{"a.txt", "x.txt", "c.txt"} {
		assert.NoFileExists(t, filepath.Join(w.cwd, f))
	}
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}
