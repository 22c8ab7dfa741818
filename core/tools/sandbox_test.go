package tools

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
)

// fakeSandbox allows writes under root; its Start marks the command's
// environment, or fails with refuse.
type fakeSandbox struct {
	root   string
	refuse error
}

func (f fakeSandbox) Enabled() bool { return true }

func (f fakeSandbox) Start(cmd *exec.Cmd) error {
	if f.refuse != nil {
		return f.refuse
	}
	cmd.Env = append(os.Environ(), "CONFINED=yes")
	return cmd.Start()
}

func (f fakeSandbox) CheckWrite(real string) error {
	if rel, err := filepath.Rel(f.root, real); err == nil && !strings.HasPrefix(rel, "..") {
		return nil
	}
	return errors.New("outside the sandbox")
}

func (f fakeSandbox) Describe() string { return "The command ran in the fake sandbox." }

func TestSandboxedWriteAndEditStayInTheRoots(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	project, outside := filepath.Join(base, "p"), filepath.Join(base, "o")
	writeFile(t, filepath.Join(outside, "f.txt"), "old")
	require.NoError(t, os.Mkdir(project, 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(project, "out")))
	sb := WithSandbox(fakeSandbox{root: project})

	res := run(t, project, NameWrite, map[string]any{"path": "in.txt", "content": "x"}, sb)
	assert.False(t, res.IsError, text(res))
	for _, path := range []string{filepath.Join(outside, "new.txt"), "out/new.txt", "out/f.txt"} {
		res = run(t, project, NameWrite, map[string]any{"path": path, "content": "x"}, sb)
		assert.True(t, res.IsError, path)
		assert.Contains(t, text(res), "outside the sandbox; nothing was written", path)
	}
	res = run(t, project, NameEdit, map[string]any{"path": "out/f.txt", "edits": []map[string]any{{"oldText": "old", "newText": "new"}}}, sb)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "Could not edit out/f.txt: outside the sandbox")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "nothing new outside")
	data, _ := os.ReadFile(filepath.Join(outside, "f.txt"))
	assert.Equal(t, "old", string(data))
}

func TestSandboxedBashRunsConfined(t *testing.T) {
	dir := t.TempDir()
	res := run(t, dir, NameBash, map[string]any{"command": "echo $CONFINED"}, WithSandbox(fakeSandbox{root: dir}))
	assert.False(t, res.IsError)
	assert.Equal(t, "yes\n", text(res))

	// A refusal the sandbox may have caused says what the sandbox allows.
	res = run(t, dir, NameBash, map[string]any{"command": "echo 'x: Permission denied' >&2; exit 1"}, WithSandbox(fakeSandbox{root: dir}))
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "Command exited with code 1\n\nThe command ran in the fake sandbox.")
	res = run(t, dir, NameBash, map[string]any{"command": "exit 1"}, WithSandbox(fakeSandbox{root: dir}))
	assert.NotContains(t, text(res), "fake sandbox", "only when something was refused")

	// A sandbox that cannot confine the command: it does not run.
	marker := filepath.Join(dir, "ran")
	res = run(t, dir, NameBash, map[string]any{"command": "touch " + marker}, WithSandbox(fakeSandbox{root: dir, refuse: errors.New("no Landlock here")}))
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "no Landlock here")
	assert.NoFileExists(t, marker)
}

// otherShell runs nothing and says so.
type otherShell struct{ ran *bool }

func (s otherShell) Exec(context.Context, ExecRequest) (*int, error) {
	*s.ran = true
	return new(int), nil
}

func TestSandboxedBashRefusesAShellItCannotConfine(t *testing.T) {
	dir := t.TempDir()
	var ran bool
	res := run(t, dir, NameBash, map[string]any{"command": "true"}, WithShell(otherShell{&ran}), WithSandbox(fakeSandbox{root: dir}))
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "cannot confine")
	assert.False(t, ran)
}

// fakeEscape answers every escape question with allow and keeps what it
// was asked.
type fakeEscape struct {
	allow  bool
	denied []Denial
}

func (f *fakeEscape) Escape(_ context.Context, d Denial) bool {
	f.denied = append(f.denied, d)
	return f.allow
}

