package session

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

func TestListNewestFirst(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	dir := DefaultDir(filepath.Dir(root), "/proj")
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

	mk := func(first string, lastActivity int64, name string) *Store {
		s, err := Create(dir, "/proj", Options{})
		require.NoError(t, err)
		mustAppend(t, s, &llm.UserMessage{Content: llm.Contents{llm.TextContent{Text: first}, llm.TextContent{Text: "more"}}, Timestamp: lastActivity - 1})
		a := assistant("reply")
		a.Timestamp = lastActivity
		mustAppend(t, s, a)
		mustAppend(t, s, &llm.ToolResultMessage{ToolCallID: "t", ToolName: "x", Timestamp: lastActivity + 99999}) // not activity
		if name != "" {
			_, err := s.AppendSessionInfo(name)
			require.NoError(t, err)
		}
		return s
	}
	old := mk("old one", base+1000, "")
	newest := mk("newest one", base+3000, "named")
	mid := mk("middle one", base+2000, "")

	// Files that are not sessions are skipped; an unwritten session too.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "junk.jsonl"), []byte(`{"type":"message"}`+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644))
	lazy, err := Create(dir, "/proj", Options{})
	require.NoError(t, err)
	mustAppend(t, lazy, user("never written"))

	infos, err := List(dir)
	require.NoError(t, err)
	require.Len(t, infos, 3)
	assert.Equal(t, []string{newest.File(), mid.File(), old.File()}, []string{infos[0].Path, infos[1].Path, infos[2].Path})
	got := infos[0]
	assert.Equal(t, newest.ID(), got.ID)
	assert.Equal(t, "/proj", got.Cwd)
	assert.Equal(t, "named", got.Name)
	assert.Equal(t, "newest one more", got.FirstMessage)
	assert.Equal(t, 3, got.MessageCount)
	assert.Equal(t, base+3000, got.Modified.UnixMilli())
	created, _ := time.Parse(time.RFC3339Nano, newest.Header().Timestamp)
	assert.True(t, created.Equal(got.Created))

	// Another cwd, for ListAll.
	other, err := Create(DefaultDir(filepath.Dir(root), "/other"), "/other", Options{})
	require.NoError(t, err)
	a := assistant("x")
	a.Timestamp = base + 2500
	mustAppend(t, other, a)
	all, err := ListAll(root)
	require.NoError(t, err)
	require.Len(t, all, 4)
	assert.Equal(t, []string{newest.File(), other.File(), mid.File(), old.File()},
		[]string{all[0].Path, all[1].Path, all[2].Path, all[3].Path})
	assert.Equal(t, "", all[1].FirstMessage)

	missing, err := List(filepath.Join(root, "nope"))
	require.NoError(t, err)
	assert.Empty(t, missing)
}

func TestListReference(t *testing.T) {
	dir := filepath.Dir(copyFixture(t, refFile))
	infos, err := List(dir)
	require.NoError(t, err)
	require.Len(t, infos, 1)
	assert.Equal(t, "reference session", infos[0].Name)
	assert.Equal(t, "read: greeting.txt", infos[0].FirstMessage)
	assert.Equal(t, 15, infos[0].MessageCount)
	assert.Equal(t, int64(1795270344267), infos[0].Modified.UnixMilli())
}

func TestMostRecent(t *testing.T) {
	dir := t.TempDir()
	p, err := MostRecent(dir)
	require.NoError(t, err)
	assert.Empty(t, p)

	var files []string
	for i := range 3 {
		s, err := Create(dir, "/x", Options{})
		require.NoError(t, err)
		mustAppend(t, s, assistant("a"))
		when := time.Now().Add(time.Duration(i-10) * time.Hour)
		require.NoError(t, os.Chtimes(s.File(), when, when))
		files = append(files, s.File())
	}
	when := time.Now()
	require.NoError(t, os.Chtimes(files[1], when, when))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "zz.jsonl"), []byte("garbage\n"), 0o644))
	p, err = MostRecent(dir)
	require.NoError(t, err)
	assert.Equal(t, files[1], p)
}
