//go:build linux

package sandbox

import (
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"

	"github.com/gopi-dev/gopi/core/sandbox/launch"
)

// landlockEnforcer confines commands with a Landlock ruleset and seccomp
// programs, on a thread of gopi's or in the launcher.
type landlockEnforcer struct {
	// ruleset is the Landlock ruleset (close-on-exec), flags its restrict
	// flags, and progs the seccomp programs loaded after it, in order.
	ruleset *os.File
	flags   uint32
	progs   [][]byte
	// exe is the launcher's binary (gopi's own unless [WithLauncher]),
	// or exeErr why it was not found; viaLauncher makes every command
	// start through it.
	exe         string
	exeErr      error
	viaLauncher bool
}

func (l *landlockEnforcer) start(cmd *exec.Cmd) error {
	if l.viaLauncher || needsLauncher(cmd) {
		if err := l.throughLauncher(cmd); err != nil {
			return err
		}
		return cmd.Start()
	}
	return startConfined(cmd, l.ruleset, l.flags, l.progs)
}

// throughLauncher makes cmd start as the launcher, which inherits the
// ruleset, confines itself and executes what cmd named.
func (l *landlockEnforcer) throughLauncher(cmd *exec.Cmd) error {
	if l.exeErr != nil {
		return fmt.Errorf("%w: finding gopi's own binary to start the command through: %v", ErrConfine, l.exeErr)
	}
	fd := 3 + len(cmd.ExtraFiles) // the ruleset's number in the launcher
	cmd.ExtraFiles = append(cmd.ExtraFiles, l.ruleset)
	args := []string{l.exe, LauncherArg, launch.FlagRuleset, strconv.Itoa(fd), strconv.FormatUint(uint64(l.flags), 10)}
	for _, p := range l.progs {
		args = append(args, launch.FlagSeccomp, hex.EncodeToString(p))
	}
	args = append(args, "--", cmd.Path)
	cmd.Args = append(args, cmd.Args...)
	cmd.Path = l.exe
	return nil
}

// startConfined starts cmd from an OS thread that it confines first, so
// that the command, which the kernel clones from that thread, inherits
// the thread's no_new_privs, Landlock domain and seccomp filters, and
// nothing else in gopi is confined. It costs a thread per command, and
// no new gopi process: starting gopi again as the launcher costs
// milliseconds (docs/performance.md).
//
// Why the confinement stays on the thread, read in the runtime of Go 1.26
// (src/runtime/proc.go):
//   - LockOSThread starts the runtime's template thread, if it is not yet
//     running, before it locks (startTemplateThread): while the thread is
//     still clean.
//   - newm, asked for a new thread while the current M is locked
//     (m.lockedExt != 0), does not clone it from this thread but hands
//     the request to the template thread ("We don't want to clone that
//     into another thread"), so no thread of the runtime descends from
//     the confined one.
//   - A locked M runs its locked goroutine and nothing else (schedule
//     parks it in stoplockedm while that goroutine waits).
//   - gdestroy, when a goroutine exits still locked, does not return the
//     thread to the pool: "Kill it rather than returning it to the thread
//     pool" (gogo to mstart, then mexit ends the thread; the main thread,
//     m0, is parked for good instead).
//
// os/exec's Start forks from the calling thread (syscall.forkExec: clone
// with CLONE_VFORK|CLONE_VM in forkAndExecInChild), the locked one here.
// TestConfinedStartsLeaveGopiFree and TestSandboxLeavesGopiUnconfined
// check that no thread of the process stays confined.
func startConfined(cmd *exec.Cmd, ruleset *os.File, flags uint32, progs [][]byte) error {
	fd := int(ruleset.Fd())
	err := onThrowawayThread(func() error {
		if err := launch.ConfineThread(fd, int(flags), progs); err != nil {
			return fmt.Errorf("%w: %w", ErrConfine, err)
		}
		return cmd.Start()
	})
	runtime.KeepAlive(ruleset)
	return err
}

// onThrowawayThread runs f on an OS thread of its own, which ends when f
// returns, and returns what f did. It is never the main thread: the
// runtime parks that one for good instead of ending it (mexit), and a
// confined main thread would be what the kernel shows of gopi
// (/proc/PID/status). A goroutine that finds itself there holds it while
// another one, which cannot be scheduled on it, runs f, and then lets it
// go as it was.
func onThrowawayThread(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if syscall.Gettid() == syscall.Getpid() {
			err := onThrowawayThread(f)
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		// Never unlocked: the thread ends when this goroutine returns.
		errc <- f()
	}()
	return <-errc
}

// needsLauncher reports whether cmd must start through the launcher: a
// signal at its parent's death is sent when the thread that started it
// ends, which a confined thread does right after the start.
func needsLauncher(cmd *exec.Cmd) bool {
	return cmd.SysProcAttr != nil && cmd.SysProcAttr.Pdeathsig != 0
}
