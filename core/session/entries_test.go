package session

import (
	"encoding/json"
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
