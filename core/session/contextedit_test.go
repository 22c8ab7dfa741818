package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// pi 1.5's context_edit entries: the latest edit of a target on the branch
// leaves it out of the model context or replaces its content; the file,
// the entries and other branches keep the original.
func TestContextEditsShapeTheContext(t *testing.T) {
	lines := []string{
		`{"type":"session","version":3,"id":"s1","timestamp":"2026-11-25T10:00:00.000Z","cwd":"/w"}`,
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-11-25T10:00:01.000Z","message":{"role":"user","content":"first question","timestamp":1}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-11-25T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"a long answer"}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}`,
		`{"type":"custom_message","customType":"note","content":"an extension note","display":true,"id":"c1","parentId":"a1","timestamp":"2026-11-25T10:00:03.000Z"}`,
		`{"type":"message","id":"u2","parentId":"c1","timestamp":"2026-11-25T10:00:04.000Z","message":{"role":"user","content":"second question","timestamp":4}}`,
		`{"type":"context_edit","id":"e1","parentId":"u2","timestamp":"2026-11-25T10:00:05.000Z","targetId":"a1","replacement":{"content":"first, shorter"}}`,
		`{"type":"context_edit","id":"e2","parentId":"e1","timestamp":"2026-11-25T10:00:06.000Z","targetId":"a1","replacement":{"content":"a short answer"}}`,
		`{"type":"context_edit","id":"e3","parentId":"e2","timestamp":"2026-11-25T10:00:07.000Z","targetId":"c1","replacement":null}`,
		`{"type":"context_edit","id":"e4","parentId":"e3","timestamp":"2026-11-25T10:00:08.000Z","targetId":"u1","replacement":{"content":[{"type":"text","text":"first question, edited"}]}}`,
		// Another branch from u2: its edit does not apply on the main one.
		`{"type":"context_edit","id":"x1","parentId":"u2","timestamp":"2026-11-25T10:00:09.000Z","targetId":"u2","replacement":null}`,
		`{"type":"usage","id":"w1","parentId":"e4","timestamp":"2026-11-25T10:00:09.500Z","kind":"cache_warm","provider":"anthropic","model":"m","usage":{"input":0,"output":0,"cacheRead":50,"cacheWrite":0,"totalTokens":50,"cost":{"input":0,"output":0,"cacheRead":0.015,"cacheWrite":0,"total":0.015}}}`,
		`{"type":"message","id":"u3","parentId":"w1","timestamp":"2026-11-25T10:00:10.000Z","message":{"role":"user","content":"third","timestamp":10}}`,
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := strings.Join(lines, "\n") + "\n"
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
	s, rep, err := Open(path)
	require.NoError(t, err)
	require.True(t, rep.OK(), "%+v", rep)

	ctx := s.Context()
	assert.Equal(t, []string{"first question, edited", "a short answer", "second question", "third"}, texts(ctx.Messages))
	am := ctx.Messages[1].(*llm.AssistantMessage)
	assert.Equal(t, "m", am.Model, "an edit keeps the message's role and metadata")
	assert.Equal(t, llm.Contents{llm.TextContent{Text: "a short answer"}}, am.Content, "a string becomes one text block")

	// A usage entry (pi 1.5) is read as one, and reaches no model.
	w, _ := s.Entry("w1")
	require.IsType(t, &UsageEntry{}, w)
	assert.Equal(t, 50, w.(*UsageEntry).Usage.CacheRead)
	assert.Equal(t, "cache_warm", w.(*UsageEntry).Kind)

	// The targets themselves are unchanged.
	e, _ := s.Entry("a1")
	assert.Equal(t, "a long answer", e.(*MessageEntry).Message().(*llm.AssistantMessage).Content.Text())

	// On the other branch, x1 leaves u2 out and e1–e4 are not there.
	require.NoError(t, s.SetLeaf("x1"))
	assert.Equal(t, []string{"first question", "a long answer", "custom:an extension note"}, texts(s.Context().Messages))

	// Saved again, the edits are written as they were read.
	for _, id := range []string{"e2", "e3", "w1"} {
		e, _ := s.Entry(id)
		b, err := json.Marshal(e)
		require.NoError(t, err)
		for _, l := range lines {
			if strings.Contains(l, `"id":"`+id+`"`) {
				assert.JSONEq(t, l, string(b))
				assert.True(t, strings.HasPrefix(string(b), `{"type":"`+string(e.Type())+`","id":"`+id+`","parentId":`), "pi's key order: %s", b)
			}
		}
	}
}

// Appending a context edit checks it as pi's appendContextEdit does: the
// target is an editable message of the active branch, the replacement is
// null or holds string or array content, and a string replacing an
// assistant's content becomes one text block.
func TestAppendContextEditChecks(t *testing.T) {
	s := InMemory("/w")
	u, err := s.AppendMessage(llm.UserText("question"))
	require.NoError(t, err)
	a, err := s.AppendMessage(&llm.AssistantMessage{Content: llm.Contents{llm.TextContent{Text: "answer"}}, StopReason: llm.StopStop})
	require.NoError(t, err)
	label, err := s.AppendLabel(u, "here")
	require.NoError(t, err)

	_, err = NewContextReplacement(json.RawMessage(`{"content":5}`))
	assert.Error(t, err, "content must be a string or an array")
	none, err := NewContextReplacement(json.RawMessage(`null`))
	require.NoError(t, err)
	assert.Nil(t, none)

	_, err = s.AppendContextEdit("nowhere", none)
	assert.ErrorContains(t, err, "not on the active branch")
	_, err = s.AppendContextEdit(label, none)
	assert.ErrorContains(t, err, "does not contribute editable model content")

	short, err := NewContextReplacement(json.RawMessage(`{"content":"short"}`))
	require.NoError(t, err)
	id, err := s.AppendContextEdit(a, short)
	require.NoError(t, err)
	e, ok := s.Entry(id)
	require.True(t, ok)
	assert.JSONEq(t, `[{"type":"text","text":"short"}]`, string(e.(*ContextEditEntry).Replacement.Content))
	msgs := s.Context().Messages
	require.Len(t, msgs, 2)
	assert.Equal(t, "short", msgs[1].(*llm.AssistantMessage).Content.Text())

	// The preview checks the same way and appends nothing.
	_, _, err = s.PreviewContext([]Entry{&ContextEditEntry{TargetID: "nowhere"}})
	assert.ErrorContains(t, err, "not on the active branch")
	c, entries, err := s.PreviewContext([]Entry{&ContextEditEntry{TargetID: u}})
	require.NoError(t, err)
	require.Len(t, c.Messages, 1, "the question left out")
	var types []string
	var given []int
	for _, e := range entries {
		types = append(types, string(e.SourceEntry.Type()))
		given = append(given, len(e.Messages))
	}
	assert.Equal(t, []string{"message", "message", "label", "context_edit", "context_edit"}, types, "the entries, the previewed one last")
	assert.Equal(t, []int{0, 1, 0, 0, 0}, given, "the question is edited out, the shortened answer stays")
	assert.Equal(t, "preview-0", entries[4].SourceEntry.Base().ID)
	assert.Equal(t, 4, s.Len(), "question, answer, label, edit")
}

// The entries a context is built from, as pi's buildContextEntries
// selects them: after a compaction, the compaction first, then what it
// kept, then what followed.
func TestContextEntries(t *testing.T) {
	s := InMemory(t.TempDir())
	var ids []string
	for _, text := range []string{"one", "two", "three"} {
		id, err := s.AppendMessage(&llm.UserMessage{Content: llm.Contents{llm.TextContent{Text: text}}})
		require.NoError(t, err)
		ids = append(ids, id)
	}
	all := ContextEntries(s.Path())
	require.Len(t, all, 3, "no compaction: the whole branch")

	c, err := s.AppendCompaction("summary", ids[1], 100, nil, false, nil)
	require.NoError(t, err)
	after, err := s.AppendLabel(ids[2], "kept")
	require.NoError(t, err)
	var got []string
	for _, e := range ContextEntries(s.Path()) {
		got = append(got, e.Base().ID)
	}
	assert.Equal(t, []string{c, ids[1], ids[2], after}, got)
}
