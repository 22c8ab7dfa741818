package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// pi 1.5's project_trust event: before a project's own .pi resources
// load, the extensions that load anyway (here one given with -e) may
// decide whether the project is trusted. The first yes or no decides,
// ahead of trust.json; remember saves it; undecided, or a handler that
// throws, leaves it to trust.json and defaultProjectTrust; --approve
// decides before any extension is asked. The decision is what
// ctx.isProjectTrusted() answers afterwards. Each case runs on gopi and on
// pi itself.
func TestExtensionProjectTrust(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	const decider = `import * as fs from "node:fs";
import * as path from "node:path";
export default function (pi) {
	pi.on("project_trust", async (event, ctx) => {
		const answer = JSON.parse(fs.readFileSync(path.join(event.cwd, "answer.json"), "utf8"));
		const confirmed = await ctx.ui.confirm("Trust this folder?", event.cwd);
		fs.writeFileSync(path.join(event.cwd, "asked.json"), JSON.stringify({ cwd: event.cwd, hasUI: ctx.hasUI, mode: ctx.mode, confirmed }));
		if (answer.throw) throw new Error("cannot decide");
		return answer;
	});
	pi.registerCommand("trusted", { description: "says whether the project is trusted", handler: async (_args, ctx) => ctx.ui.notify("trusted=" + ctx.isProjectTrusted(), "info") });
}
`
	cases := []struct {
		name    string
		answer  map[string]any
		saved   *bool // trust.json's decision before the start
		args    []string
		trusted bool
		asked   bool
		// remembered is trust.json's decision after (nil: none).
		remembered *bool
	}{
		{name: "yes", answer: map[string]any{"trusted": "yes"}, trusted: true, asked: true},
		{name: "yes remembered", answer: map[string]any{"trusted": "yes", "remember": true}, trusted: true, asked: true, remembered: ptr(true)},
		{name: "no beats trust.json", answer: map[string]any{"trusted": "no"}, saved: ptr(true), asked: true, remembered: ptr(true)},
		{name: "undecided leaves it to trust.json", answer: map[string]any{"trusted": "undecided"}, saved: ptr(true), trusted: true, asked: true, remembered: ptr(true)},
		{name: "undecided without a saved decision", answer: map[string]any{"trusted": "undecided"}, asked: true},
		{name: "a handler that throws decides nothing", answer: map[string]any{"throw": true}, asked: true},
		{name: "--approve asks no one", answer: map[string]any{"trusted": "no"}, args: []string{"--approve"}, trusted: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.both(t, func() []llmtest.Turn { return nil }, func(t *testing.T, w *world, start func(...string) *proc) {
				writeFile(t, filepath.Join(w.cwd, ".pi", "extensions", "project.ts"),
					`export default function (pi) { pi.registerCommand("from-project", { description: "the project's own", handler: async () => {} }); }`+"\n")
				w.writeJSON(filepath.Join(w.cwd, ".pi", "settings.json"), map[string]any{"steeringMode": "all"})
				w.writeJSON(filepath.Join(w.cwd, "answer.json"), c.answer)
				if c.saved != nil {
					w.trustProject()
				}
				p := start(append([]string{"-e", w.writeExt("decider.ts", decider)}, c.args...)...)
				names := commandNames(p, "c")
				assert.Equal(t, c.trusted, names["from-project"], "the project's extension loads only when trusted")
				assert.True(t, names["trusted"], "the deciding extension itself is loaded in every case")
				steering := p.ok("s", map[string]any{"type": "get_state"}).(map[string]any)["steeringMode"]
				assert.Equal(t, map[bool]string{true: "all", false: "one-at-a-time"}[c.trusted], steering, "the project's settings follow the decision")
				p.command("t", map[string]any{"type": "prompt", "message": "/trusted"}, map[bool]string{true: "trusted=true", false: "trusted=false"}[c.trusted])

				b, err := os.ReadFile(filepath.Join(w.cwd, "asked.json"))
				if !c.asked {
					assert.ErrorIs(t, err, os.ErrNotExist, "no extension is asked")
				} else if assert.NoError(t, err, "the handler ran") {
					var asked map[string]any
					require.NoError(t, json.Unmarshal(b, &asked))
					assert.Equal(t, map[string]any{"cwd": w.cwd, "hasUI": false, "mode": "rpc", "confirmed": false}, asked,
						"the event names the folder; in RPC mode there is no one to ask")
				}
				assert.Equal(t, c.remembered, savedDecision(t, w), "trust.json")
				assert.Equal(t, 0, p.exit())
			})
		})
	}
}

func ptr[T any](v T) *T { return &v }

// commandNames are the names get_commands lists.
func commandNames(p *proc, id string) map[string]bool {
	names := map[string]bool{}
	for _, c := range p.ok(id, map[string]any{"type": "get_commands"}).(map[string]any)["commands"].([]any) {
		names[c.(map[string]any)["name"].(string)] = true
	}
	return names
}

// savedDecision is trust.json's decision for the world's folder.
func savedDecision(t *testing.T, w *world) *bool {
	b, err := os.ReadFile(filepath.Join(w.agentDir, "trust.json"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var m map[string]*bool
	require.NoError(t, json.Unmarshal(b, &m), string(b))
	dir, err := filepath.EvalSymlinks(w.cwd)
	require.NoError(t, err)
	return m[dir]
}
