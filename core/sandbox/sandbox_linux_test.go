//go:build linux

package sandbox

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/sandbox/launch"
)

// starts are the two ways a command starts confined: from a confined
// thread (the default) and through the launcher (this test binary).
var starts = []struct {
	name string
	opts []Option
}{
	{"thread", nil},
	{"launcher", []Option{WithLauncher(os.Args[0])}},
}

func TestWorkspaceWriteConfinesWrites(t *testing.T) {
	for _, start := range starts {
		t.Run(start.name, func(t *testing.T) { testWorkspaceWrite(t, start.opts) })
	}
}

func testWorkspaceWrite(t *testing.T, opts []Option) {
	l := newLayout(t)
	sb := newSandbox(t, WorkspaceWrite, false, l, opts...)
	require.NoError(t, os.Symlink(l.outside, filepath.Join(l.project, "out")))

	out, err := run(t, sb, l.project, `echo in > inside.txt && echo t > "$TMPDIR/t.txt" && echo "$TMPDIR" && echo dev > /dev/null && echo ok`)
	require.NoError(t, err, out)
	assert.Equal(t, l.tmp+"\nok\n", out)
	assert.FileExists(t, filepath.Join(l.project, "inside.txt"))
	assert.FileExists(t, filepath.Join(l.tmp, "t.txt"))

	for name, script := range map[string]string{
		"outside":        `echo x > ` + filepath.Join(l.outside, "direct.txt"),
		"through a link": `echo x > out/linked.txt`,
		"background job": `(echo x > ` + filepath.Join(l.outside, "bg.txt") + `) & wait $!`,
		"a new dir":      `mkdir ` + filepath.Join(l.outside, "d"),
	} {
		out, err := run(t, sb, l.project, script)
		assert.Error(t, err, name)
		assert.Contains(t, out, "Permission denied", name)
	}
	entries, err := os.ReadDir(l.outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written outside")
}

func TestReadOnlyWritesOnlyTheTempDir(t *testing.T) {
	for _, start := range starts {
		t.Run(start.name, func(t *testing.T) { testReadOnly(t, start.opts) })
	}
}

func testReadOnly(t *testing.T, opts []Option) {
	l := newLayout(t)
	sb := newSandbox(t, ReadOnly, false, l, opts...)
	require.NoError(t, os.WriteFile(filepath.Join(l.project, "f.txt"), []byte("data\n"), 0o644))
	out, err := run(t, sb, l.project, `cat f.txt && echo t > "$TMPDIR/t.txt" && echo ok`)
	require.NoError(t, err, out)
	assert.Equal(t, "data\nok\n", out)
	out, err = run(t, sb, l.project, `echo x > f.txt`)
	assert.Error(t, err)
	assert.Contains(t, out, "Permission denied")
	data, _ := os.ReadFile(filepath.Join(l.project, "f.txt"))
	assert.Equal(t, "data\n", string(data))
}

func TestNetworkOffClosesTCPAndUDP(t *testing.T) {
	port := loopbackListener(t)
	tcp := `exec 3<>/dev/tcp/127.0.0.1/` + port + ` && echo connected`
	udp := `exec 3<>/dev/udp/127.0.0.1/` + port + ` && echo udp`
	sock := filepath.Join(t.TempDir(), "s")
	uln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	t.Cleanup(func() { _ = uln.Close() })
	unix := dialHelper + "=" + sock + " " + os.Args[0]

	for _, start := range starts {
		t.Run(start.name, func(t *testing.T) {
			l := newLayout(t)
			off := newSandbox(t, WorkspaceWrite, false, l, start.opts...)
			out, err := run(t, off, l.project, tcp)
			assert.Error(t, err, out)
			assert.NotContains(t, out, "connected")
			out, err = run(t, off, l.project, udp)
			assert.Error(t, err, out)
			assert.Contains(t, out, "Operation not permitted", "socket(2) refused by seccomp")
			out, err = run(t, off, l.project, unix)
			assert.NoError(t, err, out)
			assert.Equal(t, "unix\n", out, "Unix sockets stay open")

			on := newSandbox(t, WorkspaceWrite, true, l, start.opts...)
			out, err = run(t, on, l.project, tcp)
			assert.NoError(t, err, out)
			assert.Equal(t, "connected\n", out)
		})
	}
}

func TestFailsClosedWithoutLandlock(t *testing.T) {
	l := newLayout(t)
	t.Setenv(TestABIEnv, "0")
	resetProbe(t)
	sb := New(Policy{Mode: WorkspaceWrite, WritableRoots: []string{l.project}, TempDir: l.tmp}, WithLauncher(os.Args[0]))
	require.ErrorIs(t, sb.Problem(), ErrUnavailable)
	assert.Contains(t, sb.Problem().Error(), "Landlock")
	cmd := exec.Command("/bin/true")
	assert.ErrorIs(t, sb.Start(cmd), ErrUnavailable)
	assert.Nil(t, cmd.Process, "not started")
	assert.Equal(t, State{Mode: WorkspaceWrite, Layers: []string{}, Problem: sb.Problem().Error()}, sb.State())

	// ABI 3 has no TCP rules: without network the mode cannot hold; with
	// it, it can.
	t.Setenv(TestABIEnv, "3")
	resetProbe(t)
	assert.ErrorIs(t, New(Policy{Mode: ReadOnly, TempDir: l.tmp}, WithLauncher(os.Args[0])).Problem(), ErrUnavailable)
	if probe().landlockABI == 3 {
		assert.NoError(t, New(Policy{Mode: ReadOnly, Network: true, TempDir: l.tmp}, WithLauncher(os.Args[0])).Problem())
	}
}

// TestTheLauncherFailsClosed: a launcher that cannot confine itself (on
// a kernel it believes lacks Landlock, or given no ruleset) exits 126
// and does not run the command.
func TestTheLauncherFailsClosed(t *testing.T) {
	l := newLayout(t)
	sb := newSandbox(t, WorkspaceWrite, false, l, WithLauncher(os.Args[0]))
	marker := filepath.Join(l.project, "ran")
	cmd := exec.Command("/bin/bash", "-c", "touch "+marker)
	cmd.Env = append(os.Environ(), TestABIEnv+"=0")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, sb.Start(cmd))
	err := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, launch.FailedStatus, exit.ExitCode())
	assert.Contains(t, out.String(), "the command did not run")
	assert.NoFileExists(t, marker)

	bare := exec.Command(os.Args[0], LauncherArg, "--", "/bin/bash", "bash", "-c", "touch "+marker)
	bareOut, err := bare.CombinedOutput()
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, launch.FailedStatus, exit.ExitCode())
	assert.Contains(t, string(bareOut), "the command did not run")
	assert.NoFileExists(t, marker)
}

// resetProbe has the next probe ask the kernel again (after the test
// changed TestABIEnv), and the one after the test too.
func resetProbe(t *testing.T) {
	probe = sync.OnceValue(probeKernel)
	t.Cleanup(func() { probe = sync.OnceValue(probeKernel) })
}

// BenchmarkStart is the mechanism's own cost: /bin/true started as it
// is, from a confined thread, and through this package's test binary as
// the launcher (small, so the figure is the confinement's; cmd/gopi's
// BenchmarkSandboxStart measures gopi as the launcher).
func BenchmarkStart(b *testing.B) {
	dir := b.TempDir()
	ws := Policy{Mode: WorkspaceWrite, WritableRoots: []string{dir}, TempDir: dir}
	for _, c := range []struct {
		name string
		sb   *Sandbox
	}{
		{"unconfined", New(Policy{Mode: Off})},
		{"workspace-write/thread", New(ws)},
		{"workspace-write/launcher", New(ws, WithLauncher(os.Args[0]))},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.sb.Problem() != nil {
				b.Skip(c.sb.Problem())
			}
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if err := c.sb.Start(cmd); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
