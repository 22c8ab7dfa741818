package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A folder left to another recorder (the session's directory inside an
// additional one) is recorded by neither snapshot nor restore of the
// outer scope: a restore, also of a checkpoint taken before the folder
// was excluded, leaves it as it is.
func TestRepoExcludedFolderLeftAlone(t *testing.T) {
	ctx := context.Background()
	top := t.TempDir()
	gitT(t, top, "init", "-q")
	write(t, top, "lib/a.txt", "a1", 0o644)
	write(t, top, "app/b.txt", "b1", 0o644)
	app := filepath.Join(top, "app")

	whole, err := Open(ctx, top, Options{IndexDir: t.TempDir()})
	require.NoError(t, err)
	defer whole.Close()
	older, err := whole.Snapshot(ctx, "s/older")
	require.NoError(t, err)

	r, err := Open(ctx, top, Options{IndexDir: t.TempDir(), Exclude: []string{app, filepath.Join(t.TempDir(), "elsewhere")}})
	require.NoError(t, err)
	defer r.Close()
	c1, err := r.Snapshot(ctx, "s/c1")
	require.NoError(t, err)
	assert.NotContains(t, gitT(t, top, "ls-tree", "-r", "--name-only", c1), "app/b.txt", "the excluded folder is not recorded")

	write(t, top, "lib/a.txt", "a2", 0o644)
	write(t, top, "app/b.txt", "b2", 0o644)
	write(t, top, "app/new.txt", "new", 0o644)
	changes, err := r.Changes(ctx, c1)
	require.NoError(t, err)
	require.Len(t, changes, 1)
	assert.Equal(t, "lib/a.txt", changes[0].Path)

	for _, c := range []string{c1, older} {
		_, _, err = r.Restore(ctx, c, "", false)
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"lib/a.txt": "a1", "app/b.txt": "b2", "app/new.txt": "new"}, tree(t, top), "restoring %s", c)
		write(t, top, "lib/a.txt", "a2", 0o644)
	}
}

// The journal keeps nothing of an excluded folder and restores nothing
// there, whatever an earlier record holds.
func TestJournalExcludedFolderLeftAlone(t *testing.T) {
	project := t.TempDir()
	dir := filepath.Join(t.TempDir(), "checkpoints", "s1")
	write(t, project, "a.txt", "a1", 0o644)
	write(t, project, "inner/b.txt", "b1", 0o644)
	record(t, OpenJournal(dir, project), "c1", project, "a.txt", "inner/b.txt")

	j := OpenJournal(dir, project, filepath.Join(project, "inner"))
	first, err := j.Record("c2", filepath.Join(project, "inner", "b.txt"))
	require.NoError(t, err)
	assert.False(t, first, "an excluded file is not the journal's")
	write(t, project, "a.txt", "a2", 0o644)
	write(t, project, "inner/b.txt", "b2", 0o644)
	changes, err := j.Restore([]string{"c1", "c2"}, "u1", false)
	require.NoError(t, err)
	require.Len(t, changes, 1)
	assert.Equal(t, "a.txt", changes[0].Path)
	assert.Equal(t, map[string]string{"a.txt": "a1", filepath.Join("inner", "b.txt"): "b2"}, tree(t, project))
	_, err = os.Stat(j.recordsFile("c2"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing was kept under c2")
}
