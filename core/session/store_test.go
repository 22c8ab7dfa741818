package session

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

func user(text string) *llm.UserMessage { return llm.UserText(text) }

func assistant(text string) *llm.AssistantMessage {
	return &llm.AssistantMessage{Content: llm.Contents{llm.TextContent{Text: text}}, API: llm.APIFaux,
		Provider: "p", Model: "m", StopReason: llm.StopStop, Timestamp: llm.Now()}
}

func mustAppend(t testing.TB, s *Store, m llm.Message) string {
	t.Helper()
	id, err := s.AppendMessage(m)
	require.NoError(t, err)
	return id
}

func texts(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		switch m := m.(type) {
		case *llm.UserMessage:
			out = append(out, m.Content.Text())
		case *llm.AssistantMessage:
			out = append(out, m.Content.Text())
		case *llm.CustomMessage:
			out = append(out, "custom:"+m.Content.Text())
		case *llm.BranchSummaryMessage:
			out = append(out, "branch:"+m.Summary)
		case *llm.CompactionSummaryMessage:
			out = append(out, "compaction:"+m.Summary)
		default:
			out = append(out, string(m.MessageRole()))
		}
	}
	return out
}

func TestLazyFileCreation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "--x--")
	s, err := Create(dir, "/x", Options{})
	require.NoError(t, err)
	path := s.File()
	require.NotEmpty(t, path)

	_, err = s.AppendModelChange("p", "m")
	require.NoError(t, err)
	mustAppend(t, s, user("hi"))
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, fs.ErrNotExist, "no file before the first assistant message")

	mustAppend(t, s, assistant("hello"))
	assert.Len(t, fileLines(t, path), 4, "header and the three entries so far")

	mustAppend(t, s, user("again"))
	lines := fileLines(t, path)
	require.Len(t, lines, 5)
	assert.Equal(t, "again", decodeAny(t, lines[4]).(map[string]any)["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"])

	re, rep, err := Open(path)
	require.NoError(t, err)
	assert.True(t, rep.OK())
	assert.Equal(t, []string{"hi", "hello", "again"}, texts(re.Context().Messages))
	assert.Equal(t, s.Entries()[0].Base().ParentID, "")
	assert.Equal(t, s.Entries()[0].Base().ID, s.Entries()[1].Base().ParentID)
}

func TestInMemoryNeverWrites(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	s := InMemory("/x")
	mustAppend(t, s, user("hi"))
	mustAppend(t, s, assistant("hello"))
	assert.Empty(t, s.File())
	assert.False(t, s.Persisted())
	des, _ := os.ReadDir(dir)
	assert.Empty(t, des)
	assert.Equal(t, []string{"hi", "hello"}, texts(s.Context().Messages))
}

func TestAppendRejectsSummaries(t *testing.T) {
	s := InMemory("/x")
	_, err := s.AppendMessage(&llm.CompactionSummaryMessage{Summary: "s"})
	assert.ErrorIs(t, err, ErrSummaryMessage)
	_, err = s.AppendMessage(&llm.BranchSummaryMessage{Summary: "s"})
	assert.ErrorIs(t, err, ErrSummaryMessage)
	assert.Empty(t, s.Entries())
}

func TestBranchingAndSetLeaf(t *testing.T) {
	s, err := Create(t.TempDir(), "/x", Options{})
	require.NoError(t, err)
	u1 := mustAppend(t, s, user("u1"))
	a1 := mustAppend(t, s, assistant("a1"))
	u2 := mustAppend(t, s, user("u2"))
	a2 := mustAppend(t, s, assistant("a2"))

	require.NoError(t, s.SetLeaf(a1))
	u3 := mustAppend(t, s, user("u3"))
	a3 := mustAppend(t, s, assistant("a3"))
	assert.Equal(t, []string{"u1", "a1", "u3", "a3"}, texts(s.Context().Messages))
	assert.Equal(t, a1, s.Entries()[4].Base().ParentID)

	var kids []string
	for _, e := range s.Children(a1) {
		kids = append(kids, e.Base().ID)
	}
	assert.Equal(t, []string{u2, u3}, kids)

	require.NoError(t, s.SetLeaf(a2))
	assert.Equal(t, []string{"u1", "a1", "u2", "a2"}, texts(s.Context().Messages))
	assert.Len(t, s.PathTo(a3), 4)

	require.NoError(t, s.SetLeaf(""))
	assert.Empty(t, s.Context().Messages)
	assert.ErrorIs(t, s.SetLeaf("nope"), ErrEntryNotFound)
	assert.ErrorIs(t, s.Branch(""), ErrEntryNotFound)

	// Tree: one root, a1 has two children.
	roots := s.Tree()
	require.Len(t, roots, 1)
	assert.Equal(t, u1, roots[0].Entry.Base().ID)
	assert.Len(t, roots[0].Children[0].Children, 2)

	// A reopened file resumes at its last entry, like pi.
	re, _, err := Open(s.File())
	require.NoError(t, err)
	assert.Equal(t, a3, re.Leaf())
	assert.Equal(t, []string{"u1", "a1", "u3", "a3"}, texts(re.Context().Messages))
}

