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
	code, _, stderr := runBinaryOut(t, cwd, agentDir, args...)
	return code, stderr
}

// Issue 10: unknown flags used to be swallowed with the word after them
// ("--sesion x" did nothing and ate x).
func TestUnknownFlagsAreErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sesion", "x", "-p", "reply: hi"}, "unknown option: --sesion (did you mean --session?)"},
		{[]string{"--sesion=x", "-p", "reply: hi"}, "unknown option: --sesion (did you mean --session?)"},
		{[]string{"--frobnicate", "-p", "reply: hi"}, "unknown option: --frobnicate"},
		{[]string{"-z", "-p", "reply: hi"}, "unknown option: -z"},
	} {
		code, stderr := runBinary(t, t.TempDir(), t.TempDir(), tc.args...)
		assert.Equal(t, 2, code, "%v", tc.args)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
		assert.Contains(t, stderr, "gopi --help")
	}
}

// An extension that cannot run (here: no pi package to load it with) is
// reported, and gopi goes on without it; a flag no extension registered
// is still an error once they have loaded.
func TestMissingExtensionRuntime(t *testing.T) {
	t.Parallel()
	noRuntime := []string{"GOPI_PI_PACKAGE=", "GOPI_NODE="}
	agentDir := t.TempDir()
	cwd := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "ext.ts"), []byte("export default function () {}\n"), 0o644))
	code, out, stderr := runBinaryEnv(t, cwd, agentDir, noRuntime, "--no-session", "--extension", "ext.ts", "-p", "reply: hi")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "hi\n", out)
	assert.Contains(t, stderr, "extensions need pi's npm package @earendil-works/pi-coding-agent")
	assert.Contains(t, stderr, "gopi extensions install")

	code, _, stderr = runBinaryEnv(t, cwd, agentDir, noRuntime, "--no-session", "-e", "ext.ts", "--plan", "-p", "reply: hi")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "unknown option: --plan")
	assert.Contains(t, stderr, "gopi --help")
}

// --prompt-template and --skill load files from anywhere; get_commands
// lists them with location "path", and prompts expand them.
func TestPromptTemplateAndSkillFlags(t *testing.T) {
	t.Parallel()
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

// runBinaryOut is runBinary that also returns stdout.
func runBinaryOut(t *testing.T, cwd, agentDir string, args ...string) (int, string, string) {
	t.Helper()
	return runBinaryEnv(t, cwd, agentDir, nil, args...)
}

// runBinaryEnv is runBinaryOut with env on top of the tests' environment
// (a variable one test needs: t.Setenv would rule out t.Parallel).
func runBinaryEnv(t *testing.T, cwd, agentDir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(gopiBinary(t), args...)
	cmd.Dir = cwd
	cmd.Env = append(append(binaryEnv(), "PI_CODING_AGENT_DIR="+agentDir,
		"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "GEMINI_API_KEY="), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	raceFree(t, stderr.String())
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	require.NoError(t, err)
	return 0, stdout.String(), stderr.String()
}

// Issue 10: print and json modes used to call the agent directly, skipping
// template and skill expansion, auto-retry and auto-compaction. They now
// take the RPC prompt path and wait for the prompt to settle.
func TestPrintAndJSONModesTakeThePromptPath(t *testing.T) {
	t.Parallel()
	agentDir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(agentDir, "prompts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(agentDir, "prompts", "greet.md"), []byte("reply: hello $1"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(agentDir, "settings.json"), []byte(`{"retry":{"baseDelayMs":5}}`), 0o644))

	code, out, stderr := runBinaryOut(t, t.TempDir(), agentDir, "--no-session", "-p", "/greet world")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "hello world\n", out, "the template was expanded")

	code, out, stderr = runBinaryOut(t, t.TempDir(), agentDir, "--no-session", "-p", "error: 503 1")
	require.Equal(t, 0, code, "a transient failure is retried in print mode\n%s", stderr)
	assert.NotEmpty(t, out)

	code, out, stderr = runBinaryOut(t, t.TempDir(), agentDir, "--no-session", "--mode", "json", "error: 503 1")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, `"type":"auto_retry_start"`)
	assert.Contains(t, out, `"type":"auto_retry_end","success":true`)
}
