//go:build unix

package tools

import (
	"bytes"
	"context"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command that leaves nothing behind is forgotten when it ends; one
// whose background job runs on is kept until StopStarted ends the job.
func TestStartedGroupsFollowBackgroundJobs(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	code, err := LocalShell{}.Exec(ctx, ExecRequest{Command: "echo $$", Dir: t.TempDir(), Output: &out})
	require.NoError(t, err)
	require.Equal(t, 0, *code)
	quick, err := strconv.Atoi(strings.TrimSpace(out.String()))
	require.NoError(t, err)
	assert.NotContains(t, started.snapshot(), quick, "a command with nothing left running is forgotten")

	out.Reset()
	_, err = LocalShell{}.Exec(ctx, ExecRequest{Command: "sleep 30 & echo $!", Dir: t.TempDir(), Output: &out})
	require.NoError(t, err)
	job, err := strconv.Atoi(strings.TrimSpace(out.String()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(job, syscall.SIGKILL) })
	require.NoError(t, syscall.Kill(job, 0), "the background job runs after its command")
	pgid, err := syscall.Getpgid(job)
	require.NoError(t, err)
	assert.Contains(t, started.snapshot(), pgid)

	StopStarted(time.Second)
	assert.Empty(t, started.snapshot())
	assert.False(t, groupAlive(pgid), "the job was ended")
	if _, err := os.Stat("/proc"); err == nil {
		assert.False(t, groupRunning(pgid))
	}
}

// snapshot lists the groups held, for tests.
func (g *groupSet) snapshot() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Collect(maps.Keys(g.ids))
}