func TestBranchSummaryCustomMessagesAndSettings(t *testing.T) {
	s := InMemory("/x")
	_, err := s.AppendModelChange("anthropic", "claude")
	require.NoError(t, err)
	_, err = s.AppendThinkingLevelChange(llm.ThinkingHigh)
	require.NoError(t, err)
	u1 := mustAppend(t, s, user("u1"))
	mustAppend(t, s, assistant("a1"))
	mustAppend(t, s, user("abandoned"))

	id, err := s.AppendBranchSummary(u1, "tried something else", map[string]int{"n": 1}, false, nil)
	require.NoError(t, err)
	assert.Equal(t, id, s.Leaf())
	e, _ := s.Entry(id)
	bs := e.(*BranchSummaryEntry)
	assert.Equal(t, u1, bs.ParentID)
	assert.Equal(t, u1, bs.FromID)
	assert.JSONEq(t, `{"n":1}`, string(bs.Details))

	_, err = s.AppendCustom("ext-state", map[string]string{"k": "v"})
	require.NoError(t, err)
	cm, err := s.AppendCustomMessage("note", llm.Contents{llm.TextContent{Text: "injected"}}, true, nil)
	require.NoError(t, err)
	_, err = s.AppendBranchSummary(cm, "", nil, false, nil) // empty summaries stay out of the context
	require.NoError(t, err)

	ctx := s.Context()
	assert.Equal(t, []string{"u1", "branch:tried something else", "custom:injected"}, texts(ctx.Messages))
	// The assistant message is off the path, so the model_change rules.
	assert.Equal(t, ModelRef{"anthropic", "claude"}, *ctx.Model)
	assert.Equal(t, llm.ThinkingHigh, ctx.ThinkingLevel)

	root, err := s.AppendBranchSummary("", "from the top", nil, true, nil)
	require.NoError(t, err)
	e, _ = s.Entry(root)
	assert.Equal(t, "root", e.(*BranchSummaryEntry).FromID)
	assert.Equal(t, "", e.Base().ParentID)
	ctx = s.Context()
	assert.Equal(t, []string{"branch:from the top"}, texts(ctx.Messages))
	assert.Nil(t, ctx.Model)
	assert.Equal(t, llm.ThinkingOff, ctx.ThinkingLevel)

	_, err = s.AppendBranchSummary("missing", "x", nil, false, nil)
	assert.ErrorIs(t, err, ErrEntryNotFound)
}

func TestLabelsAndNames(t *testing.T) {
	s := InMemory("/x")
	u1 := mustAppend(t, s, user("u1"))
	_, err := s.AppendLabel(u1, "start")
	require.NoError(t, err)
	assert.Equal(t, "start", s.Label(u1))
	_, err = s.AppendLabel(u1, "")
	require.NoError(t, err)
	assert.Equal(t, "", s.Label(u1))
	_, err = s.AppendLabel("zzzzzzzz", "x")
	assert.ErrorIs(t, err, ErrEntryNotFound)

	assert.Equal(t, "", s.Name())
	_, _ = s.AppendSessionInfo("first")
	_, _ = s.AppendSessionInfo("second")
	assert.Equal(t, "second", s.Name())
	_, _ = s.AppendSessionInfo("  ")
	assert.Equal(t, "", s.Name(), "an empty name clears it")
}

