package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func perm(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	return info.Mode().Perm()
}

// Issue 25: session files are 0600 in 0700 directories when gopi makes
// them; an existing file keeps its mode, a migrated one too.
func TestNewSessionFilesArePrivate(t *testing.T) {
	agentDir := t.TempDir()
	dir := DefaultDir(agentDir, "/home/me/project")
	s, err := Create(dir, "/home/me/project", Options{})
	require.NoError(t, err)
	mustAppend(t, s, user("u"))
	mustAppend(t, s, assistant("a"))
	assert.Equal(t, os.FileMode(0o700), perm(t, filepath.Join(agentDir, "sessions")))
	assert.Equal(t, os.FileMode(0o700), perm(t, dir))
	assert.Equal(t, os.FileMode(0o600), perm(t, s.File()))

	c, err := s.Clone()
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), perm(t, c.File()))
	f, err := ForkFrom(s.File(), "/elsewhere", filepath.Join(agentDir, "forks", "x"), Options{})
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), perm(t, f.File()))
	assert.Equal(t, os.FileMode(0o700), perm(t, filepath.Dir(f.File())))

	// A file the user made keeps its mode when written, and when removed
	// and written again by the same store it is private.
	require.NoError(t, os.Chmod(s.File(), 0o640))
	mustAppend(t, s, user("more"))
	assert.Equal(t, os.FileMode(0o640), perm(t, s.File()))
	old := copyFixture(t, "../../testdata/sessions/v1.jsonl")
	require.NoError(t, os.Chmod(old, 0o604))
	_, rep, err := Open(old)
	require.NoError(t, err)
	require.True(t, rep.Rewritten)
	assert.Equal(t, os.FileMode(0o604), perm(t, old), "a migrated file keeps its mode")
}

// Issue 25: two stores (two processes) on one new file, taking turns:
// every entry of both is in the file, which loads; the second one's
// conversation is a second root after the first's.
func TestTwoWritersOnOneFileKeepEveryEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.jsonl")
	a, err := Create(filepath.Dir(path), "/x", Options{Path: path})
	require.NoError(t, err)
	b, err := Create(filepath.Dir(path), "/x", Options{Path: path})
	require.NoError(t, err)
	var ids []string
	for round := range 2 {
		for _, s := range []*Store{a, b} {
			who := map[*Store]string{a: "A", b: "B"}[s]
			ids = append(ids, mustAppend(t, s, user(who+" asks")), mustAppend(t, s, assistant(who+" answered")))
			_ = round
		}
	}
	re, rep, err := Open(path)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep)
	assert.Equal(t, a.ID(), re.ID(), "the first writer's header")
	got := map[string]bool{}
	for _, e := range re.Entries() {
		got[e.Base().ID] = true
		if p := e.Base().ParentID; p != "" {
			assert.True(t, got[p], "entry %s's parent %s is in the file before it", e.Base().ID, p)
		}
	}
	for _, id := range ids {
		assert.True(t, got[id], "entry %s is in the file", id)
	}
	assert.Len(t, re.Entries(), 8)
	assert.Len(t, re.Tree(), 2)
	assert.Equal(t, []string{"B asks", "B answered", "B asks", "B answered"}, texts(re.Context().Messages))
	assert.Equal(t, 1, strings.Count(readString(t, path), `"type":"session"`), "one header")
}

