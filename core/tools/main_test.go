package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gopi-dev/gopi/core/agent"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// run calls the named tool with args in cwd.
func run(t *testing.T, cwd, name string, args any, opts ...Option) agent.Result {
	t.Helper()
	res, _ := runUpdates(t, context.Background(), cwd, name, args, opts...)
	return res
}

// runUpdates calls a tool and also returns the partial results it sent.
func runUpdates(t *testing.T, ctx context.Context, cwd, name string, args any, opts ...Option) (agent.Result, []agent.Result) {
	t.Helper()
	tool, err := New(name, cwd, opts...)
	require.NoError(t, err)
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	var updates []agent.Result
	res, err := tool.Run(ctx, agent.Call{ID: "call_1", Name: name, Args: raw}, func(r agent.Result) {
		updates = append(updates, r)
	})
	require.NoError(t, err)
	return res, updates
}

func text(r agent.Result) string { return r.Content.Text() }

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func TestSpecs(t *testing.T) {
	all := All(t.TempDir())
	require.Len(t, all, 7)
	for i, tool := range all {
		s := tool.Spec()
		require.Equal(t, AllNames[i], s.Name)
		require.NotEmpty(t, s.Description)
		var schema map[string]any
		require.NoError(t, json.Unmarshal(s.Parameters, &schema), s.Name)
		require.Equal(t, "object", schema["type"])
		p, ok := tool.(Prompter)
		require.True(t, ok)
		require.NotEmpty(t, p.PromptSnippet(), s.Name)
	}
	var names []string
	for _, tool := range Default(t.TempDir()) {
		names = append(names, tool.Spec().Name)
	}
	require.Equal(t, []string{"read", "bash", "edit", "write"}, names)

	_, err := ByName(t.TempDir(), []string{"read", "nope"})
	require.ErrorContains(t, err, `unknown tool "nope"`)
	ts, err := ByName(t.TempDir(), []string{"ls", "grep"})
	require.NoError(t, err)
	require.Equal(t, "ls", ts[0].Spec().Name)
	require.Equal(t, "grep", ts[1].Spec().Name)
}

func TestSpecEditSchemaMatchesPi(t *testing.T) {
	tool, err := New(NameEdit, t.TempDir())
	require.NoError(t, err)
	var schema struct {
		Required             []string                   `json:"required"`
		AdditionalProperties bool                       `json:"additionalProperties"`
		Properties           map[string]json.RawMessage `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(tool.Spec().Parameters, &schema))
	require.Equal(t, []string{"path", "edits"}, schema.Required)
	require.Contains(t, schema.Properties, "edits")
}

func TestResolvePath(t *testing.T) {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	require.Equal(t, "/proj/a.go", ResolvePath("@a.go", "/proj"))
	require.Equal(t, "/abs/b.go", ResolvePath("@/abs/b.go", "/proj"))
	require.Equal(t, filepath.Join(home, "x/y"), ResolvePath("~/x/y", "/proj"))
	require.Equal(t, home, ResolvePath("~", "/proj"))
	require.Equal(t, "/proj/~x", ResolvePath("~x", "/proj"))
	require.Equal(t, "/proj/my file.txt", ResolvePath("my\u00a0file.txt", "/proj"))
}

func TestImageSniff(t *testing.T) {
	require.Equal(t, "image/png", sniffImage([]byte("\x89PNG\r\n\x1a\nrest")))
	require.Equal(t, "image/jpeg", sniffImage([]byte{0xff, 0xd8, 0xff, 0xe0}))
	require.Equal(t, "image/gif", sniffImage([]byte("GIF89a....")))
	require.Equal(t, "image/webp", sniffImage([]byte("RIFF\x00\x00\x00\x00WEBPVP8 ")))
	require.Equal(t, "", sniffImage([]byte("hello")))
}
