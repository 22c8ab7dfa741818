// Package launch confines a thread for the sandbox (core/sandbox) with
// what gopi prepared, a Landlock ruleset and seccomp programs
// ([ConfineThread], on Linux), and is the sandbox's launcher: a binary
// started with [Arg] as its first argument confines itself so and
// executes the command in its place. gopi starts most commands from a
// confined thread of its own and uses the launcher only where that
// cannot serve (core/sandbox's Sandbox.Start says when).
//
// It imports the standard library's os, syscall and strconv only, so
// that Go initialises it right after os: a confined command does not
// wait for the rest of gopi's packages to be initialised. The runtime
// keeps init on the main thread, the one that is confined and then
// executes the command.
package launch

import (
	"os"
	"strconv"
)

// Arg, as a binary's first argument, makes it the launcher. Its other
// arguments: -ruleset FD FLAGS (a Landlock ruleset inherited as FD),
// -seccomp HEX for each seccomp program to load, in order (raw BPF
// instructions, 8 bytes each), then "--", the program to execute and its
// argv.
const Arg = "__gopi-sandbox"

// The launcher's flags.
const (
	FlagRuleset = "-ruleset"
	FlagSeccomp = "-seccomp"
)

// TestABIEnv is a test hook: a number in it caps the Landlock ABI gopi
// believes the kernel has (0: no Landlock), so a test can see how gopi
// behaves on an older kernel. It can only make gopi refuse more, never
// confine less than the kernel allows.
const TestABIEnv = "GOPI_SANDBOX_TEST_LANDLOCK_ABI"

// CapABI applies [TestABIEnv] to abi.
func CapABI(abi int) int {
	if v, ok := os.LookupEnv(TestABIEnv); ok {
		if n, err := strconv.Atoi(v); err == nil && n < abi {
			return max(n, 0)
		}
	}
	return abi
}

// FailedStatus is the launcher's exit status when it could not confine
// itself: the command did not run.
const FailedStatus = 126

func init() {
	if len(os.Args) > 1 && os.Args[1] == Arg {
		msg := launch(os.Args[2:])
		// launch returns only when the command could not be executed
		// confined; it is never executed otherwise.
		_, _ = os.Stderr.WriteString("gopi: sandbox: " + msg + "; the command did not run\n")
		os.Exit(FailedStatus)
	}
}
