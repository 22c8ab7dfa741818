package sandbox

import (
	"fmt"
	"slices"
	"strings"
)

// This file writes macOS's side of the sandbox: a Seatbelt profile, in
// Apple's sandbox profile language (SBPL, a Scheme), that sandbox-exec
// enforces on the command and everything it starts. It builds on every
// OS so that its tests, which read the profile's text, run everywhere;
// only seatbelt_darwin.go runs it.

// seatbeltExec is the program that applies a profile and executes the
// command. Only this path is used, never a lookup in $PATH, which a
// command of an earlier turn could have changed.
const seatbeltExec = "/usr/bin/sandbox-exec"

// seatbeltDevices are the device files every shell may write (and use
// ioctl on) in every mode, as on Linux: macOS has no /dev/full, and
// /dev/dtracehelper is opened by the dynamic loader of programs with
// DTrace probes (Node.js among them).
var seatbeltDevices = []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/dtracehelper"}

// seatbeltProfile is the profile for policy p, with write the
// directories its commands may write in (writableDirs: the writable
// roots in workspace-write, and the temp dir). Each is written with its
// links followed, since Seatbelt matches the path the kernel resolved
// (on macOS /tmp is /private/tmp, and $TMPDIR is under /private/var).
//
// Everything is denied but what the profile allows, and rules read top
// to bottom with the last match deciding. It allows: running programs,
// forking and signalling, what the C library and the usual runtimes ask
// of the system at start (sysctl reads, user and group lookups, reading
// preferences), reading every file, writing under write and to the
// devices and terminals, Unix sockets, and with p.Network every other
// socket and the services that name resolution and TLS use.
func seatbeltProfile(p Policy, write []string) (string, error) {
	var roots []string
	for _, w := range write {
		r := realPath(w)
		if !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	network := "off"
	if p.Network {
		network = "on"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "(version 1)\n; gopi's sandbox: %s, network %s. gopi made this profile from its policy.\n", p.Mode, network)
	b.WriteString(seatbeltBase)

	b.WriteString("\n; Writes: the directories of the policy, and nothing else on disk.\n(allow file-write*")
	for _, r := range roots {
		s, err := sbplString(r)
		if err != nil {
			return "", fmt.Errorf("the writable directory %q: %w", r, err)
		}
		b.WriteString("\n  (subpath " + s + ")")
	}
	b.WriteString(")\n")

	b.WriteString("\n; The devices every shell uses, and terminals.\n(allow file-write-data file-ioctl")
	for _, d := range seatbeltDevices {
		s, _ := sbplString(d) // constants, nothing to escape
		b.WriteString("\n  (literal " + s + ")")
	}
	b.WriteString(")\n")
	b.WriteString(seatbeltTerminals)

	if p.Network {
		b.WriteString(seatbeltNetworkOn)
	} else {
		b.WriteString(seatbeltNetworkOff)
	}
	return b.String(), nil
}

// seatbeltBase is what every profile allows besides writes and sockets.
const seatbeltBase = `(deny default)

; Programs: run any, fork; what they start inherits this profile and
; cannot leave it. Signals reach any process of the account, as on Linux
; (a later command may stop a background job an earlier one started).
(allow process-exec process-fork)
(allow process-info* (target same-sandbox))
(allow signal)

; What the C library and the usual runtimes ask at start.
(allow sysctl-read)
(allow sysctl-write (sysctl-name "kern.grade_cputype")) ; a read, though made as a write (the JVM asks it)
(allow iokit-open (iokit-registry-entry-class "RootDomainUserClient"))
(allow ipc-posix-sem)
(allow user-preference-read)
(allow ipc-posix-shm-read* (ipc-posix-name-prefix "apple.cfprefs."))
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo") ; users and groups
  (global-name "com.apple.PowerManagement.control")
  (global-name "com.apple.cfprefsd.daemon") ; preferences, read only above
  (global-name "com.apple.cfprefsd.agent")
  (local-name "com.apple.cfprefsd.agent"))

; Reads: every file the account can read.
(allow file-read*)
`

// seatbeltTerminals lets a command open a pseudo-terminal and use the
// one it was given (opened before the profile applied, so without
// Seatbelt's pty extension), and write to its own descriptors by name.
const seatbeltTerminals = `(allow pseudo-tty)
(allow file-read* file-write* file-ioctl
  (literal "/dev/ptmx")
  (regex #"^/dev/ttys[0-9]+$"))
(allow file-read* file-write-data (subpath "/dev/fd"))
`

// seatbeltNetworkOff keeps Unix sockets open and every other kind
// closed: the default denies them.
const seatbeltNetworkOff = `
; Network: off. Unix sockets only.
(allow system-socket (socket-domain AF_UNIX))
(allow network-bind (local unix-socket))
(allow network-outbound (remote unix-socket))
`

// seatbeltNetworkOn allows every socket and the system services that
// name resolution, proxies and TLS certificate checks go through.
const seatbeltNetworkOn = `
; Network: on.
(allow network*)
(allow system-socket (socket-domain AF_UNIX))
(allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2)))
(allow mach-lookup
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.SystemConfiguration.configd")
  (global-name "com.apple.networkd")
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.ocspd")
  (global-name "com.apple.bsd.dirhelper")
  (global-name "com.apple.system.opendirectoryd.membership"))
`

// sbplString is s as an SBPL string literal: in double quotes, with a
// backslash before each double quote and backslash, and the control
// characters a file name may hold written as the reader's escapes (\n,
// \t, \r). Other control characters have no escape gopi can rely on, so
// a path with one is refused rather than written wrong.
func sbplString(s string) (string, error) {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c == 0x7f:
			return "", fmt.Errorf("%w: control character %#02x", ErrPath, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// seatbeltArgs is the argument list that runs path with argv (argv[0]
// is the program's own name, as in exec.Cmd.Args) under profile.
func seatbeltArgs(profile, path string, argv []string) []string {
	args := []string{seatbeltExec, "-p", profile, "--", path}
	if len(argv) > 1 {
		args = append(args, argv[1:]...)
	}
	return args
}