func TestTruncatedLastLineLoads(t *testing.T) {
	path := copyFixture(t, refFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	// Cut the last line in the middle, as a crash mid-write would.
	lastStart := strings.LastIndex(strings.TrimRight(string(data), "\n"), "\n") + 1
	cut := data[:lastStart+60]
	require.NoError(t, os.WriteFile(path, cut, 0o644))

	s, rep, err := Open(path)
	require.NoError(t, err)
	require.Len(t, rep.Damaged, 1)
	assert.Equal(t, 23, rep.Damaged[0].Line)
	assert.False(t, rep.OK())
	assert.Len(t, s.Entries(), 21)
	assert.Equal(t, "bd8a1d52", s.Leaf())
	assert.Equal(t, "Reply with just the word 'after-compaction'", texts(s.Context().Messages)[14])

	// The next append starts on a line of its own, not glued to the stub.
	id := mustAppend(t, s, assistant("recovered"))
	re, rep, err := Open(path)
	require.NoError(t, err)
	require.Len(t, rep.Damaged, 1, "the stub stays damaged, nothing else")
	assert.Equal(t, id, re.Leaf())
	e, _ := re.Entry(id)
	assert.Equal(t, "bd8a1d52", e.Base().ParentID)

	// A second append does not add another blank line.
	mustAppend(t, re, user("more"))
	assert.NotContains(t, readString(t, path), "\n\n")
}

func readString(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestDamagedMiddleLinesAndUnknownTypes(t *testing.T) {
	lines := fileLines(t, refFile)
	var b strings.Builder
	for i, l := range lines {
		b.Write(l)
		b.WriteByte('\n')
		switch i {
		case 4:
			b.WriteString(`{"type":"message","id":"broken` + "\n") // not JSON
			b.WriteString("\n")                                    // blank: ignored
			b.WriteString(`["not","an","object"]` + "\n")
		case 8:
			// A future entry type in the chain: kept, walked through, skipped in context.
			b.WriteString(`{"type":"future_thing","id":"f0f0f0f0","parentId":"11a20c5d","timestamp":"2026-11-21T14:12:14.000Z","payload":{"x":[1,2]}}` + "\n")
		case 9:
			b.WriteString(`{"type":"model_change","id":"badmodel","parentId":"f0f0f0f0","timestamp":"2026-11-21T14:12:14.001Z","provider":42}` + "\n")
			b.WriteString(`{"type":"label","parentId":"badmodel","timestamp":"2026-11-21T14:12:14.002Z","targetId":"x"}` + "\n")
		}
	}
	// Relink ccb925ab under the two inserted entries.
	text := strings.Replace(b.String(), `"id":"ccb925ab","parentId":"11a20c5d"`, `"id":"ccb925ab","parentId":"badmodel"`, 1)
	path := filepath.Join(t.TempDir(), "damaged.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))

	s, rep, err := Open(path)
	require.NoError(t, err)
	var damagedLines []int
	for _, d := range rep.Damaged {
		damagedLines = append(damagedLines, d.Line)
	}
	assert.Equal(t, []int{6, 8, 16}, damagedLines)
	require.Len(t, rep.Kept, 1)
	assert.Equal(t, 15, rep.Kept[0].Line)

	e, ok := s.Entry("f0f0f0f0")
	require.True(t, ok)
	u := e.(*UnknownEntry)
	assert.Equal(t, EntryType("future_thing"), u.Type())
	assert.Equal(t, "11a20c5d", u.ParentID)
	e, _ = s.Entry("badmodel")
	assert.IsType(t, &UnknownEntry{}, e)

	// The path runs through both, the context ignores them.
	assert.Len(t, s.Path(), 24)
	assert.Len(t, s.Context().Messages, 16)
	assert.Equal(t, "fake-haiku", s.Context().Model.ModelID)

	// A clone writes the unknown lines back byte for byte.
	c, err := s.Clone()
	require.NoError(t, err)
	assert.Contains(t, readString(t, c.File()), `{"type":"future_thing","id":"f0f0f0f0","parentId":"11a20c5d","timestamp":"2026-11-21T14:12:14.000Z","payload":{"x":[1,2]}}`+"\n")
	raw, _ := json.Marshal(u)
	assert.JSONEq(t, `{"type":"future_thing","id":"f0f0f0f0","parentId":"11a20c5d","timestamp":"2026-11-21T14:12:14.000Z","payload":{"x":[1,2]}}`, string(raw))
}

func TestOpenRejectsAndFresh(t *testing.T) {
	dir := t.TempDir()
	notSession := filepath.Join(dir, "other.jsonl")
	require.NoError(t, os.WriteFile(notSession, []byte(`{"type":"message","id":"x"}`+"\n"), 0o644))
	_, _, err := Open(notSession)
	assert.ErrorIs(t, err, ErrNotSession)
	assert.Equal(t, `{"type":"message","id":"x"}`+"\n", readString(t, notSession), "never clobbered")

	_, _, err = Open(filepath.Join(dir, "missing.jsonl"))
	assert.ErrorIs(t, err, fs.ErrNotExist)

	// Issue 25: anything that is not a session, even a cut header, is
	// refused and left as it is (pi 1.5 refuses it too); an empty file
	// starts a fresh session.
	for _, text := range []string{"# Notes\n\nremember the milk\n", "{\"type\":\"sess", "\n \n"} {
		other := filepath.Join(dir, "NOTES.md")
		require.NoError(t, os.WriteFile(other, []byte(text), 0o644))
		_, _, err = Open(other)
		assert.ErrorIs(t, err, ErrNotSession, "%q", text)
		assert.Equal(t, text, readString(t, other), "never clobbered")
	}
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	s, rep, err := Open(empty)
	require.NoError(t, err)
	assert.True(t, rep.Fresh)
	assert.Equal(t, empty, s.File())
	mustAppend(t, s, user("u"))
	mustAppend(t, s, assistant("a"))
	re, rep, err := Open(empty)
	require.NoError(t, err)
	assert.True(t, rep.OK())
	assert.Equal(t, s.ID(), re.ID())
	assert.Len(t, re.Entries(), 2)
}

func TestExplicitPathAndOptions(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "mine.jsonl")
	s, err := Create(dir, "/x", Options{ID: "fixed-id", ParentSession: "/old.jsonl", Path: p})
	require.NoError(t, err)
	mustAppend(t, s, assistant("a"))
	lines := fileLines(t, p)
	h := decodeAny(t, lines[0]).(map[string]any)
	assert.Equal(t, "fixed-id", h["id"])
	assert.Equal(t, "/old.jsonl", h["parentSession"])
	assert.Equal(t, float64(3), h["version"])
}

func TestMigrateV1(t *testing.T) {
	path := copyFixture(t, "../../testdata/sessions/v1.jsonl")
	s, rep, err := Open(path)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.MigratedFrom)
	assert.True(t, rep.Rewritten)
	assert.Empty(t, rep.Damaged)

	entries := s.Entries()
	require.Len(t, entries, 7)
	prev := ""
	seen := map[string]bool{}
	for _, e := range entries {
		m := e.Base()
		assert.Regexp(t, `^[0-9a-f]{8}$`, m.ID)
		assert.False(t, seen[m.ID])
		seen[m.ID] = true
		assert.Equal(t, prev, m.ParentID)
		prev = m.ID
	}
	comp := entries[5].(*CompactionEntry)
	assert.Equal(t, entries[3].Base().ID, comp.FirstKeptEntryID, "index 4 counts the header")
	assert.Equal(t, []string{"compaction:The user asked a first question.", "second question", "second answer", "third question"},
		texts(s.Context().Messages))
	assert.Equal(t, "claude-old", s.Context().Model.ModelID)
	assert.Equal(t, 3, s.Header().Version)

	// The file is now version 3 and loads as is, with the same ids.
	lines := fileLines(t, path)
	assert.Equal(t, float64(3), decodeAny(t, lines[0]).(map[string]any)["version"])
	c := decodeAny(t, lines[6]).(map[string]any)
	assert.NotContains(t, c, "firstKeptEntryIndex")
	assert.Equal(t, comp.FirstKeptEntryID, c["firstKeptEntryId"])
	assert.Contains(t, string(lines[2]), `"content":"first question"`, "untouched fields stay as written")
	re, rep, err := Open(path)
	require.NoError(t, err)
	assert.Zero(t, rep.MigratedFrom)
	assert.Equal(t, s.Leaf(), re.Leaf())
	assert.Equal(t, comp.FirstKeptEntryID, re.Entries()[5].(*CompactionEntry).FirstKeptEntryID)
}

func TestMigrateV2(t *testing.T) {
	path := copyFixture(t, "../../testdata/sessions/v2.jsonl")
	s, rep, err := Open(path)
	require.NoError(t, err)
	assert.Equal(t, 2, rep.MigratedFrom)
	assert.True(t, rep.OK())
	ctx := s.Context()
	require.Len(t, ctx.Messages, 3)
	cm, ok := ctx.Messages[1].(*llm.CustomMessage)
	require.True(t, ok, "hookMessage becomes custom")
	assert.Equal(t, "reminder", cm.CustomType)
	assert.True(t, cm.Display)
	assert.Equal(t, llm.ThinkingMedium, ctx.ThinkingLevel)
	assert.Equal(t, ModelRef{"openai", "gpt-x"}, *ctx.Model)

	conv := ConvertToLLM(ctx.Messages)
	assert.Equal(t, "remember the tests", conv[1].(*llm.UserMessage).Content.Text())

	lines := fileLines(t, path)
	assert.Contains(t, string(lines[0]), `"version":3`)
	assert.Contains(t, string(lines[3]), `"role":"custom"`)
	assert.Equal(t, []string{"aaaa0001", "aaaa0002", "aaaa0003", "aaaa0004"},
		[]string{s.Entries()[0].Base().ID, s.Entries()[1].Base().ID, s.Entries()[2].Base().ID, s.Entries()[3].Base().ID})
}

func TestForkCloneAndForkFrom(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, "/x", Options{})
	require.NoError(t, err)
	u1 := mustAppend(t, s, user("u1"))
	a1 := mustAppend(t, s, assistant("a1"))
	_, err = s.AppendLabel(u1, "first")
	require.NoError(t, err)
	_, err = s.AppendLabel(a1, "answer")
	require.NoError(t, err)
	u2 := mustAppend(t, s, user("u2"))
	mustAppend(t, s, assistant("a2"))

	f, text, err := s.Fork(u2)
	require.NoError(t, err)
	assert.Equal(t, "u2", text)
	assert.Equal(t, s.File(), f.Header().ParentSession)
	assert.NotEqual(t, s.ID(), f.ID())
	assert.Equal(t, dir, filepath.Dir(f.File()))
	assert.Equal(t, []string{"u1", "a1"}, texts(f.Context().Messages))
	// Labels are dropped from the copied path and re-applied at its end.
	ents := f.Entries()
	require.Len(t, ents, 4)
	l1, l2 := ents[2].(*LabelEntry), ents[3].(*LabelEntry)
	assert.Equal(t, []string{u1, "first", a1}, []string{l1.TargetID, l1.Label, l1.ParentID})
	assert.Equal(t, []string{a1, "answer", l1.ID}, []string{l2.TargetID, l2.Label, l2.ParentID})
	assert.Equal(t, "first", f.Label(u1))
	// It has an assistant message, so it is on disk at once.
	re, rep, err := Open(f.File())
	require.NoError(t, err)
	assert.True(t, rep.OK())
	assert.Len(t, re.Entries(), 4)

	empty, text, err := s.Fork(u1)
	require.NoError(t, err)
	assert.Equal(t, "u1", text)
	assert.Empty(t, empty.Entries())
	assert.Equal(t, s.File(), empty.Header().ParentSession)
	_, err = os.Stat(empty.File())
	assert.ErrorIs(t, err, fs.ErrNotExist)

	_, _, err = s.Fork(a1)
	assert.ErrorIs(t, err, ErrNotForkable)
	_, _, err = s.Fork("nope")
	assert.ErrorIs(t, err, ErrEntryNotFound)

	c, err := s.Clone()
	require.NoError(t, err)
	assert.Equal(t, []string{"u1", "a1", "u2", "a2"}, texts(c.Context().Messages))
	assert.Equal(t, s.File(), c.Header().ParentSession)
	// u2 followed a label entry; in the copy it follows a1.
	cu2, ok := c.Entry(u2)
	require.True(t, ok)
	assert.Equal(t, a1, cu2.Base().ParentID)
	assert.Equal(t, "answer", c.Label(a1))
	reC, _, err := Open(c.File())
	require.NoError(t, err)
	assert.Equal(t, []string{"u1", "a1", "u2", "a2"}, texts(reC.Context().Messages))

	// Forking before a message whose branch has no assistant reply stays lazy.
	_ = s.SetLeaf("")
	b1 := mustAppend(t, s, user("b1"))
	b2 := mustAppend(t, s, user("b2"))
	_ = b1
	lazy, _, err := s.Fork(b2)
	require.NoError(t, err)
	_, err = os.Stat(lazy.File())
	assert.ErrorIs(t, err, fs.ErrNotExist)
	mustAppend(t, lazy, assistant("now"))
	assert.Len(t, fileLines(t, lazy.File()), 3)

	ff, text, err := ForkFile(s.File(), u2)
	require.NoError(t, err)
	assert.Equal(t, "u2", text)
	assert.Equal(t, []string{"u1", "a1"}, texts(ff.Context().Messages))

	other := filepath.Join(t.TempDir(), "other")
	fr, err := ForkFrom(copyFixture(t, refFile), "/elsewhere", other, Options{})
	require.NoError(t, err)
	assert.Equal(t, "/elsewhere", fr.Cwd())
	assert.Len(t, fr.Entries(), 22)
	lines := fileLines(t, fr.File())
	assert.Len(t, lines, 23)
	assert.Equal(t, fileLines(t, refFile)[5], lines[5], "entries copied verbatim")
	assert.Equal(t, "reference session", fr.Name())

	mem := InMemory("/m")
	_, err = mem.Clone()
	assert.ErrorIs(t, err, ErrNotForkable)
	mustAppend(t, mem, user("m1"))
	mc, err := mem.Clone()
	require.NoError(t, err)
	assert.Empty(t, mc.File())
	assert.Empty(t, mc.Header().ParentSession)
}

