package tools

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The user's version of an edit is written byte for byte, whatever the
// file held: line endings, a byte order mark and all.
func TestSettledEditWritesTheContentAsGiven(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "s.txt")
	writeFile(t, f, "\uFEFFone\r\ntwo\r\nthree\r\n")
	args, ok := Settle(NameEdit, json.RawMessage(`{"path":"s.txt","edits":[{"oldText":"two","newText":"2"}]}`),
		"one\r\nTWO\nthree\r\nfour")
	require.True(t, ok)
	assert.JSONEq(t, `{"path":"s.txt","finalContent":"one\r\nTWO\nthree\r\nfour"}`, string(args))

	res := run(t, dir, NameEdit, json.RawMessage(args))
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "Successfully replaced the content of s.txt.", text(res))
	assert.Equal(t, "one\r\nTWO\nthree\r\nfour", readString(t, f))
	d := res.Details.(EditDetails)
	assert.Equal(t, 2, d.FirstChangedLine)
	assert.Contains(t, d.Diff, "-2 two\n+2 TWO\n")
	assert.Contains(t, d.Diff, "+4 four")

	// The file already holds it: nothing to write, and not a failure.
	res = run(t, dir, NameEdit, json.RawMessage(args))
	require.False(t, res.IsError, text(res))
	assert.Contains(t, text(res), "No changes made to s.txt")

	// An edit works on an existing file, with or without the user's
	// version.
	args, ok = Settle(NameEdit, json.RawMessage(`{"path":"gone.txt","oldText":"a","newText":"b"}`), "x")
	require.True(t, ok)
	assert.JSONEq(t, `{"path":"gone.txt","finalContent":"x"}`, string(args))
	res = run(t, dir, NameEdit, json.RawMessage(args))
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "file not found")
	assert.NoFileExists(t, filepath.Join(dir, "gone.txt"))
}

func TestSettleWriteAndOtherTools(t *testing.T) {
	args, ok := Settle(NameWrite, json.RawMessage(`{"path":"a.txt","content":"model\n"}`), "user\n")
	require.True(t, ok)
	assert.JSONEq(t, `{"path":"a.txt","content":"user\n"}`, string(args))

	for _, name := range []string{NameBash, NameRead, NameLs} {
		in := json.RawMessage(`{"command":"true"}`)
		out, ok := Settle(name, in, "x")
		assert.False(t, ok, name)
		assert.Equal(t, string(in), string(out), name)
	}
	_, ok = Settle(NameWrite, json.RawMessage(`"not an object"`), "x")
	assert.False(t, ok)
}

// A model cannot send finalContent itself: the schema lists the edit's
// properties and allows no others, and the agent checks calls against it.
func TestEditSchemaKeepsFinalContentOut(t *testing.T) {
	tool, err := New(NameEdit, t.TempDir())
	require.NoError(t, err)
	var schema struct {
		Properties           map[string]any `json:"properties"`
		AdditionalProperties *bool          `json:"additionalProperties"`
	}
	require.NoError(t, json.Unmarshal(tool.Spec().Parameters, &schema))
	assert.NotContains(t, schema.Properties, "finalContent")
	require.NotNil(t, schema.AdditionalProperties)
	assert.False(t, *schema.AdditionalProperties)
}

// A preview's After is what the call would write, byte for byte, so that
// a user's version can be compared with it.
func TestPreviewAfterIsWhatTheCallWrites(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "w.txt"), "\uFEFFone\r\ntwo\r\n")
	edit := json.RawMessage(`{"path":"w.txt","edits":[{"oldText":"two","newText":"2"}]}`)
	p, ok := PreviewChange(context.Background(), dir, NameEdit, edit)
	require.True(t, ok)
	require.Empty(t, p.Problem)
	assert.Equal(t, "\uFEFFone\r\n2\r\n", p.After)
	res := run(t, dir, NameEdit, edit)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, p.After, readString(t, filepath.Join(dir, "w.txt")))

	p, ok = PreviewChange(context.Background(), dir, NameWrite, json.RawMessage(`{"path":"n.txt","content":"new\n"}`))
	require.True(t, ok)
	assert.Equal(t, "new\n", p.After)

	p, ok = PreviewChange(context.Background(), dir, NameEdit, json.RawMessage(`{"path":"w.txt","edits":[{"oldText":"zzz","newText":"y"}]}`))
	require.True(t, ok)
	assert.NotEmpty(t, p.Problem)
	assert.Empty(t, p.After)
}
