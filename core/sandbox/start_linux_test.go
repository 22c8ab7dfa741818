//go:build linux

package sandbox

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// confinedThreads lists the threads of this process whose no_new_privs
// or seccomp filters differ from what the process had before any
// confined start (base): a thread a start left confined.
func confinedThreads(t *testing.T, base string) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	var confined []string
	for _, task := range tasks {
		status, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "status"))
		if err != nil {
			continue // the thread ended while we looked
		}
		if got := confinement(string(status)); got != base {
			confined = append(confined, task.Name()+": "+got)
		}
	}
	return confined
}

// confinement is the lines of a status file that confinement changes.
func confinement(status string) string {
	var lines []string
	for _, l := range strings.Split(status, "\n") {
		if strings.HasPrefix(l, "NoNewPrivs:") || strings.HasPrefix(l, "Seccomp:") || strings.HasPrefix(l, "Seccomp_filters:") {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(lines, ", ")
}

// TestConfinedStartsLeaveThisProcessFree: after many confined starts,
// some at once, no thread of the process that started them is left
// confined, and the process, from many goroutines, still writes outside
// the writable roots and opens TCP sockets.
func TestConfinedStartsLeaveThisProcessFree(t *testing.T) {
	l := newLayout(t)
	sb := newSandbox(t, WorkspaceWrite, false, l)
	self, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	base := confinement(string(self))
	require.Contains(t, base, "NoNewPrivs")

	const starters, each = 8, 8
	var wg sync.WaitGroup
	errs := make(chan error, starters*each)
	for i := range starters {
		wg.Go(func() {
			for j := range each {
				cmd := exec.Command("/bin/bash", "-c", `echo x > "$0"`, filepath.Join(l.project, strconv.Itoa(i*each+j)))
				if err := sb.Start(cmd); err != nil {
					errs <- err
					continue
				}
				errs <- cmd.Wait()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	entries, err := os.ReadDir(l.project)
	require.NoError(t, err)
	require.Len(t, entries, starters*each, "every command ran")

	// A thread ends a moment after its goroutine: the time only bounds
	// the wait.
	require.Eventually(t, func() bool { return len(confinedThreads(t, base)) == 0 }, 20*time.Second, 10*time.Millisecond,
		"threads left confined (the process has %s): %q", base, confinedThreads(t, base))

	const writers = 64
	werrs := make(chan error, writers)
	for i := range writers {
		wg.Go(func() {
			if err := os.WriteFile(filepath.Join(l.outside, strconv.Itoa(i)), []byte("x"), 0o644); err != nil {
				werrs <- err
				return
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				werrs <- err
				return
			}
			werrs <- ln.Close()
		})
	}
	wg.Wait()
	close(werrs)
	for err := range werrs {
		require.NoError(t, err)
	}
	entries, err = os.ReadDir(l.outside)
	require.NoError(t, err)
	assert.Len(t, entries, writers)
}

// TestAThreadThatCannotBeConfinedStartsNothing: when the thread cannot
// be confined (the kernel refuses the ruleset, or a seccomp program is
// malformed), the start fails with ErrConfine and the command never
// runs.
func TestAThreadThatCannotBeConfinedStartsNothing(t *testing.T) {
	l := newLayout(t)
	notRuleset, err := os.Open(os.DevNull)
	require.NoError(t, err)
	t.Cleanup(func() { _ = notRuleset.Close() })
	marker := filepath.Join(l.project, "ran")
	for name, spoil := range map[string]func(*landlockEnforcer){
		"not a ruleset":    func(l *landlockEnforcer) { l.ruleset = notRuleset },
		"a broken program": func(l *landlockEnforcer) { l.progs = append(l.progs, []byte{1, 2, 3}) },
	} {
		sb := newSandbox(t, WorkspaceWrite, false, l)
		spoil(sb.enforcer.(*landlockEnforcer))
		cmd := exec.Command("/bin/bash", "-c", "touch "+marker)
		err := sb.Start(cmd)
		assert.ErrorIs(t, err, ErrConfine, name)
		assert.Nil(t, cmd.Process, name)
		assert.NoFileExists(t, marker, name)
	}
}

// TestAParentDeathSignalStartsThroughTheLauncher: a command that asks
// for a signal when its parent ends starts through the launcher, whose
// starting thread does not end with the start, and runs to its end.
func TestAParentDeathSignalStartsThroughTheLauncher(t *testing.T) {
	l := newLayout(t)
	sb := newSandbox(t, WorkspaceWrite, false, l, WithLauncher(os.Args[0]))
	// As New makes it without WithLauncher, with the test binary as the
	// launcher.
	sb.enforcer.(*landlockEnforcer).viaLauncher = false
	cmd := exec.Command("/bin/bash", "-c", `read -r line; echo "$line" > alive`)
	cmd.Dir = l.project
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, sb.Start(cmd))
	assert.Equal(t, LauncherArg, cmd.Args[1])
	_, err = stdin.Write([]byte("yes\n"))
	require.NoError(t, err)
	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait())
	data, err := os.ReadFile(filepath.Join(l.project, "alive"))
	require.NoError(t, err)
	assert.Equal(t, "yes\n", string(data))
}
