package host

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/sandbox"
)

// fakeSandbox keeps what the host asked of it; floor is a mode the
// "project" keeps in force, problem what the "kernel" cannot enforce.
type fakeSandbox struct {
	chosen, floor sandbox.Mode
	problem       string
	roots         []string
}

func (f *fakeSandbox) State() sandbox.State {
	m := f.chosen
	if f.floor != "" {
		m = f.floor
	}
	return sandbox.State{Mode: m, Layers: []string{"landlock-fs"}, Problem: f.problem}
}

func (f *fakeSandbox) Chosen() sandbox.Mode { return f.chosen }

func (f *fakeSandbox) Set(m sandbox.Mode) ([]string, error) {
	if _, err := sandbox.ParseMode(string(m)); err != nil {
		return nil, err
	}
	f.chosen = m
	if f.floor != "" {
		return []string{"kept " + string(f.floor)}, nil
	}
	return nil, nil
}

func (f *fakeSandbox) SetRoots(dirs []string) { f.roots = dirs }

func sandboxHost(t *testing.T, sb Sandbox, dirs []string) (*Host, *[]error) {
	t.Helper()
	reg, agentDir := newRegistry(t, llm.APIAnthropicMessages, "http://127.0.0.1:1")
	model, ok := reg.Find("scripted", "scripted-1")
	require.True(t, ok)
	var reported []error
	h, err := New(Options{Cwd: t.TempDir(), AgentDir: agentDir, Registry: reg, Model: &model, Sandbox: sb, AdditionalDirs: dirs,
		Report: func(err error) { reported = append(reported, err) }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h, &reported
}

func sandboxOf(t *testing.T, h *Host) *api.SandboxState {
	t.Helper()
	st, err := h.GetState(context.Background())
	require.NoError(t, err)
	return st.Sandbox
}

// TestSetSandbox: the host switches its sandbox's mode, get_state
// follows (none with the mode off), what a project's settings kept and
// what the kernel cannot enforce are reported, and the additional
// directories are the sandbox's further roots.
func TestSetSandbox(t *testing.T) {
	sb := &fakeSandbox{chosen: sandbox.WorkspaceWrite}
	h, reported := sandboxHost(t, sb, []string{"/extra"})
	assert.Equal(t, []string{"/extra"}, sb.roots)
	assert.Equal(t, &api.SandboxState{Mode: "workspace-write", Layers: []string{"landlock-fs"}}, sandboxOf(t, h))

	require.NoError(t, h.SetSandbox(sandbox.Off))
	assert.Equal(t, sandbox.Off, h.SandboxMode())
	assert.Nil(t, sandboxOf(t, h), "off: get_state is pi's")

	require.NoError(t, h.SetSandbox(sandbox.ReadOnly))
	assert.Equal(t, "read-only", sandboxOf(t, h).Mode)
	assert.Empty(t, *reported)

	assert.ErrorIs(t, h.SetSandbox("strict"), sandbox.ErrUnknownMode)
	assert.Equal(t, sandbox.ReadOnly, h.SandboxMode())

	sb.floor, sb.problem = sandbox.ReadOnly, "no Landlock"
	require.NoError(t, h.SetSandbox(sandbox.WorkspaceWrite))
	assert.Equal(t, sandbox.WorkspaceWrite, h.SandboxMode())
	assert.Equal(t, &api.SandboxState{Mode: "read-only", Layers: []string{"landlock-fs"}, Problem: "no Landlock"}, sandboxOf(t, h))
	require.Len(t, *reported, 2)
	assert.EqualError(t, (*reported)[0], "sandbox workspace-write: kept read-only")
	assert.EqualError(t, (*reported)[1], "sandbox read-only: no Landlock")

	h.SetAdditionalDirs([]string{"/a", "/b"})
	assert.Equal(t, []string{"/a", "/b"}, sb.roots)
}

// TestSetSandboxWithoutOne: a host built without a sandbox stays off.
func TestSetSandboxWithoutOne(t *testing.T) {
	h, _ := sandboxHost(t, nil, nil)
	assert.Equal(t, sandbox.Off, h.SandboxMode())
	assert.NoError(t, h.SetSandbox(sandbox.Off))
	err := h.SetSandbox(sandbox.ReadOnly)
	assert.True(t, errors.Is(err, ErrNoSandbox), "%v", err)
	assert.Nil(t, sandboxOf(t, h))
}
