package main

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/sandbox"
)

// BenchmarkSandboxStart is what the sandbox adds to a command: starting
// /bin/true as it is; from a thread confined for it (Landlock, and seccomp
// with the network off), as gopi starts every command; and through the
// built gopi as the launcher, which confines itself and then executes it,
// as gopi starts a command that asks for a parent-death signal. Run it
// without -race: the figure is the binary's. cpu-µs is the user and
// system time of the started process (the launcher and true).
func BenchmarkSandboxStart(b *testing.B) {
	dir := b.TempDir()
	ws := sandbox.Policy{Mode: sandbox.WorkspaceWrite, WritableRoots: []string{dir}, TempDir: dir}
	wsNet := ws
	wsNet.Network = true
	cases := []struct {
		name string
		sb   *sandbox.Sandbox
	}{
		{"unconfined", nil},
		{"workspace-write", sandbox.New(ws)},
		{"workspace-write+network", sandbox.New(wsNet)},
		{"workspace-write/launcher", sandbox.New(ws, sandbox.WithLauncher(gopiBinary(b)))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if c.sb != nil && c.sb.Problem() != nil {
				b.Skip(c.sb.Problem())
			}
			var cpu time.Duration
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if c.sb != nil {
					require.NoError(b, c.sb.Start(cmd))
				} else {
					require.NoError(b, cmd.Start())
				}
				require.NoError(b, cmd.Wait())
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			// CPU time tells more than wall time on a loaded machine.
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
