package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runBinary runs the built gopi to completion and returns its exit status
// and stderr.
func runBinary(t *testing.T, cwd, agentDir string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(gopiBinary(t), args...)
	cmd.Dir = cwd
	cmd.Env = append(binaryEnv(), "PI_CODING_AGENT_DIR="+agentDir,
		"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "GEMINI_API_KEY=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	raceFree(t, stderr.String())
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stderr.String()
	}
	require.NoError(t, err)
	return 0, stderr.String()
}

// Issue 10: unknown flags used to be swallowed with the word after them
// ("--sesion x" did nothing and ate x).
func TestUnknownFlagsAreErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sesion", "x", "-p", "reply: hi"}, "unknown option: --sesion (did you mean --session?)"},
		{[]string{"--sesion=x", "-p", "reply: hi"}, "unknown option: --sesion (did you mean --session?)"},
		{[]string{"--frobnicate", "-p", "reply: hi"}, "unknown option: --frobnicate"},
		{[]string{"-z", "-p", "reply: hi"}, "unknown option: -z"},
		{[]string{"--extension", "ext.ts", "-p", "reply: hi"}, "--extension: pi extensions are not supported by gopi yet"},
		{[]string{"-e", "ext.ts", "--mode", "rpc"}, "-e: pi extensions are not supported by gopi yet"},
	} {
		code, stderr := runBinary(t, t.TempDir(), t.TempDir(), tc.args...)
		assert.Equal(t, 2, code, "%v", tc.args)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
		assert.Contains(t, stderr, "gopi --help")
	}
}

// --prompt-template and --skill load files from anywhere; get_commands
// lists them with location "path", and prompts expand them.
func TestPromptTemplateAndSkillFlags(t *testing.T) {
	w := newWorld(t)
	extra := t.TempDir()
	tpl := filepath.Join(extra, "greet.md")
	require.NoError(t, os.WriteFile(tpl, []byte("---\ndescription: Greets\n---\nreply: hello $1"), 0o644))
	skillDir := filepath.Join(extra, "tidy")
	require.NoError(t, os.MkdirAll(skillDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(skillDir, "SKILL.md"), []byte("---\nname: tidy\ndescription: Tidies things\n---\nKeep it tidy."), 0o644))

	p := w.start("--prompt-template", tpl, "--skill", skillDir)
	cmds := p.ok("1", map[string]any{"type": "get_commands"}).(map[string]any)["commands"].([]any)
	byName := map[string]record{}
	for _, c := range cmds {
		r := record(c.(map[string]any))
		byName[r.str("name")] = r
	}
	require.Contains(t, byName, "greet", p.transcript())
	require.Contains(t, byName, "skill:tidy", p.transcript())
	assert.Equal(t, "path", byName["greet"].str("location"))
	assert.Equal(t, "path", byName["skill:tidy"].str("location"))
	assert.Equal(t, tpl, byName["greet"].str("path"))
	assert.Equal(t, 0, p.exit())
}
