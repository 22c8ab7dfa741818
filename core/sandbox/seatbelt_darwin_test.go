//go:build darwin

package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These run only on a Mac: the profile applied by sandbox-exec. The
// profile's text is tested on every OS (seatbelt_test.go).

// TestSeatbeltConfinesWrites: a confined command writes in the project
// and $TMPDIR, and not outside, directly, through a link or from a
// background job; in read-only not in the project either.
func TestSeatbeltConfinesWrites(t *testing.T) {
	l := newLayout(t)
	sb := newSandbox(t, WorkspaceWrite, false, l)
	assert.Equal(t, []string{LayerSeatbelt}, sb.State().Layers)
	require.NoError(t, os.Symlink(l.outside, filepath.Join(l.project, "out")))
	out, err := run(t, sb, l.project, `echo in > inside.txt && echo t > "$TMPDIR/t.txt" && echo dev > /dev/null && echo ok`)
	require.NoError(t, err, out)
	assert.Equal(t, "ok\n", out)
	for name, script := range map[string]string{
		"outside":        `echo x > ` + filepath.Join(l.outside, "direct.txt"),
		"through a link": `echo x > out/linked.txt`,
		"background job": `(echo x > ` + filepath.Join(l.outside, "bg.txt") + `) & wait $!`,
	} {
		out, err := run(t, sb, l.project, script)
		assert.Error(t, err, name)
		assert.Contains(t, out, "Operation not permitted", name)
	}
	entries, err := os.ReadDir(l.outside)
	require.NoError(t, err)
	assert.Empty(t, entries)

	ro := newSandbox(t, ReadOnly, false, l)
	out, err = run(t, ro, l.project, `echo x > inside2.txt`)
	assert.Error(t, err, out)
	assert.NoFileExists(t, filepath.Join(l.project, "inside2.txt"))
}

// TestSeatbeltNetwork: a loopback TCP listener is out of reach with the
// network off, and in reach with it on.
func TestSeatbeltNetwork(t *testing.T) {
	dial := `exec 3<>/dev/tcp/127.0.0.1/` + loopbackListener(t) + ` && echo connected`
	l := newLayout(t)
	out, err := run(t, newSandbox(t, WorkspaceWrite, false, l), l.project, dial)
	assert.Error(t, err, out)
	assert.NotContains(t, out, "connected")
	out, err = run(t, newSandbox(t, WorkspaceWrite, true, l), l.project, dial)
	assert.NoError(t, err, out)
	assert.Equal(t, "connected\n", out)
}
