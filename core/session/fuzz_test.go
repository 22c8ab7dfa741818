package session

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 17: a session file may be damaged, cut, hand-edited or written by
// another program. Whatever it holds, loading never panics; a file that
// loads gives a context, a tree and its entries, and what gopi writes back
// loads again with the same entries.
func FuzzOpen(f *testing.F) {
	for _, name := range []string{"v1.jsonl", "v2.jsonl", "pi-0.73.1.jsonl"} {
		if b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sessions", name)); err == nil {
			f.Add(b)
		}
	}
	if b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "transcripts", "pi-1.5.2", "scenario-session.jsonl")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/x"}
{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"role":"user","content":"x","timestamp":1}}
{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[],"timestamp":2}}
`))
	f.Add([]byte("not json\n{\"type\":\"session\"}\n\xff\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "s.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		st, _, err := load(path)
		if err != nil {
			if errors.Is(err, ErrNotSession) || st == nil {
				return
			}
			t.Fatalf("load failed but returned a store: %v", err)
		}
		_ = st.Context()
		_ = st.Tree()
		_ = st.ForkPoints()
		_, _ = SystemStateOf(st.Path())
		entries := st.Entries()
		out, err := st.contents()
		if err != nil {
			return // an entry that cannot be encoded again is reported on write
		}
		again := filepath.Join(dir, "again.jsonl")
		if err := os.WriteFile(again, out, 0o644); err != nil {
			t.Fatal(err)
		}
		st2, _, err := load(again)
		if err != nil {
			t.Fatalf("gopi's own rewrite does not load: %v\n%s", err, out)
		}
		if got := len(st2.Entries()); got != len(entries) {
			t.Fatalf("the rewrite has %d entries, the file %d", got, len(entries))
		}
	})
}

// A message entry's JSON is what encoding/json writes for it, whichever
// path wrote it.
func TestMessageEntryJSON(t *testing.T) {
	for _, e := range []*MessageEntry{
		NewMessageEntry(Meta{ID: "a1", Timestamp: "2026-01-01T00:00:00.000Z"}, &llm.UserMessage{Content: llm.Contents{llm.TextContent{Text: "hi <there> \u2028"}}, Timestamp: 5}),
		NewMessageEntry(Meta{ID: "a2", ParentID: "a1", Timestamp: "t"}, &llm.AssistantMessage{Content: llm.Contents{llm.TextContent{Text: "ok"}}, API: "x", StopReason: llm.StopStop}),
		NewMessageEntry(Meta{ID: "a3", ParentID: "a2", Timestamp: "t"}, &llm.ToolResultMessage{ToolCallID: "c", Content: llm.Contents{}}),
	} {
		got, err := e.MarshalJSON()
		require.NoError(t, err)
		want, err := json.Marshal(struct {
			Type EntryType `json:"type"`
			wireMeta
			Message llm.Message `json:"message"`
		}{EntryMessage, e.wire(), e.Message()})
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
	}
}
