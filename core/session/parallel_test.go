package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// A session long enough to be decoded on every core loads exactly as a
// short one does: entries in file order, damaged and kept lines reported
// with their line numbers.
func TestOpenLongSessionKeepsOrderAndReports(t *testing.T) {
	n := parallelFrom * 2
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}` + "\n")
	parent := "null"
	badAt, noIDAt := n/3, 2*n/3
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("e%05d", i)
		switch i {
		case badAt: // a known type that does not decode: kept, reported
			fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"t","message":{"role":"user","content":42}}`+"\n", id, parent)
		case noIDAt: // no id: damaged, skipped
			b.WriteString(`{"type":"message","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}` + "\n")
			continue
		default:
			fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"line %d"}],"timestamp":1}}`+"\n", id, parent, i)
		}
		parent = fmt.Sprintf("%q", id)
	}
	path := filepath.Join(t.TempDir(), "long.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))

	s, rep, err := Open(path)
	require.NoError(t, err)
	entries := s.Entries()
	require.Len(t, entries, n-1)
	for i, e := range entries {
		want := i
		if i >= noIDAt {
			want = i + 1
		}
		require.Equal(t, fmt.Sprintf("e%05d", want), e.Base().ID, "entry %d", i)
	}
	require.Len(t, rep.Kept, 1)
	assert.Equal(t, badAt+2, rep.Kept[0].Line)
	_, isUnknown := entries[badAt].(*UnknownEntry)
	assert.True(t, isUnknown, "the undecodable entry is kept as it was")
	require.Len(t, rep.Damaged, 1)
	assert.Equal(t, noIDAt+2, rep.Damaged[0].Line)
	me, ok := entries[n-2].(*MessageEntry)
	require.True(t, ok)
	assert.Equal(t, fmt.Sprintf("line %d", n-1), me.Message().(*llm.UserMessage).Content.Text())
}
