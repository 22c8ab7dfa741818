package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/core/tools"
)

// prefixProbe is a command that shows whether shellCommandPrefix ran.
const prefixProbe = "echo prefix=$GOPI_PREFIX_SEEN"

// writeWrapperShell writes a shell that says it ran and then runs its
// arguments with bash.
func writeWrapperShell(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wrapsh")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\necho wrapped-shell\nexec bash \"$@\"\n"), 0o755))
	return path
}

// TestRPCShellSettingsReachTheBashTool: settings.json's shellPath and
// shellCommandPrefix apply to the model's bash tool as to the user's bash
// command, as in pi; a project's .pi/settings.json counts only when the
// project is trusted.
func TestRPCShellSettingsReachTheBashTool(t *testing.T) {
	t.Parallel()
	wrapper := writeWrapperShell(t)
	cases := []struct {
		name    string
		prepare func(w *world)
		want    string
	}{
		{"global prefix", func(w *world) {
			w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"shellCommandPrefix": "export GOPI_PREFIX_SEEN=yes"})
		}, "prefix=yes\n"},
		{"global shellPath", func(w *world) {
			w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"shellPath": wrapper})
		}, "wrapped-shell\nprefix=\n"},
		{"trusted project", func(w *world) {
			w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"shellCommandPrefix": "export GOPI_PREFIX_SEEN=global"})
			w.writeJSON(filepath.Join(w.cwd, ".pi", "settings.json"), map[string]any{"shellPath": wrapper, "shellCommandPrefix": "export GOPI_PREFIX_SEEN=project"})
			w.trustProject()
		}, "wrapped-shell\nprefix=project\n"},
		{"untrusted project", func(w *world) {
			w.writeJSON(filepath.Join(w.cwd, ".pi", "settings.json"), map[string]any{"shellPath": wrapper, "shellCommandPrefix": "export GOPI_PREFIX_SEEN=project"})
		}, "prefix=\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t,
				llmtest.ToolCalls(llmtest.Call("b1", "bash", mustJSON(t, map[string]any{"command": prefixProbe}))),
				llmtest.Text("done"),
			)
			tc.prepare(w)
			p := w.start()

			p.ok("1", map[string]any{"type": "prompt", "message": "probe the shell"})
			rs := p.idle()
			end := toolEnd(rs, "b1")
			require.NotNil(t, end, "the bash tool ran")
			assert.Equal(t, false, end["isError"])
			assert.Equal(t, tc.want, resultText(end), "the bash tool")
			for _, r := range rs {
				if r.is("tool_execution_start") {
					assert.Equal(t, prefixProbe, r.obj("args").str("command"), "the call keeps the model's command")
				}
			}

			out := p.ok("2", map[string]any{"type": "bash", "command": prefixProbe}).(map[string]any)
			assert.Equal(t, tc.want, out["output"], "the bash command runs the same way")
			assert.Equal(t, 0, p.exit())
		})
	}
}

// TestAllToolsCarryTheShellSettings: a bash tool that is off at startup
// and switched on later (by an extension) runs with the shell settings
// too.
func TestAllToolsCarryTheShellSettings(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	prefix := []tools.Option{tools.WithCommandPrefix("export GOPI_PREFIX_SEEN=later")}
	all := allTools(cwd, nil, tools.Select(tools.SelectOptions{Defaults: []string{"read"}}), prefix)
	var bash agent.Tool
	for _, tl := range all {
		if tl.Spec().Name == tools.NameBash {
			bash = tl
		}
	}
	require.NotNil(t, bash)
	args, _ := json.Marshal(map[string]any{"command": prefixProbe})
	res, err := bash.Run(t.Context(), agent.Call{ID: "b1", Name: tools.NameBash, Args: args}, nil)
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	assert.Equal(t, "prefix=later\n", res.Content[0].(llm.TextContent).Text)
}