func TestForkPoints(t *testing.T) {
	s := InMemory("/x")
	u1 := mustAppend(t, s, user("one"))
	mustAppend(t, s, assistant("a"))
	mustAppend(t, s, &llm.UserMessage{Content: llm.Contents{llm.ImageContent{Data: "x", MimeType: "image/png"}}})
	u3 := mustAppend(t, s, &llm.UserMessage{Content: llm.Contents{llm.TextContent{Text: "a"}, llm.TextContent{Text: "b"}}})
	assert.Equal(t, []ForkPoint{{u1, "one"}, {u3, "ab"}}, s.ForkPoints())
}

func TestEntryIDsUnique(t *testing.T) {
	calls := 0
	id := newEntryID(func(string) bool { calls++; return calls < 5 })
	assert.Equal(t, 5, calls)
	assert.Regexp(t, `^[0-9a-f]{8}$`, id)
	full := newEntryID(func(string) bool { return true })
	assert.Len(t, full, 36, "falls back to a whole uuid")

	s := InMemory("/x")
	seen := map[string]bool{}
	for range 2000 {
		id, err := s.AppendCustom("t", nil)
		require.NoError(t, err)
		require.False(t, seen[id])
		seen[id] = true
	}
}

func TestDefaultDir(t *testing.T) {
	assert.Equal(t, filepath.Join("/a", "sessions", "--home-user-project--"), DefaultDir("/a", "/home/user/project"))
	assert.Equal(t, filepath.Join("/a", "sessions", "--C--Users-me--"), DefaultDir("/a", `C:\Users\me`))
	assert.Equal(t, filepath.Join("/a", "sessions", "----"), DefaultDir("/a", "/"))
}

