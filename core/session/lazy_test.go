package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// compactedFile writes a session of n user/assistant turns with a
// compaction keeping the last keep turns, and one message before the kept
// ones whose content does not decode. It returns the path and the id of
// that message.
func compactedFile(t *testing.T, n, keep int) (path, badID string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}` + "\n")
	parent, firstKept := "null", ""
	for i := range n {
		u, a := fmt.Sprintf("u%04d", i), fmt.Sprintf("a%04d", i)
		content := fmt.Sprintf(`[{"type":"text","text":"question %d"}]`, i)
		if i == 1 {
			content, badID = `42`, u
		}
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"t","message":{"role":"user","content":%s,"timestamp":1}}`+"\n", u, parent, content)
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%q,"timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"answer %d"}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}`+"\n", a, u, i)
		parent = fmt.Sprintf("%q", a)
		if i == n-keep {
			firstKept = u
		}
	}
	fmt.Fprintf(&b, `{"type":"compaction","id":"c1","parentId":%s,"timestamp":"t","summary":"earlier","firstKeptEntryId":%q,"tokensBefore":100}`+"\n", parent, firstKept)
	path = filepath.Join(t.TempDir(), "s.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path, badID
}

// Opening a session decodes the messages its context is made of, not those
// a compaction summarised: they are decoded on first use.
func TestOpenDecodesOnlyTheContext(t *testing.T) {
	const n, keep = 3000, 5
	path, badID := compactedFile(t, n, keep)
	s, rep, err := Open(path)
	require.NoError(t, err)
	assert.Empty(t, rep.Kept, "a message the context does not hold is not decoded, so not reported")

	undecoded := func() (n int) {
		for _, e := range s.Entries() {
			if me, ok := e.(*MessageEntry); ok && me.raw != nil {
				n++
			}
		}
		return n
	}
	summarised := 2 * (n - keep)
	assert.Equal(t, summarised, undecoded(), "the summarised turns wait")

	ctx := s.Context()
	require.Len(t, ctx.Messages, 1+2*keep)
	assert.Equal(t, "question 2995", ctx.Messages[1].(*llm.UserMessage).Content.Text())
	require.NotNil(t, ctx.Model)
	assert.Equal(t, "m", ctx.Model.ModelID)
	assert.Equal(t, summarised, undecoded(), "building the context decodes nothing more")

	// First use decodes; one that does not decode is kept as written.
	e, ok := s.Entry(badID)
	require.True(t, ok)
	me := e.(*MessageEntry)
	assert.Equal(t, llm.RoleUser, me.Role())
	um, ok := me.Message().(*llm.UnknownMessage)
	require.True(t, ok, "got %T", me.Message())
	assert.Equal(t, llm.RoleUser, um.Role)
	assert.Contains(t, string(um.Raw), `"content":42`)
	e, _ = s.Entry("u0002")
	assert.Equal(t, "question 2", e.(*MessageEntry).Message().(*llm.UserMessage).Content.Text())
	assert.Equal(t, summarised-2, undecoded())

	// The file is written back as it was read.
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	s.mu.Lock()
	require.NoError(t, s.replaceWhole())
	s.mu.Unlock()
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
}

// A message in the context that does not decode is found when the
// session opens, and kept as an unknown entry, as before decoding was lazy.
func TestOpenReportsABadMessageInTheContext(t *testing.T) {
	path, badID := compactedFile(t, 3, 3)
	s, rep, err := Open(path)
	require.NoError(t, err)
	require.Len(t, rep.Kept, 1)
	assert.Equal(t, 4, rep.Kept[0].Line, "the header, two lines of turn 0, then the bad one")
	e, ok := s.Entry(badID)
	require.True(t, ok)
	assert.IsType(t, &UnknownEntry{}, e)
	for _, m := range s.Context().Messages {
		if u, ok := m.(*llm.UserMessage); ok {
			assert.NotEqual(t, "", u.Content.Text())
		}
	}
}

// Decoding on first use is safe from several goroutines at once.
func TestLazyMessageConcurrentUse(t *testing.T) {
	path, _ := compactedFile(t, 50, 1)
	s, _, err := Open(path)
	require.NoError(t, err)
	var wg sync.WaitGroup
	got := make([][]string, 4)
	for g := range got {
		wg.Go(func() {
			for _, e := range s.Entries() {
				if me, ok := e.(*MessageEntry); ok && me.Role() == llm.RoleAssistant {
					got[g] = append(got[g], me.Message().(*llm.AssistantMessage).Content.Text())
				}
			}
		})
	}
	wg.Wait()
	require.Len(t, got[0], 50)
	for g := range got {
		assert.Equal(t, got[0], got[g])
	}
}
