package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func readString(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

func TestEditUnique(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "main.go")
	writeFile(t, f, "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n")
	res := run(t, dir, "edit", map[string]any{"path": "main.go", "edits": []map[string]string{
		{"oldText": `println("hi")`, "newText": `println("hello")`},
	}})
	require.False(t, res.IsError, text(res))
	require.Equal(t, "Successfully replaced 1 block(s) in main.go.", text(res))
	require.Equal(t, "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n", readString(t, f))
	d := res.Details.(EditDetails)
	require.Equal(t, 4, d.FirstChangedLine)
	require.Equal(t, " 1 package main\n 2 \n 3 func main() {\n-4 \tprintln(\"hi\")\n+4 \tprintln(\"hello\")\n 5 }", d.Diff)
}

func TestEditNotUniqueAndMissing(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "x.txt")
	writeFile(t, f, "a\nb\na\n")
	res := run(t, dir, "edit", map[string]any{"path": "x.txt", "edits": []map[string]string{{"oldText": "a", "newText": "c"}}})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "Found 2 occurrences")
	require.Equal(t, "a\nb\na\n", readString(t, f))

	res = run(t, dir, "edit", map[string]any{"path": "x.txt", "edits": []map[string]string{
		{"oldText": "b", "newText": "B"},
		{"oldText": "zzz", "newText": "y"},
	}})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "edits[1]")
	require.Equal(t, "a\nb\na\n", readString(t, f), "nothing is written when one edit fails")

	res = run(t, dir, "edit", map[string]any{"path": "nope.txt", "edits": []map[string]string{{"oldText": "a", "newText": "b"}}})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "not found")

	res = run(t, dir, "edit", map[string]any{"path": "x.txt", "edits": []map[string]string{{"oldText": "b", "newText": "b"}}})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "No changes made")

	res = run(t, dir, "edit", map[string]any{"path": "x.txt", "edits": []map[string]string{}})
	require.True(t, res.IsError)
}

func TestEditMultiAgainstOriginal(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "m.txt")
	writeFile(t, f, "alpha\nbeta\ngamma\ndelta\n")
	// The second edit's oldText would only exist after the first applied;
	// edits match the original, so it must fail.
	res := run(t, dir, "edit", map[string]any{"path": "m.txt", "edits": []map[string]string{
		{"oldText": "alpha", "newText": "ALPHA"},
		{"oldText": "ALPHA", "newText": "x"},
	}})
	require.True(t, res.IsError)

	res = run(t, dir, "edit", map[string]any{"path": "m.txt", "edits": []map[string]string{
		{"oldText": "delta", "newText": "DELTA"},
		{"oldText": "alpha", "newText": "ALPHA"},
	}})
	require.False(t, res.IsError, text(res))
	require.Equal(t, "Successfully replaced 2 block(s) in m.txt.", text(res))
	require.Equal(t, "ALPHA\nbeta\ngamma\nDELTA\n", readString(t, f))
	require.Equal(t, 1, res.Details.(EditDetails).FirstChangedLine)

	res = run(t, dir, "edit", map[string]any{"path": "m.txt", "edits": []map[string]string{
		{"oldText": "beta\ngamma", "newText": "x"},
		{"oldText": "gamma\nDELTA", "newText": "y"},
	}})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "overlap")
}

func TestEditKeepsCRLFAndBOM(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "w.txt")
	writeFile(t, f, "\uFEFFone\r\ntwo\r\nthree\r\n")
	res := run(t, dir, "edit", map[string]any{"path": "w.txt", "edits": []map[string]string{
		{"oldText": "one\ntwo", "newText": "1\n2"},
	}})
	require.False(t, res.IsError, text(res))
	require.Equal(t, "\uFEFF1\r\n2\r\nthree\r\n", readString(t, f))
}

func TestEditFuzzyMatch(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "q.txt")
	writeFile(t, f, "say \u201chello\u201d   \nend\n")
	res := run(t, dir, "edit", map[string]any{"path": "q.txt", "edits": []map[string]string{
		{"oldText": `say "hello"`, "newText": `say "bye"`},
	}})
	require.False(t, res.IsError, text(res))
	require.Equal(t, "say \"bye\"\nend\n", readString(t, f))
}

func TestEditLegacyArguments(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "l.txt")
	writeFile(t, f, "old value\n")
	res := run(t, dir, "edit", map[string]any{"path": "l.txt", "oldText": "old", "newText": "new"})
	require.False(t, res.IsError, text(res))
	require.Equal(t, "new value\n", readString(t, f))

	// edits sent as a JSON string
	edits, _ := json.Marshal([]map[string]string{{"oldText": "new", "newText": "newer"}})
	res = run(t, dir, "edit", map[string]any{"path": "l.txt", "edits": string(edits)})
	require.False(t, res.IsError, text(res))
	require.Equal(t, "newer value\n", readString(t, f))

	tool := &editTool{}
	got := tool.PrepareArguments(json.RawMessage(`{"path":"p","oldText":"a","newText":"b"}`))
	require.JSONEq(t, `{"path":"p","edits":[{"oldText":"a","newText":"b"}]}`, string(got))
	same := json.RawMessage(`{"path":"p","edits":[]}`)
	require.Equal(t, string(same), string(tool.PrepareArguments(same)))
}

func TestRenderDiffContext(t *testing.T) {
	old := numbered(30)
	updated := old[:0] + "line 1\nline 2 changed" + old[len("line 1\nline 2"):]
	updated = updated[:len(updated)-len("line 30")] + "line 30 changed"
	diff, first := renderDiff(old, updated, 4)
	require.Equal(t, 2, first)
	want := "" +
		"  1 line 1\n" +
		"- 2 line 2\n" +
		"+ 2 line 2 changed\n" +
		"  3 line 3\n" +
		"  4 line 4\n" +
		"  5 line 5\n" +
		"  6 line 6\n" +
		"    ...\n" +
		" 26 line 26\n" +
		" 27 line 27\n" +
		" 28 line 28\n" +
		" 29 line 29\n" +
		"-30 line 30\n" +
		"+30 line 30 changed"
	require.Equal(t, want, diff)
}
