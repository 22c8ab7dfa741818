//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	seccomparch "github.com/elastic/go-seccomp-bpf/arch"
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The launcher runs in init, before the packages of the binary that need
// more than this one's (the providers' SDKs, the markdown renderer, ...)
// are initialised: Go initialises packages in the order of their import
// paths as far as their imports allow, so a confined command pays for
// little more than this package. The runtime keeps init on the main
// thread, the one that is confined and then executes the command.
func init() {
	if len(os.Args) > 1 && os.Args[1] == LauncherArg {
		err := launch(os.Args[2:])
		// launch returns only when the command could not be executed
		// confined; it is never executed otherwise.
		fmt.Fprintf(os.Stderr, "gopi: sandbox: %v; the command did not run\n", err)
		os.Exit(126)
	}
}

// probe asks the kernel once what it supports.
var probe = sync.OnceValue(probeKernel)

func probeKernel() support {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		abi = 0
	}
	sup := support{landlockABI: capABI(abi), seccomp: seccomp.Supported()}
	if !slices.Contains(seccompArches, runtime.GOARCH) {
		// Elsewhere sockets may be made with socketcall(2), which the
		// filter does not look into.
		sup.seccomp = false
	}
	return sup
}

// seccompArches are the architectures whose socket(2) the filter covers.
var seccompArches = []string{"amd64", "arm64"}

// launch confines this process as its arguments say and executes the
// command after "--" in it; it returns only on failure.
func launch(args []string) error {
	network := true
	var write []string
	i := 0
	for ; i < len(args) && args[i] != "--"; i++ {
		switch args[i] {
		case flagNoNetwork:
			network = false
		case flagWrite:
			if i+1 >= len(args) {
				return errors.New("-w needs a directory")
			}
			i++
			write = append(write, args[i])
		default:
			return fmt.Errorf("unknown launcher argument %q", args[i])
		}
	}
	if i+2 >= len(args) {
		return errors.New("no command after --")
	}
	path, argv := args[i+1], args[i+2:]
	sup := probe()
	if _, err := check(Policy{Mode: WorkspaceWrite, Network: network}, sup); err != nil {
		return err
	}
	runtime.LockOSThread() // never unlocked: this thread executes the command
	if err := restrictFS(sup.landlockABI, network, write); err != nil {
		return err
	}
	if !network {
		if err := closeSockets(); err != nil {
			return err
		}
	}
	return fmt.Errorf("executing %s: %w", path, syscall.Exec(path, argv, os.Environ()))
}

// presets are go-landlock's configurations by ABI (index 0 is ABI 1).
var presets = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5,
	landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// devices are the files every shell may write (and use ioctl on), in
// any mode.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// restrictFS confines this thread with Landlock: read and execute
// anywhere, write only under the directories in write and the devices,
// and, without network, no TCP bind or connect. Unix sockets stay open.
func restrictFS(abi int, network bool, write []string) error {
	preset := presets[min(abi, len(presets))-1]
	// Connecting to Unix sockets by path is not restricted (ABI 9 could):
	// the sandbox leaves Unix sockets open.
	cfg := landlock.Config{HandledAccessFS: preset.HandledAccessFS &^ ll.AccessFSResolveUnix}
	if !network {
		cfg.HandledAccessNet = preset.HandledAccessNet
	}
	h := cfg.HandledAccessFS
	read := h & (ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir)
	device := h & (ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev)
	rules := []landlock.Rule{
		landlock.PathAccess(read, "/"),
		landlock.PathAccess(h&^ll.AccessFSIoctlDev, write...).IgnoreIfMissing(),
		landlock.PathAccess(device, devices...).IgnoreIfMissing(),
		landlock.PathAccess(device|read, "/dev/pts").IgnoreIfMissing(),
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("landlock ruleset: nothing to restrict")
	}
	defer func() { _ = unix.Close(fd) }()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

// closeSockets loads the seccomp filters that keep every socket but a
// Unix one from being made: socket(2) with another family fails with
// EPERM, io_uring (which makes sockets without socket(2)) is refused, and
// so is every system call of another ABI than this binary's (a 32-bit
// call on a 64-bit kernel), which the first filter does not see.
func closeSockets() error {
	native, err := seccomparch.GetInfo("")
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	if err := loadArchGuard(uint32(native.ID)); err != nil {
		return err
	}
	filter := seccomp.Filter{
		NoNewPrivs: true,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{
				{
					Action: seccomp.ActionErrno,
					NamesWithCondtions: []seccomp.NameWithConditions{{
						Name: "socket",
						Conditions: seccomp.ArgumentConditions{{
							Argument: 0, Operation: seccomp.NotEqual, Value: unix.AF_UNIX,
						}},
					}},
				},
				{
					Action: seccomp.ActionErrno,
					Names:  []string{"io_uring_setup", "io_uring_enter", "io_uring_register"},
				},
			},
		},
	}
	if err := seccomp.LoadFilter(filter); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// loadArchGuard loads a filter that fails every system call made with
// another architecture's numbers than native's with ENOSYS.
func loadArchGuard(native uint32) error {
	raw, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: native, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
	})
	if err != nil {
		return fmt.Errorf("seccomp arch guard: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("seccomp arch guard: %w", errno)
	}
	runtime.KeepAlive(filter)
	return nil
}
