//go:build linux

package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"

	seccomp "github.com/elastic/go-seccomp-bpf"
	seccomparch "github.com/elastic/go-seccomp-bpf/arch"
	"github.com/gopi-dev/gopi/core/sandbox/launch"
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// ByDefault reports whether the dialects that confine by default
// (jsonrpc, acp) do so here: on Linux they do; whether this kernel can
// enforce a mode is [Sandbox.Problem]'s.
func ByDefault() bool { return true }

// support is what this kernel offers a sandbox.
type support struct {
	landlockABI int
	seccomp     bool
}

// probe asks the kernel once what it supports.
var probe = sync.OnceValue(probeKernel)

func probeKernel() support {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		abi = 0
	}
	sup := support{landlockABI: launch.CapABI(abi), seccomp: seccomp.Supported()}
	if !slices.Contains(seccompArches, runtime.GOARCH) {
		// Elsewhere sockets may be made with socketcall(2), which the
		// filter does not look into.
		sup.seccomp = false
	}
	return sup
}

// seccompArches are the architectures whose socket(2) the filter covers.
var seccompArches = []string{"amd64", "arm64"}

// check is what enforces p on this kernel, or why it cannot be.
func check(p Policy) ([]string, error) {
	sup := probe()
	if sup.landlockABI < 1 {
		return nil, fmt.Errorf("%w: this kernel has no Landlock (it is not built in, or not enabled at boot: lsm=landlock)", ErrUnavailable)
	}
	layers := []string{LayerLandlockFS}
	if p.Network {
		return layers, nil
	}
	if sup.landlockABI < minNetABI {
		return nil, fmt.Errorf("%w: this kernel's Landlock (ABI %d) cannot restrict TCP; keeping the network off needs ABI %d (Linux 6.7)", ErrUnavailable, sup.landlockABI, minNetABI)
	}
	if !sup.seccomp {
		return nil, fmt.Errorf("%w: this kernel has no seccomp filters, which keep sockets other than Unix ones closed", ErrUnavailable)
	}
	return append(layers, LayerLandlockNet, LayerSeccomp), nil
}

// minNetABI is the Landlock ABI that restricts TCP bind and connect.
const minNetABI = 4

// prepare builds what each command is confined with: a Landlock ruleset
// (read and execute anywhere, write only under write and the devices;
// without network, no TCP bind or connect; Unix sockets open) and,
// without network, the seccomp programs to load after it, in order.
func prepare(p Policy, write []string, o options) (enforcer, error) {
	fd, flags, err := ruleset(probe().landlockABI, p.Network, write)
	if err != nil {
		return nil, err
	}
	l := &landlockEnforcer{ruleset: os.NewFile(uintptr(fd), "landlock-ruleset"), flags: flags}
	if o.launcher != "" {
		l.exe, l.viaLauncher = o.launcher, true
	} else {
		l.exe, l.exeErr = os.Executable()
	}
	if p.Network {
		return l, nil
	}
	if l.progs, err = socketFilters(); err != nil {
		_ = l.ruleset.Close()
		return nil, err
	}
	return l, nil
}

// presets are go-landlock's configurations by ABI (index 0 is ABI 1).
var presets = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5,
	landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// devices are the files every shell may write (and use ioctl on), in
// any mode.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// ruleset is the Landlock ruleset of prepare (its fd is close-on-exec).
func ruleset(abi int, network bool, write []string) (int, uint32, error) {
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
		return -1, 0, fmt.Errorf("landlock ruleset: %w", err)
	}
	if fd < 0 {
		return -1, 0, errors.New("landlock ruleset: nothing to restrict")
	}
	return fd, flags, nil
}

// socketFilters are the seccomp programs that keep every socket but a
// Unix one from being made, in the order to load them: first a guard
// that fails every system call made with another architecture's numbers
// (a 32-bit call on a 64-bit kernel), which the second does not look at;
// then go-seccomp-bpf's filter, which fails socket(2) for every family
// but AF_UNIX, and io_uring (which makes sockets without socket(2)), with
// EPERM.
func socketFilters() ([][]byte, error) {
	native, err := seccomparch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	guard, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(native.ID), SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
	})
	if err != nil {
		return nil, fmt.Errorf("seccomp arch guard: %w", err)
	}
	policy := seccomp.Policy{
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
	}
	insts, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	filter, err := bpf.Assemble(insts)
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	return [][]byte{rawProgram(guard), rawProgram(filter)}, nil
}

// rawProgram is a BPF program as the kernel reads it: struct
// sock_filter after struct sock_filter, in this machine's byte order.
func rawProgram(insts []bpf.RawInstruction) []byte {
	out := make([]byte, 0, 8*len(insts))
	for _, in := range insts {
		out = binary.NativeEndian.AppendUint16(out, in.Op)
		out = append(out, in.Jt, in.Jf)
		out = binary.NativeEndian.AppendUint32(out, in.K)
	}
	return out
}
