package main

import (
	"os/exec"
	"syscall"
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
// system time of the started process (the launcher and true);
// gopi-cpu-µs that of the process that starts it, all its threads (the
// confined thread's work is there), which on a loaded machine tells
// more than the wall time.
func BenchmarkSandboxStart(b *testing.B) {
	dir := b.TempDir()
	ws := sandbox.Policy{Mode: sandbox.WorkspaceWrite, WritableRoots: []string{dir}, TempDir: dir}
	wsNet := ws
	wsNet.Network = true
	// Each sandbox is made in its run, so that a run of some cases
	// (-bench 'SandboxStart/^(unconfined|workspace-write)$') does not
	// build gopi.
	cases := []struct {
		name string
		sb   func(*testing.B) *sandbox.Sandbox
	}{
		{"unconfined", func(*testing.B) *sandbox.Sandbox { return nil }},
		{"workspace-write", func(*testing.B) *sandbox.Sandbox { return sandbox.New(ws) }},
		{"workspace-write+network", func(*testing.B) *sandbox.Sandbox { return sandbox.New(wsNet) }},
		{"workspace-write-via-launcher", func(b *testing.B) *sandbox.Sandbox {
			return sandbox.New(ws, sandbox.WithLauncher(gopiBinary(b)))
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			sb := c.sb(b)
			if sb != nil && sb.Problem() != nil {
				b.Skip(sb.Problem())
			}
			var cpu time.Duration
			before := selfCPU(b)
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if sb != nil {
					require.NoError(b, sb.Start(cmd))
				} else {
					require.NoError(b, cmd.Start())
				}
				require.NoError(b, cmd.Wait())
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			// CPU time tells more than wall time on a loaded machine.
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
			b.ReportMetric(float64((selfCPU(b)-before).Microseconds())/float64(b.N), "gopi-cpu-µs/op")
		})
	}
}

// selfCPU is this process's user and system time so far.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
