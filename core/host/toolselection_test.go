package host

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/core/session"
	"github.com/gopi-dev/gopi/core/tools"
)

// Issue 25: pi's tool selection covers the extensions' tools: --tools
// is an allowlist for them too, -xt removes them, -nbt keeps them, -nt
// drops them.
func TestToolSelectionCoversExtensionTools(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       tools.SelectOptions
		want    []string
		noTools bool // the extension registers no tool
	}{
		// No tool active at the start is not "every tool active".
		{"-nbt, an extension without tools", tools.SelectOptions{NoBuiltin: true}, nil, true},
		{"defaults", tools.SelectOptions{}, []string{"read", "bash", "edit", "write", "deploy", "lint"}, false},
		{"-nbt", tools.SelectOptions{NoBuiltin: true}, []string{"deploy", "lint"}, false},
		{"-nt", tools.SelectOptions{NoTools: true}, nil, false},
		{"--tools read,dep*", tools.SelectOptions{Tools: []string{"read", "dep*"}}, []string{"read", "deploy"}, false},
		{"-xt deploy,bash", tools.SelectOptions{Exclude: []string{"deploy", "bash"}}, []string{"read", "edit", "write", "lint"}, false},
		{"-nbt --tools +ls", tools.SelectOptions{NoBuiltin: true, Tools: []string{"+ls"}}, []string{"ls", "deploy", "lint"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cwd := t.TempDir()
			srv := llmtest.New(t)
			reg, agentDir := newRegistry(t, llm.APIAnthropicMessages, srv.AnthropicURL())
			model, ok := reg.Find("scripted", "scripted-1")
			require.True(t, ok)
			sel := tools.Select(tc.o)
			active, err := tools.ByName(cwd, sel.ActiveBuiltins())
			require.NoError(t, err)
			var all []agent.Tool
			for _, tl := range tools.All(cwd) {
				if sel.Allowed(tl.Spec().Name) {
					all = append(all, tl)
				}
			}
			params := json.RawMessage(`{"type":"object","properties":{}}`)
			defs := []ext.ToolDef{
				{Name: "deploy", Description: "Deploys.", Parameters: params},
				{Name: "lint", Description: "Lints.", Parameters: params},
			}
			if tc.noTools {
				defs = nil
			}
			exts := ext.NewManager(&ext.Func{Regs: ext.Registrations{Tools: defs}})
			h, err := New(Options{Cwd: cwd, AgentDir: agentDir, Registry: reg, Tools: active, AllTools: all,
				ToolSelection: sel, Model: &model, Store: session.InMemory(cwd), Extensions: exts})
			require.NoError(t, err)
			t.Cleanup(func() { _ = h.Close(context.Background()) })
			// session_start, which ends the loading, waits for a client.
			unsub := h.Subscribe(func(api.Event) {})
			t.Cleanup(unsub)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			require.NoError(t, h.ext.waitLoaded(ctx))
			var names []string
			for _, tl := range h.agent.Tools() {
				names = append(names, tl.Spec().Name)
			}
			assert.Equal(t, tc.want, names)
		})
	}
}
