package session

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEntriesSinceIsACursor(t *testing.T) {
	s := InMemory("/x")
	u1 := mustAppend(t, s, user("u1"))
	a1 := mustAppend(t, s, assistant("a1"))
	u2 := mustAppend(t, s, user("u2"))

	after, err := s.EntriesSince(u1)
	require.NoError(t, err)
	ids := func(es []Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Base().ID)
		}
		return out
	}
	assert.Equal(t, []string{a1, u2}, ids(after))

	last, err := s.EntriesSince(u2)
	require.NoError(t, err)
	assert.Empty(t, last, "nothing after the newest entry")

	// Entries on an abandoned branch still come in append order.
	require.NoError(t, s.Branch(u1))
	u3 := mustAppend(t, s, user("u3"))
	after, err = s.EntriesSince(a1)
	require.NoError(t, err)
	assert.Equal(t, []string{u2, u3}, ids(after))

	_, err = s.EntriesSince("nope")
	assert.ErrorIs(t, err, ErrEntryNotFound)
}

func TestTreeJSONHasGetTreeShape(t *testing.T) {
	s := InMemory("/x")
	u1 := mustAppend(t, s, user("u1"))
	mustAppend(t, s, assistant("a1"))
	_, err := s.AppendLabel(u1, "start")
	require.NoError(t, err)

	b, err := json.Marshal(s.Tree())
	require.NoError(t, err)
	var tree []map[string]any
	require.NoError(t, json.Unmarshal(b, &tree))
	require.Len(t, tree, 1)
	root := tree[0]
	assert.Equal(t, "start", root["label"])
	assert.NotEmpty(t, root["labelTimestamp"])
	entry := root["entry"].(map[string]any)
	assert.Equal(t, u1, entry["id"])
	assert.Equal(t, "message", entry["type"])

	kids := root["children"].([]any)
	require.Len(t, kids, 1)
	child := kids[0].(map[string]any)
	assert.NotContains(t, child, "label", "an unlabelled node has no label field")
	// The assistant's children hold the label entry; a leaf has [] rather than null.
	for _, k := range child["children"].([]any) {
		assert.Equal(t, []any{}, k.(map[string]any)["children"])
	}
}

// Issue 17: a damaged file whose parentId chain loops loaded one message
// twice; each entry now comes once, in the context and in the tree.
func TestParentIDLoop(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/loop.jsonl"
	lines := `{"type":"session","version":3,"id":"s1","timestamp":"2026-11-21T14:12:12.199Z","cwd":"/x"}
{"type":"message","id":"aaaa0001","parentId":"aaaa0003","timestamp":"2026-11-21T14:12:13.000Z","message":{"role":"user","content":"one","timestamp":1}}
{"type":"message","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-11-21T14:12:14.000Z","message":{"role":"assistant","content":[{"type":"text","text":"two"}],"api":"faux","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}
{"type":"message","id":"aaaa0003","parentId":"aaaa0002","timestamp":"2026-11-21T14:12:15.000Z","message":{"role":"user","content":"three","timestamp":3}}
`
	require.NoError(t, os.WriteFile(path, []byte(lines), 0o644))
	s, _, err := Open(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two", "three"}, texts(s.Context().Messages))

	tree := s.Tree()
	count := 0
	var walk func([]*TreeNode)
	walk = func(ns []*TreeNode) {
		for _, n := range ns {
			count++
			walk(n.Children)
		}
	}
	walk(tree)
	assert.Equal(t, 3, count, "every entry once in the tree")
}