// Issue 25: a file removed while the session runs is written again whole,
// header first; a file replaced by something that is not a session is
// left alone and the write fails.
func TestRemovedFileIsWrittenWholeAndAStrangerIsLeftAlone(t *testing.T) {
	s, err := Create(t.TempDir(), "/x", Options{})
	require.NoError(t, err)
	mustAppend(t, s, user("u"))
	mustAppend(t, s, assistant("a"))
	require.NoError(t, os.Remove(s.File()))
	mustAppend(t, s, user("b"))
	re, rep, err := Open(s.File())
	require.NoError(t, err)
	assert.True(t, rep.OK())
	assert.Equal(t, s.ID(), re.ID())
	assert.Equal(t, []string{"u", "a", "b"}, texts(re.Context().Messages))

	require.NoError(t, os.WriteFile(s.File(), []byte("# notes\n"), 0o644))
	_, err = s.AppendMessage(assistant("c"))
	require.ErrorIs(t, err, ErrNotSession)
	assert.Equal(t, "# notes\n", readString(t, s.File()))
	assert.True(t, s.Unsaved())

	// A copy of the session put back (a new file): only what it lacks is
	// added, nothing twice.
	full, err := s.contents()
	require.NoError(t, err)
	lines := strings.SplitAfter(string(full), "\n")
	require.NoError(t, os.Remove(s.File()))
	require.NoError(t, os.WriteFile(s.File(), []byte(strings.Join(lines[:3], "")), 0o600))
	require.NoError(t, s.Save())
	assert.False(t, s.Unsaved())
	re, rep, err = Open(s.File())
	require.NoError(t, err)
	assert.True(t, rep.OK())
	assert.Equal(t, []string{"u", "a", "b", "c"}, texts(re.Context().Messages))
	assert.Len(t, re.Entries(), 4)
}

// Issue 25: a byte order mark before the header is skipped when opening,
// listing and finding the most recent session.
func TestByteOrderMarkBeforeTheHeader(t *testing.T) {
	data, err := os.ReadFile(refFile)
	require.NoError(t, err)
	dir := t.TempDir()
	path := filepath.Join(dir, "bom.jsonl")
	require.NoError(t, os.WriteFile(path, append([]byte("\xef\xbb\xbf"), data...), 0o644))
	s, rep, err := Open(path)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep)
	assert.NotEmpty(t, s.Entries())
	infos, err := List(dir)
	require.NoError(t, err)
	require.Len(t, infos, 1)
	assert.Equal(t, s.ID(), infos[0].ID)
	recent, err := MostRecent(dir)
	require.NoError(t, err)
	assert.Equal(t, path, recent)
	mustAppend(t, s, user("after the mark"))
	_, rep, err = Open(path)
	require.NoError(t, err)
	assert.True(t, rep.OK())
}

// Issue 25: a cwd whose pi directory name would pass NAME_MAX gets a
// shortened one; pi's own names are kept.
func TestDefaultDirOfALongCwd(t *testing.T) {
	short := "/" + strings.Repeat("a", 251) // "--" + 251 + "--" = 255 bytes
	assert.Equal(t, filepath.Join("/a", "sessions", "--"+strings.Repeat("a", 251)+"--"), DefaultDir("/a", short))

	long := "/" + strings.Repeat("deep-directory/", 30) + "project"
	name := filepath.Base(DefaultDir("/a", long))
	assert.Len(t, name, maxDirName)
	assert.True(t, strings.HasPrefix(name, "--deep-directory-deep-directory-"))
	assert.Regexp(t, `-[0-9a-f]{32}--$`, name)
	assert.Equal(t, name, filepath.Base(DefaultDir("/a", long)), "the same cwd, the same directory")
	assert.NotEqual(t, name, filepath.Base(DefaultDir("/a", long+"2")))

	// A multi-byte character is not cut in half.
	wide := "/" + strings.Repeat("é", 200)
	assert.True(t, strings.HasSuffix(strings.TrimSuffix(filepath.Base(DefaultDir("/a", wide)), "--")[:maxDirName-2-33], "é"))
}

// Issue 25: two writers appending at the same time (two open files, as
// two processes have) lose no line and cut none into another.
func TestConcurrentWritersInterleaveWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.jsonl")
	stores := make([]*Store, 2)
	for i := range stores {
		s, err := Create(filepath.Dir(path), "/x", Options{Path: path})
		require.NoError(t, err)
		stores[i] = s
	}
	const each = 100
	done := make(chan struct{}, len(stores))
	for i, s := range stores {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := range each {
				if _, err := s.AppendMessage(assistant(strings.Repeat(string(rune('a'+i)), 5000+j))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range stores {
		<-done
	}
	re, rep, err := Open(path)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep)
	assert.Len(t, re.Entries(), 2*each)
	assert.Equal(t, 1, strings.Count(readString(t, path), `"type":"session"`))
}
