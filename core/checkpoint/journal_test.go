package checkpoint

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// journalWorld is a project outside git, its journal in an agent
// directory, and a folder outside the project.
func journalWorld(t *testing.T) (project, outside string, j *Journal) {
	t.Helper()
	project, outside = t.TempDir(), t.TempDir()
	return project, outside, OpenJournal(filepath.Join(t.TempDir(), "checkpoints", "s1"), project)
}

func record(t *testing.T, j *Journal, cp, project string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		_, err := j.Record(cp, filepath.Join(project, filepath.FromSlash(p)))
		require.NoError(t, err)
	}
}

// Issue 37 for the journal: links in the way are removed, never
// followed, a link the journal kept comes back as a link, and nothing
// outside the project changes; the undo puts the links back.
func TestJournalNeverFollowsLinks(t *testing.T) {
	project, outside, j := journalWorld(t)
	write(t, outside, "cfgdir/c.txt", "outside config\n", 0o644)
	write(t, outside, "subdir/f.txt", "outside f\n", 0o644)
	write(t, outside, "target.txt", "outside target\n", 0o600)
	link(t, filepath.Join(outside, "cfgdir"), filepath.Join(project, "cfg"))
	write(t, project, "a.txt", "project a\n", 0o644)
	write(t, project, "sub/f.txt", "project f\n", 0o644)
	record(t, j, "c1", project, "a.txt", "sub/f.txt", "cfg")
	before, outsideBefore := exact(t, project), exact(t, outside)

	link(t, filepath.Join(outside, "target.txt"), filepath.Join(project, "a.txt"))
	link(t, filepath.Join(outside, "subdir"), filepath.Join(project, "sub"))
	require.NoError(t, os.Remove(filepath.Join(project, "cfg")))
	write(t, project, "cfg/c.txt", "project config\n", 0o644)
	afterTurn := exact(t, project)

	_, err := j.Restore([]string{"c1"}, "u1", false)
	require.NoError(t, err)
	assert.Equal(t, before, exact(t, project))
	assert.Equal(t, outsideBefore, exact(t, outside), "nothing outside the project changed")

	_, err = j.Restore([]string{"u1"}, "u2", false)
	require.NoError(t, err)
	assert.Equal(t, afterTurn, exact(t, project), "the undo brings the links and the folder back")
	assert.Equal(t, outsideBefore, exact(t, outside))
}

// A file that became a folder and a folder that became a file: what is
// in the way is kept for the undo, then replaced.
func TestJournalKindChanges(t *testing.T) {
	project, _, j := journalWorld(t)
	write(t, project, "x", "x was a file\n", 0o644)
	write(t, project, "d/a.txt", "in d\n", 0o644)
	record(t, j, "c1", project, "x", "d/a.txt")
	before := exact(t, project)
	require.NoError(t, os.Remove(filepath.Join(project, "x")))
	write(t, project, "x/deep/y.txt", "y\n", 0o644)
	require.NoError(t, os.RemoveAll(filepath.Join(project, "d")))
	write(t, project, "d", "d is a file now\n", 0o644)
	afterTurn := exact(t, project)

	_, err := j.Restore([]string{"c1"}, "u1", false)
	require.NoError(t, err)
	assert.Equal(t, before, exact(t, project))
	_, err = j.Restore([]string{"u1"}, "", false)
	require.NoError(t, err)
	assert.Equal(t, afterTurn, exact(t, project))
}

// Files come back with the bits they had; a record made before the
// journal kept them gives a returning file 0600.
func TestJournalKeepsModes(t *testing.T) {
	project, _, j := journalWorld(t)
	write(t, project, ".env.local", "SECRET=1\n", 0o600)
	write(t, project, "key.pem", "-----BEGIN KEY-----\n", keyMode())
	write(t, project, "shared.txt", "for the group\n", 0o640)
	record(t, j, "c1", project, ".env.local", "key.pem", "shared.txt")
	before := exact(t, project)
	require.NoError(t, os.Remove(filepath.Join(project, ".env.local")))
	require.NoError(t, os.Remove(filepath.Join(project, "key.pem")))
	require.NoError(t, os.Chmod(filepath.Join(project, "shared.txt"), 0o644))
	changes, err := j.Changes([]string{"c1"})
	require.NoError(t, err)
	assert.Len(t, changes, 3, "a change of bits alone is a change")
	_, err = j.Restore([]string{"c1"}, "u1", false)
	require.NoError(t, err)
	assert.Equal(t, before, exact(t, project))

	// A record as the journal wrote it before it kept bits.
	legacy := journalRecord{Path: "old.txt", Existed: true}
	legacy.Blob, err = j.keep([]byte("old\n"))
	require.NoError(t, err)
	require.NoError(t, j.append("c0", legacy))
	_, err = j.Restore([]string{"c0"}, "", false)
	require.NoError(t, err)
	assert.Equal(t, `file 0600 "old\n"`, exact(t, project)["old.txt"])
}

// What the journal keeps is the user's alone, and its records name the
// bits.
func TestJournalIsPrivate(t *testing.T) {
	project, _, j := journalWorld(t)
	write(t, project, "a.txt", "a\n", 0o644)
	record(t, j, "c1", project, "a.txt")
	require.NoError(t, filepath.WalkDir(filepath.Dir(j.dir), func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := d.Info()
		require.NoError(t, err)
		if d.IsDir() {
			assert.Equal(t, fs.FileMode(0o700), info.Mode().Perm(), p)
		} else {
			assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm(), p)
		}
		return nil
	}))
	data, err := os.ReadFile(j.recordsFile("c1"))
	require.NoError(t, err)
	var rec journalRecord
	require.NoError(t, json.Unmarshal(data, &rec))
	assert.Equal(t, "644", rec.Perm)
}
