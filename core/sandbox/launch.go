package sandbox

import (
	"os"
	"strconv"
)

// LauncherArg, as a binary's first argument, makes it the launcher: it
// confines itself and executes the command after "--". Its other
// arguments: -no-network, then -w DIR for each directory it may write.
const LauncherArg = "__gopi-sandbox"

const (
	flagNoNetwork = "-no-network"
	flagWrite     = "-w"
)

// TestABIEnv is a test hook: a number in it caps the Landlock ABI gopi
// believes the kernel has (0: no Landlock), so a test can see how gopi
// behaves on an older kernel. It can only make gopi refuse more, never
// confine less than the kernel allows.
const TestABIEnv = "GOPI_SANDBOX_TEST_LANDLOCK_ABI"

// support is what this kernel offers a sandbox.
type support struct {
	landlockABI int
	seccomp     bool
	// why is set when the sandbox cannot work here at all (another OS).
	why string
}

// capABI applies [TestABIEnv] to abi.
func capABI(abi int) int {
	if v, ok := os.LookupEnv(TestABIEnv); ok {
		if n, err := strconv.Atoi(v); err == nil && n < abi {
			return max(n, 0)
		}
	}
	return abi
}
