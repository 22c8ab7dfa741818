// Package testenv finds the external programs some tests need (ripgrep,
// fd, python3, chromium) and decides what a missing one means: on a
// developer's machine the test is skipped; in CI, where .ci/run installs
// every one of them and sets GOPI_REQUIRE_TOOLS=1, it fails, so the code
// paths users hit with those programs installed are always tested there.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// RequireEnv is the variable that turns a missing program into a failure.
const RequireEnv = "GOPI_REQUIRE_TOOLS"

// Required reports whether missing programs fail tests instead of
// skipping them.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// LookPath returns the path of the first of names found on PATH. When
// none is found it skips the test, or fails it when Required.
func LookPath(t testing.TB, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if Required() {
		t.Fatalf("%s=1 but none of %v is on PATH", RequireEnv, names)
	}
	t.Skipf("none of %v is on PATH; set %s=1 to fail instead", names, RequireEnv)
	return ""
}
