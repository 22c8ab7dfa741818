package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// pi 1.5's project trust: a folder's own .pi settings, prompt templates,
// skills and extensions load only when the project is trusted (--approve,
// a saved decision in trust.json, defaultProjectTrust "always"); opened
// without a decision, gopi leaves them out and says so on stderr.
func TestRPCProjectTrust(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) *world {
		w := newWorld(t)
		writeFile(t, filepath.Join(w.cwd, ".pi", "prompts", "review.md"), "Review $ARGUMENTS.\n")
		writeFile(t, filepath.Join(w.cwd, ".pi", "extensions", "evil.ts"), "export default function () {}\n")
		w.writeJSON(filepath.Join(w.cwd, ".pi", "settings.json"), map[string]any{"steeringMode": "all"})
		return w
	}
	commands := func(p *proc) map[string]bool {
		names := map[string]bool{}
		for _, c := range p.ok("c", map[string]any{"type": "get_commands"}).(map[string]any)["commands"].([]any) {
			names[c.(map[string]any)["name"].(string)] = true
		}
		return names
	}
	steering := func(p *proc) string {
		return p.ok("s", map[string]any{"type": "get_state"}).(map[string]any)["steeringMode"].(string)
	}

	t.Run("not trusted", func(t *testing.T) {
		t.Parallel()
		w := setup(t)
		p := w.start("--no-extensions")
		assert.False(t, commands(p)["review"], "the project's template is left out")
		assert.Equal(t, "one-at-a-time", steering(p), "the project's settings are left out")
		assert.Equal(t, 0, p.exit())
		assert.Contains(t, p.stderr.String(), "the project is not trusted (not asked)")
		assert.Contains(t, p.stderr.String(), "--approve")
	})
	for name, trust := range map[string]func(w *world) []string{
		"--approve":  func(*world) []string { return []string{"--approve"} },
		"trust.json": func(w *world) []string { w.trustProject(); return nil },
		"defaultProjectTrust: always": func(w *world) []string {
			w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"defaultProjectTrust": "always"})
			return nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := setup(t)
			p := w.start(append(trust(w), "--no-extensions")...)
			assert.True(t, commands(p)["review"])
			assert.Equal(t, "all", steering(p))
			assert.Equal(t, 0, p.exit())
			assert.NotContains(t, p.stderr.String(), "not trusted")
		})
	}
	t.Run("--no-approve beats trust.json", func(t *testing.T) {
		t.Parallel()
		w := setup(t)
		w.trustProject()
		p := w.start("--no-approve", "--no-extensions")
		assert.False(t, commands(p)["review"])
		assert.Equal(t, 0, p.exit())
	})

	// The project's extensions are not even listed, so never run.
	t.Run("extensions", func(t *testing.T) {
		t.Parallel()
		w := setup(t)
		list := func(args ...string) string {
			cmd := exec.Command(gopiBinary(t), append([]string{"extensions", "list"}, args...)...)
			cmd.Dir = w.cwd
			cmd.Env = append(binaryEnv(), "PI_CODING_AGENT_DIR="+w.agentDir, "GOPI_NODE=/nonexistent", "PATH=/nonexistent")
			out, _ := cmd.CombinedOutput()
			return string(out)
		}
		assert.NotContains(t, list(), "evil.ts")
		out := list("--approve")
		assert.Contains(t, out, "evil.ts", out)
	})
}
