package testenv

import (
	"testing"
)

// fakeTB records whether LookPath skipped or failed.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper()                      {}
func (f *fakeTB) Skipf(string, ...any)         { f.skipped = true }
func (f *fakeTB) Fatalf(string, ...any)        { f.failed = true }
func (f *fakeTB) Logf(format string, a ...any) {}

func TestLookPathFindsAProgram(t *testing.T) {
	// sh is on every machine that can run these tests.
	if p := LookPath(t, "gopi-no-such-program", "sh"); p == "" {
		t.Fatal("sh not found")
	}
}

func TestMissingProgramSkipsOrFails(t *testing.T) {
	t.Setenv(RequireEnv, "")
	f := &fakeTB{TB: t}
	LookPath(f, "gopi-no-such-program")
	if !f.skipped || f.failed {
		t.Fatalf("without %s: skipped=%v failed=%v, want a skip", RequireEnv, f.skipped, f.failed)
	}

	t.Setenv(RequireEnv, "1")
	f = &fakeTB{TB: t}
	LookPath(f, "gopi-no-such-program")
	if !f.failed {
		t.Fatalf("with %s=1 a missing program must fail the test", RequireEnv)
	}
}
