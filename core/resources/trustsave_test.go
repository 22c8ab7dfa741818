package resources

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A remembered decision joins the others in trust.json (null ones kept),
// written as pi writes it, under pi's lock, which it leaves free.
func TestSaveTrust(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	agentDir := filepath.Join(root, "agent")
	project := filepath.Join(root, "work", "project")
	require.NoError(t, os.MkdirAll(filepath.Join(project, ".pi"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(project, ".pi", "settings.json"), []byte("{}"), 0o644))
	link := filepath.Join(root, "link")
	require.NoError(t, os.Symlink(project, link))
	require.NoError(t, os.MkdirAll(agentDir, 0o755))
	store := filepath.Join(agentDir, "trust.json")
	require.NoError(t, os.WriteFile(store, []byte(`{"/z/other": false, "/a/cleared": null}`), 0o644))

	require.NoError(t, SaveTrust(agentDir, link, true))
	b, err := os.ReadFile(store)
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"/a/cleared\": null,\n  \""+project+"\": true,\n  \"/z/other\": false\n}\n", string(b),
		"sorted, two-space indent, the real path as key")
	_, err = os.Stat(store + ".lock")
	assert.ErrorIs(t, err, os.ErrNotExist, "the lock is released")

	d, err := ResolveTrust(TrustOptions{Cwd: project, AgentDir: agentDir})
	require.NoError(t, err)
	assert.True(t, d.Trusted, "what was saved is read back: %s", d.Why)

	// A lock held by a live writer wins; one left stale is taken over.
	require.NoError(t, os.Mkdir(store+".lock", 0o755))
	assert.ErrorContains(t, SaveTrust(agentDir, project, false), "held by another process")
	old := time.Now().Add(-time.Minute)
	require.NoError(t, os.Chtimes(store+".lock", old, old))
	require.NoError(t, SaveTrust(agentDir, project, false))
	d, err = ResolveTrust(TrustOptions{Cwd: project, AgentDir: agentDir})
	require.NoError(t, err)
	assert.False(t, d.Trusted)

	require.NoError(t, os.WriteFile(store, []byte(`[1]`), 0o644))
	assert.ErrorContains(t, SaveTrust(agentDir, project, true), "expected an object", "a store it cannot read is left alone")
}
