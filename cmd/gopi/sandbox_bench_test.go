package main

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/sandbox"
)

// BenchmarkSandboxStart is what the sandbox adds to a command: starting
// /bin/true as it is, and through the built gopi as the launcher, which
// confines itself (Landlock, and seccomp with the network off) and then
// executes it. Run it without -race: the figure is the binary's.
func BenchmarkSandboxStart(b *testing.B) {
	dir := b.TempDir()
	cases := []struct {
		name string
		sb   *sandbox.Sandbox
	}{
		{"unconfined", nil},
		{"workspace-write", sandbox.New(sandbox.Policy{Mode: sandbox.WorkspaceWrite, WritableRoots: []string{dir}, TempDir: dir}, sandbox.WithLauncher(gopiBinary(b)))},
		{"workspace-write+network", sandbox.New(sandbox.Policy{Mode: sandbox.WorkspaceWrite, Network: true, WritableRoots: []string{dir}, TempDir: dir}, sandbox.WithLauncher(gopiBinary(b)))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if c.sb != nil && c.sb.Problem() != nil {
				b.Skip(c.sb.Problem())
			}
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if c.sb != nil {
					require.NoError(b, c.sb.Confine(cmd))
				}
				require.NoError(b, cmd.Run())
			}
		})
	}
}
