//go:build linux

package launch

import (
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

// Linux's numbers the standard library does not name on every
// architecture.
const (
	sysLandlockCreateRuleset = 444 // the same on every architecture
	sysLandlockRestrictSelf  = 446
	landlockCreateVersion    = 1 << 0
	prSetNoNewPrivs          = 38
	seccompSetModeFilter     = 1
)

// sysSeccomp is seccomp(2)'s number on the architectures whose filter
// core/sandbox builds (elsewhere it builds none and refuses).
var sysSeccomp = map[string]uintptr{"amd64": 317, "arm64": 277}[runtime.GOARCH]

// Error is why a thread could not be confined: the step that failed and
// the kernel's answer (0 when gopi refused before asking it).
type Error struct {
	Step  string
	Errno syscall.Errno
}

func (e *Error) Error() string {
	if e.Errno == 0 {
		return e.Step
	}
	return e.Step + ": " + e.Errno.Error()
}

func (e *Error) Unwrap() error {
	if e.Errno == 0 {
		return nil
	}
	return e.Errno
}

// ConfineThread confines the calling OS thread, and every process it
// starts from then on: no_new_privs, then the Landlock ruleset (a
// ruleset file descriptor and landlock_restrict_self's flags), then each
// seccomp program in order (raw BPF instructions, 8 bytes each). Without
// Landlock's and seccomp's TSYNC flags all three are the thread's alone:
// the process's other threads stay as they were.
//
// The caller must have locked its goroutine to the thread
// (runtime.LockOSThread) and must never unlock it, so that the runtime
// ends the thread with the goroutine and runs nothing else on it. On
// failure the thread may be confined in part; it must end all the same.
func ConfineThread(ruleset, flags int, progs [][]byte) error {
	for _, p := range progs {
		if len(p) == 0 || len(p)%8 != 0 || len(p)/8 > 0xffff {
			return &Error{Step: "bad seccomp program"}
		}
	}
	if len(progs) > 0 && sysSeccomp == 0 {
		return &Error{Step: "seccomp: not supported on " + runtime.GOARCH}
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return &Error{Step: "no_new_privs", Errno: errno}
	}
	if _, _, errno := syscall.RawSyscall(sysLandlockRestrictSelf, uintptr(ruleset), uintptr(flags), 0); errno != 0 {
		return &Error{Step: "landlock", Errno: errno}
	}
	for _, p := range progs {
		prog := struct {
			len    uint16
			filter *byte
		}{uint16(len(p) / 8), &p[0]}
		_, _, errno := syscall.RawSyscall(sysSeccomp, seccompSetModeFilter, 0, uintptr(unsafe.Pointer(&prog)))
		runtime.KeepAlive(p)
		if errno != 0 {
			return &Error{Step: "seccomp", Errno: errno}
		}
	}
	return nil
}

// launch confines this thread as its arguments say and executes the
// command in it; it returns only on failure, saying why.
func launch(args []string) string {
	ruleset, flags := -1, 0
	var progs [][]byte
	i := 0
	for ; i < len(args) && args[i] != "--"; i++ {
		switch args[i] {
		case FlagRuleset:
			if i+2 >= len(args) {
				return "-ruleset needs a file descriptor and flags"
			}
			var err1, err2 error
			ruleset, err1 = strconv.Atoi(args[i+1])
			flags, err2 = strconv.Atoi(args[i+2])
			if err1 != nil || err2 != nil {
				return "bad -ruleset " + args[i+1] + " " + args[i+2]
			}
			i += 2
		case FlagSeccomp:
			if i+1 >= len(args) {
				return "-seccomp needs a program"
			}
			i++
			p, ok := unhex(args[i])
			if !ok || len(p) == 0 || len(p)%8 != 0 {
				return "bad -seccomp program"
			}
			progs = append(progs, p)
		default:
			return "unknown launcher argument " + strconv.Quote(args[i])
		}
	}
	if i+2 >= len(args) {
		return "no command after --"
	}
	path, argv := args[i+1], args[i+2:]
	if ruleset < 0 {
		return "no Landlock ruleset given"
	}
	abi, _, errno := syscall.RawSyscall(sysLandlockCreateRuleset, 0, 0, landlockCreateVersion)
	if errno != 0 || CapABI(int(abi)) < 1 {
		return "this kernel has no Landlock"
	}
	runtime.LockOSThread() // never unlocked: this thread executes the command
	if err := ConfineThread(ruleset, flags, progs); err != nil {
		return err.Error()
	}
	_ = syscall.Close(ruleset)
	err := syscall.Exec(path, argv, os.Environ())
	return "executing " + path + ": " + err.Error()
}

// unhex decodes lower-case hex (encoding/hex would bring fmt, and with
// it more packages to initialise before this one).
func unhex(s string) ([]byte, bool) {
	if len(s)%2 != 0 {
		return nil, false
	}
	out := make([]byte, len(s)/2)
	for i := range out {
		hi, ok1 := nibble(s[2*i])
		lo, ok2 := nibble(s[2*i+1])
		if !ok1 || !ok2 {
			return nil, false
		}
		out[i] = hi<<4 | lo
	}
	return out, true
}

func nibble(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
