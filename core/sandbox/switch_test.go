package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newSwitch is a Switch over l's project starting in mode, with the
// test binary as the launcher; it skips where the kernel cannot run the
// sandbox.
func newSwitch(t *testing.T, mode Mode, l layout, project *Settings) *Switch {
	t.Helper()
	sw, _, err := NewSwitch(mode, SwitchConfig{Project: project, Cwd: l.project, Options: []Option{WithLauncher(os.Args[0])}})
	require.NoError(t, err)
	probe := New(Policy{Mode: WorkspaceWrite, WritableRoots: []string{l.project}, TempDir: l.tmp}, WithLauncher(os.Args[0]))
	if errors.Is(probe.Problem(), ErrUnavailable) && os.Getenv("GOPI_REQUIRE_TOOLS") == "" {
		t.Skipf("this kernel cannot run the sandbox: %v", probe.Problem())
	}
	return sw
}

// TestSwitchChangesTheMode: commands confined after Set run in the new
// mode; each mode is prepared once and kept, and every mode's commands
// share one temp dir.
func TestSwitchChangesTheMode(t *testing.T) {
	l := newLayout(t)
	sw := newSwitch(t, Off, l, nil)
	assert.Equal(t, Off, sw.Chosen())
	assert.False(t, sw.Current().Enabled())

	_, err := sw.Set(WorkspaceWrite)
	require.NoError(t, err)
	ws := sw.Current()
	assert.Equal(t, WorkspaceWrite, ws.Mode())
	out, err := run(t, ws, l.project, `echo x > in.txt && echo t > "$TMPDIR/t" && echo ok`)
	require.NoError(t, err, out)
	tmp := ws.TempDir()
	require.NotEmpty(t, tmp)

	_, err = sw.Set(ReadOnly)
	require.NoError(t, err)
	ro := sw.Current()
	assert.Equal(t, State{Mode: ReadOnly, Layers: []string{LayerLandlockFS, LayerLandlockNet, LayerSeccomp}}, sw.State())
	out, err = run(t, ro, l.project, `echo x > in.txt`)
	assert.Error(t, err)
	assert.Contains(t, out, "Permission denied")
	assert.Equal(t, tmp, ro.TempDir(), "one temp dir for every mode")
	out, err = run(t, ro, l.project, `cat "$TMPDIR/t"`)
	require.NoError(t, err, out)
	assert.Equal(t, "t\n", out)

	_, err = sw.Set(WorkspaceWrite)
	require.NoError(t, err)
	assert.Same(t, ws, sw.Current(), "a mode is prepared once")

	_, err = sw.Set(Off)
	require.NoError(t, err)
	assert.False(t, sw.Current().Enabled())
	assert.Equal(t, Off, sw.State().Mode)

	_, err = sw.Set("strict")
	assert.ErrorIs(t, err, ErrUnknownMode)
	assert.Equal(t, Off, sw.Chosen(), "an unknown mode changes nothing")
}

// TestSwitchKeepsTheProjectsFloor: a project that asks for read-only
// keeps read-only whatever mode is chosen, and says so.
func TestSwitchKeepsTheProjectsFloor(t *testing.T) {
	l := newLayout(t)
	sw := newSwitch(t, WorkspaceWrite, l, &Settings{Mode: "read-only"})
	assert.Equal(t, ReadOnly, sw.State().Mode)
	for _, m := range []Mode{Off, WorkspaceWrite} {
		notes, err := sw.Set(m)
		require.NoError(t, err)
		assert.Len(t, notes, 1, "the project's floor is said")
		assert.Equal(t, m, sw.Chosen())
		assert.Equal(t, ReadOnly, sw.State().Mode)
	}
}

// TestSwitchRoots: in workspace-write the further roots are writable,
// replaced by each SetRoots; in read-only they are not.
func TestSwitchRoots(t *testing.T) {
	l := newLayout(t)
	sw := newSwitch(t, WorkspaceWrite, l, nil)
	out, err := run(t, sw.Current(), l.project, `echo x > `+filepath.Join(l.outside, "a"))
	assert.Error(t, err, out)

	sw.SetRoots([]string{l.outside})
	out, err = run(t, sw.Current(), l.project, `echo x > `+filepath.Join(l.outside, "a"))
	require.NoError(t, err, out)
	assert.NoError(t, sw.Current().CheckWrite(filepath.Join(l.outside, "b")))

	_, err = sw.Set(ReadOnly)
	require.NoError(t, err)
	out, err = run(t, sw.Current(), l.project, `echo x > `+filepath.Join(l.outside, "a"))
	assert.Error(t, err, out)

	_, err = sw.Set(WorkspaceWrite)
	require.NoError(t, err)
	sw.SetRoots(nil)
	out, err = run(t, sw.Current(), l.project, `echo x > `+filepath.Join(l.outside, "c"))
	assert.Error(t, err, out)
	assert.NoFileExists(t, filepath.Join(l.outside, "c"))
}

// TestSwitchFailsClosed: a mode this kernel cannot enforce, chosen while
// gopi runs, refuses its commands as at start.
func TestSwitchFailsClosed(t *testing.T) {
	l := newLayout(t)
	t.Setenv(TestABIEnv, "0")
	resetProbe(t)
	sw, _, err := NewSwitch(Off, SwitchConfig{Cwd: l.project, Options: []Option{WithLauncher(os.Args[0])}})
	require.NoError(t, err)
	_, err = sw.Set(ReadOnly)
	require.NoError(t, err)
	assert.ErrorIs(t, sw.Current().Start(exec.Command("/bin/true")), ErrUnavailable)
	assert.Contains(t, sw.State().Problem, "no Landlock")
}
