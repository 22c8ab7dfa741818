package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

// dialHelper, set to a socket's path, makes the test binary dial it and
// say "unix" instead of running the tests.
const dialHelper = "GOPI_SANDBOX_TEST_DIAL"

func TestMain(m *testing.M) {
	if path := os.Getenv(dialHelper); path != "" {
		c, err := net.Dial("unix", path)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		_ = c.Close()
		fmt.Println("unix")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestResolve(t *testing.T) {
	cwd := "/p"
	cases := []struct {
		name          string
		flag          string
		user, project *Settings
		want          Policy
		notes         int
	}{
		{"default is off", "", nil, nil, Policy{Mode: Off}, 0},
		{"the user's settings", "", &Settings{Mode: "workspace-write", WritableRoots: []string{"/cache", "rel"}}, nil,
			Policy{Mode: WorkspaceWrite, WritableRoots: []string{"/p", "/cache", "/p/rel"}}, 0},
		{"the flag beats the settings", "read-only", &Settings{Mode: "workspace-write", Network: ptr(true)}, nil,
			Policy{Mode: ReadOnly, Network: true}, 0},
		{"a project tightens the mode", "", &Settings{Mode: "workspace-write"}, &Settings{Mode: "read-only"},
			Policy{Mode: ReadOnly}, 0},
		{"a project tightens off", "off", nil, &Settings{Mode: "workspace-write"},
			Policy{Mode: WorkspaceWrite, WritableRoots: []string{"/p"}}, 0},
		{"a project cannot loosen the mode", "", &Settings{Mode: "read-only"}, &Settings{Mode: "off"},
			Policy{Mode: ReadOnly}, 1},
		{"a project turns the network off", "", &Settings{Mode: "workspace-write", Network: ptr(true)}, &Settings{Network: ptr(false)},
			Policy{Mode: WorkspaceWrite, WritableRoots: []string{"/p"}}, 0},
		{"a project cannot turn the network on", "", &Settings{Mode: "workspace-write"}, &Settings{Network: ptr(true)},
			Policy{Mode: WorkspaceWrite, WritableRoots: []string{"/p"}}, 1},
		{"a project keeps fewer roots, never more", "", &Settings{Mode: "workspace-write", WritableRoots: []string{"/a", "/b"}},
			&Settings{WritableRoots: []string{"/b", "/c"}},
			Policy{Mode: WorkspaceWrite, WritableRoots: []string{"/p", "/b"}}, 1},
		{"a project's empty list keeps none", "", &Settings{Mode: "workspace-write", WritableRoots: []string{"/a"}},
			&Settings{WritableRoots: []string{}},
			Policy{Mode: WorkspaceWrite, WritableRoots: []string{"/p"}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, notes, err := Resolve(tc.flag, tc.user, tc.project, cwd)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Len(t, notes, tc.notes, "%q", notes)
		})
	}
	_, _, err := Resolve("strict", nil, nil, cwd)
	assert.ErrorIs(t, err, ErrUnknownMode)
	_, _, err = Resolve("", nil, &Settings{Mode: "none"}, cwd)
	assert.ErrorIs(t, err, ErrUnknownMode)
}

// layout is a project, a directory outside it and a temp dir, all
// under the test's own temp dir.
type layout struct{ project, outside, tmp string }

func newLayout(t *testing.T) layout {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	l := layout{filepath.Join(base, "project"), filepath.Join(base, "outside"), filepath.Join(base, "tmp")}
	for _, d := range []string{l.project, l.outside, l.tmp} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	return l
}

func newSandbox(t *testing.T, mode Mode, network bool, l layout, opts ...Option) *Sandbox {
	t.Helper()
	p := Policy{Mode: mode, Network: network, TempDir: l.tmp}
	if mode == WorkspaceWrite {
		p.WritableRoots = []string{l.project}
	}
	sb := New(p, opts...)
	if errors.Is(sb.Problem(), ErrUnavailable) && os.Getenv("GOPI_REQUIRE_TOOLS") == "" {
		t.Skipf("this kernel cannot run the sandbox: %v", sb.Problem())
	}
	require.NoError(t, sb.Problem())
	return sb
}

// run runs script with bash in dir, confined by sb.
func run(t *testing.T, sb *Sandbox, dir, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = dir
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, sb.Start(cmd))
	err := cmd.Wait()
	return out.String(), err
}

func TestCheckWrite(t *testing.T) {
	l := newLayout(t)
	sb := newSandbox(t, WorkspaceWrite, false, l)
	assert.NoError(t, sb.CheckWrite(filepath.Join(l.project, "a", "b.txt")))
	assert.NoError(t, sb.CheckWrite(filepath.Join(l.tmp, "x")))
	err := sb.CheckWrite(filepath.Join(l.outside, "x"))
	assert.ErrorIs(t, err, ErrOutside)
	assert.Contains(t, err.Error(), l.project)
	assert.NoError(t, New(Policy{Mode: Off}).CheckWrite("/etc/passwd"))
	assert.True(t, strings.Contains(sb.Describe(), "workspace-write"))
}

func TestOffChangesNothing(t *testing.T) {
	sb := New(Policy{Mode: Off})
	cmd := exec.Command("/bin/true")
	path, args := cmd.Path, cmd.Args
	require.NoError(t, sb.Start(cmd))
	require.NoError(t, cmd.Wait())
	assert.Equal(t, path, cmd.Path)
	assert.Equal(t, args, cmd.Args)
	assert.Nil(t, cmd.Env)
	assert.Equal(t, State{Mode: Off, Network: true, Layers: []string{}}, sb.State())
}

// loopbackListener accepts and closes TCP connections on 127.0.0.1 until
// the test ends, and returns its port.
func loopbackListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
	})
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}
