package acp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsText(t *testing.T) {
	for _, c := range []struct {
		head string
		cut  bool
		want bool
	}{
		{"plain text\n", false, true},
		{"héllo wörld", false, true},
		{"ends inside a character: \xc3", true, true},
		{"ends inside a character: \xc3", false, false},
		{"\x89PNG\r\n\x1a\n\x00\x00", false, false},
		{"\xff\xd8\xff\xe0 JFIF", true, false},
		{"text with a NUL\x00 byte", false, false},
	} {
		assert.Equal(t, c.want, isText([]byte(c.head), c.cut), "%q cut %v", c.head, c.cut)
	}
}

// An edit's diffs follow every shape of arguments the edit tool accepts.
func TestCallDiffs(t *testing.T) {
	for _, c := range []struct {
		args string
		want [][2]string // oldText, newText
	}{
		{`{"path":"a.go","edits":[{"oldText":"x","newText":"y"},{"oldText":"p","newText":"q"}]}`, [][2]string{{"x", "y"}, {"p", "q"}}},
		{`{"path":"a.go","edits":"[{\"oldText\":\"x\",\"newText\":\"y\"}]"}`, [][2]string{{"x", "y"}}},
		{`{"path":"a.go","oldText":"x","newText":"y"}`, [][2]string{{"x", "y"}}},
		{`{"path":"a.go","edits":[]}`, nil},
	} {
		got := callDiffs("/src", "edit", json.RawMessage(c.args))
		require.Len(t, got, len(c.want), c.args)
		for i, d := range got {
			require.NotNil(t, d.Diff)
			assert.Equal(t, "/src/a.go", d.Diff.Path)
			require.NotNil(t, d.Diff.OldText)
			assert.Equal(t, c.want[i], [2]string{*d.Diff.OldText, d.Diff.NewText}, c.args)
		}
	}
	w := callDiffs("/src", "write", json.RawMessage(`{"path":"/abs/b.txt","content":"new"}`))
	require.Len(t, w, 1)
	assert.Equal(t, "/abs/b.txt", w[0].Diff.Path)
	assert.Nil(t, w[0].Diff.OldText)
	assert.Equal(t, "new", w[0].Diff.NewText)
	assert.Empty(t, callDiffs("/src", "bash", json.RawMessage(`{"command":"ls"}`)))
}
