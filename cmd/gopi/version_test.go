package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 41: `gopi --version` said `dev` and nothing else unless built
// through make. It names the commit and its date, and `--version --json`
// gives tools the same as an object; the first line stays
// `gopi <version>`. The release's stamps are checked on the release
// binary by cmd/release's tests; what a binary built without them reads
// from the toolchain, by TestBuildFromToolchainRecord.
func TestVersionNamesCommitAndDate(t *testing.T) {
	t.Parallel()
	bin := gopiBinary(t)
	out, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.True(t, strings.HasPrefix(lines[0], "gopi "), "%s", out)
	assert.Equal(t, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH, lines[len(lines)-1])

	out, err = exec.Command(bin, "--version", "--json").Output()
	require.NoError(t, err)
	var b struct{ Version, Commit, Date, Go, Platform string }
	require.NoError(t, json.Unmarshal(out, &b), "%s", out)
	assert.Equal(t, strings.TrimPrefix(lines[0], "gopi "), b.Version)
	assert.Equal(t, runtime.GOOS+"/"+runtime.GOARCH, b.Platform)

	if b.Commit != "" {
		assert.Contains(t, lines, "commit "+b.Commit)
	}
	if b.Date != "" {
		assert.Contains(t, lines, "built "+b.Date)
	}
}

func TestJSONFlagGoesWithVersion(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(gopiBinary(t), "--json")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 2, exit.ExitCode())
	assert.Contains(t, string(out), "--json goes with --version")
}

// go install ...@v0.1.0 records the module's version; a build in a git
// checkout (with -buildvcs, the default) the revision, its time and
// whether the tree had changes. Stamps win over both.
func TestBuildFromToolchainRecord(t *testing.T) {
	t.Parallel()
	base := buildInfo{Version: "dev", Go: "go1.26.8", Platform: "linux/amd64"}
	installed := &debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}}
	assert.Equal(t, "0.1.0", buildFrom(base, installed).Version)

	checkout := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "89b5792"}, {Key: "vcs.time", Value: "2026-11-29T00:37:07Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	got := buildFrom(base, checkout)
	assert.Equal(t, buildInfo{Version: "dev", Commit: "89b5792-dirty", Date: "2026-11-29T00:37:07Z", Go: "go1.26.8", Platform: "linux/amd64"}, got)

	stamped := base
	stamped.Version, stamped.Commit, stamped.Date = "0.2.0", "abc", "2026-12-01T00:00:00Z"
	assert.Equal(t, stamped, buildFrom(stamped, checkout))
	assert.Equal(t, base, buildFrom(base, nil))
}

// Issue 41: every start runs the init of every package linked in, before
// main, whatever the command. gopi's own packages compiled their regular
// expressions and parsed the system prompt's templates there (112 KB
// allocated on each start, core/resources alone 418 allocations); they
// build them on first use now. The budget is per package, in bytes
// allocated, which GODEBUG=inittrace reports exactly, unlike its times.
func TestOwnPackagesDoLittleAtInit(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(gopiBinary(t), "--version")
	cmd.Env = append(binaryEnv(), "GODEBUG=inittrace=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run())
	seen := 0
	for _, line := range strings.Split(stderr.String(), "\n") {
		// init github.com/gopi-dev/gopi/core/llm @125 ms, 0.33 ms clock, 4176 bytes, 32 allocs
		fields := strings.Fields(line)
		if len(fields) < 10 || fields[0] != "init" || !strings.HasPrefix(fields[1], "github.com/gopi-dev/gopi/") {
			continue
		}
		seen++
		var bytes int
		_, err := fmt.Sscan(fields[7], &bytes)
		require.NoError(t, err, line)
		assert.LessOrEqual(t, bytes, 8<<10, "%s allocates %d bytes at init: build it on first use (sync.OnceValue)", fields[1], bytes)
	}
	assert.Greater(t, seen, 5, "inittrace lines of gopi's packages:\n%s", stderr.String())
}