// TestSandboxedBashAsksToEscape: a confined command that fails as the
// sandbox makes commands fail is put to the Escape in its context, with
// the command as the model sent it; allowed, it runs once more
// unconfined and that run's result is the call's, with a note; denied,
// the sandboxed result stands. A command that fails otherwise, or
// succeeds, asks nothing, and without an Escape nothing is asked.
func TestSandboxedBashAsksToEscape(t *testing.T) {
	dir := t.TempDir()
	sb := WithSandbox(fakeSandbox{root: dir})
	// Fails with a refusal when confined; unconfined, says so.
	command := `if [ "$CONFINED" = yes ]; then echo 'x: Permission denied' >&2; exit 1; fi; echo free >> ran.txt; echo unconfined`
	runWith := func(e Escape, command string) agent.Result {
		t.Helper()
		ctx := context.Background()
		if e != nil {
			ctx = WithEscape(ctx, e)
		}
		res, _ := runUpdates(t, ctx, dir, NameBash, map[string]any{"command": command}, sb)
		return res
	}

	deny := &fakeEscape{}
	res := runWith(deny, command)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "Command exited with code 1\n\nThe command ran in the fake sandbox.")
	assert.Equal(t, []Denial{{Command: command, Confinement: "The command ran in the fake sandbox."}}, deny.denied)
	assert.NoFileExists(t, filepath.Join(dir, "ran.txt"))

	allow := &fakeEscape{allow: true}
	res = runWith(allow, command)
	assert.False(t, res.IsError, text(res))
	assert.Equal(t, "unconfined\n\n\n["+escapedNote+"]", text(res))
	assert.Len(t, allow.denied, 1)
	data, err := os.ReadFile(filepath.Join(dir, "ran.txt"))
	require.NoError(t, err)
	assert.Equal(t, "free\n", string(data), "ran once outside")

	quiet := &fakeEscape{allow: true}
	assert.True(t, runWith(quiet, "exit 3").IsError)
	assert.Equal(t, "ok\n", text(runWith(quiet, "echo ok")))
	assert.Empty(t, quiet.denied, "only a refusal is asked about")

	res = runWith(nil, command)
	assert.True(t, res.IsError, "no Escape: the sandboxed result stands")
}

// terminalShell is a shell on this machine gopi cannot confine (an
// editor's terminal): it runs nothing and counts its commands.
type terminalShell struct{ ran *int }

func (s terminalShell) Exec(context.Context, ExecRequest) (*int, error) {
	*s.ran++
	return new(int), nil
}

func (terminalShell) OnLocalMachine() bool { return true }

// offSandbox confines nothing (the mode off).
type offSandbox struct{ fakeSandbox }

func (offSandbox) Enabled() bool { return false }

// TestSandboxOfFollowsTheModeInForce: with WithSandboxOf each call uses
// the sandbox in force when it starts; while one confines, a shell that
// is OnLocalMachine gives way to the local shell, confined, and it is
// used again once the sandbox is off. The write tool follows too.
func TestSandboxOfFollowsTheModeInForce(t *testing.T) {
	dir := t.TempDir()
	var ran int
	var current Sandbox = offSandbox{}
	opts := []Option{WithShell(LocalShell{}), WithSandboxOf(func() Sandbox { return current }), WithShell(terminalShell{&ran})}
	outside := filepath.Join(t.TempDir(), "f.txt")

	res := run(t, dir, NameBash, map[string]any{"command": "echo $CONFINED"}, opts...)
	assert.Equal(t, 1, ran, "off: the terminal runs it")
	assert.False(t, res.IsError)
	res = run(t, dir, NameWrite, map[string]any{"path": outside, "content": "x"}, opts...)
	assert.False(t, res.IsError, text(res))

	current = fakeSandbox{root: dir}
	res = run(t, dir, NameBash, map[string]any{"command": "echo $CONFINED"}, opts...)
	assert.Equal(t, 1, ran, "on: not the terminal")
	assert.Equal(t, "yes\n", text(res), "the local shell, confined")
	res = run(t, dir, NameWrite, map[string]any{"path": outside, "content": "y"}, opts...)
	assert.True(t, res.IsError)
	data, _ := os.ReadFile(outside)
	assert.Equal(t, "x", string(data))

	current = offSandbox{}
	run(t, dir, NameBash, map[string]any{"command": "true"}, opts...)
	assert.Equal(t, 2, ran, "off again: the terminal")
}
