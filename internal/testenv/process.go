//go:build unix

package testenv

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Alive reports whether process pid exists and is not a zombie: tests use
// it to prove that no child (an MCP server, a shell) outlived its owner.
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// ReadPID reads the process id a child wrote to path, failing the test
// when there is none.
func ReadPID(t testing.TB, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the pid file %s holds %q: %v", path, b, err)
	}
	return pid
}

// WaitPID is ReadPID for a child that writes its pid file itself: it
// waits up to within for the file to hold a number.
func WaitPID(t testing.TB, path string, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s within %v", path, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