func TestWriteFailureRecovers(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, "/x", Options{})
	require.NoError(t, err)
	mustAppend(t, s, user("u"))
	mustAppend(t, s, assistant("a"))
	// Make appends fail: replace the file with a directory.
	path := s.File()
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o755))
	_, err = s.AppendMessage(user("lost?"))
	require.Error(t, err)
	require.NoError(t, os.Remove(path))
	// The next append writes the whole file again, nothing is lost.
	mustAppend(t, s, assistant("b"))
	re, rep, err := Open(path)
	require.NoError(t, err)
	assert.True(t, rep.OK())
	assert.Equal(t, []string{"u", "a", "lost?", "b"}, texts(re.Context().Messages))
}

func TestConcurrentUse(t *testing.T) {
	s, err := Create(t.TempDir(), "/x", Options{})
	require.NoError(t, err)
	mustAppend(t, s, assistant("a"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			_ = s.Context()
			_ = s.Name()
		}
	}()
	for range 200 {
		mustAppend(t, s, user("u"))
	}
	<-done
	re, _, err := Open(s.File())
	require.NoError(t, err)
	assert.Len(t, re.Entries(), 201)
}

func TestFormatTime(t *testing.T) {
	tm := time.Date(2026, 11, 21, 15, 12, 12, 199_999_999, time.FixedZone("x", 3600))
	assert.Equal(t, "2026-11-21T14:12:12.199Z", FormatTime(tm))
	assert.Equal(t, int64(1795270332199), Meta{Timestamp: "2026-11-21T14:12:12.199Z"}.Millis())
	assert.True(t, errors.Is(LineError{1, ErrNotSession}, ErrNotSession))
}
