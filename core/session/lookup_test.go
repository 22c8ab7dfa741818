package session

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckID(t *testing.T) {
	for _, id := range []string{"a", "abc", "my-id.1", "A_b-c.9", "0195b2c1-aaaa-7bbb-8ccc-123456789abc"} {
		assert.NoError(t, CheckID(id), id)
	}
	for _, id := range []string{"", "-a", "a-", ".a", "a.", "a/b", "a b", "a\\b", "é"} {
		assert.ErrorIs(t, CheckID(id), ErrBadID, id)
	}
}

func TestFindByIDAndReadHeader(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	a := write("1_a.jsonl", `{"type":"session","version":3,"id":"same","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/one"}`+"\n")
	write("2_b.jsonl", `{"type":"session","version":3,"id":"same","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/two"}`+"\n")
	write("3_c.jsonl", `{"type":"message","id":"x"}`+"\n")
	write("notes.txt", `{"type":"session","id":"other"}`)
	bom := write("4_d.jsonl", "\uFEFF"+`{"type":"session","id":"bom","timestamp":"t","cwd":"/b"}`)

	h, ok := ReadHeader(a)
	require.True(t, ok)
	assert.Equal(t, Header{Version: 3, ID: "same", Timestamp: "2026-01-01T00:00:00.000Z", Cwd: "/one"}, h)
	_, ok = ReadHeader(filepath.Join(dir, "3_c.jsonl"))
	assert.False(t, ok)
	h, ok = ReadHeader(bom)
	require.True(t, ok)
	assert.Equal(t, "bom", h.ID)

	assert.Equal(t, a, FindByID(dir, "same", ""))
	assert.Equal(t, filepath.Join(dir, "2_b.jsonl"), FindByID(dir, "same", "/two"))
	assert.Empty(t, FindByID(dir, "sam", ""), "exact ids only")
	assert.Empty(t, FindByID(dir, "other", ""), "only .jsonl files")
	assert.Empty(t, FindByID(filepath.Join(dir, "missing"), "same", ""))
}

func TestChosenIDs(t *testing.T) {
	st, err := InMemoryWithID("/w", "mem.1")
	require.NoError(t, err)
	assert.Equal(t, "mem.1", st.ID())
	_, err = InMemoryWithID("/w", "bad-")
	assert.ErrorIs(t, err, ErrBadID)
	_, err = Create(t.TempDir(), "/w", Options{ID: "a/../b"})
	assert.ErrorIs(t, err, ErrBadID)

	dir := t.TempDir()
	fr, err := ForkFrom(copyFixture(t, refFile), "/elsewhere", dir, Options{ID: "forked-1"})
	require.NoError(t, err)
	assert.Equal(t, "forked-1", fr.ID())
	assert.Equal(t, fr.File(), FindByID(dir, "forked-1", ""))
	_, err = ForkFrom(copyFixture(t, refFile), "/elsewhere", dir, Options{ID: ".x"})
	assert.ErrorIs(t, err, ErrBadID)
}

func TestSessionNameOnOneLine(t *testing.T) {
	st := InMemory("/w")
	_, err := st.AppendSessionInfo("  two\r\nlines\n\nhere ")
	require.NoError(t, err)
	assert.Equal(t, "two lines here", st.Name())
}
