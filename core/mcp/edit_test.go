package mcp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddServerCreatesAPrivateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".pi", FileName)
	replaced, err := AddServer(path, "fs", Server{Command: "npx", Args: []string{"-y", "server"}, Env: map[string]string{"K": "${V}"}})
	require.NoError(t, err)
	assert.False(t, replaced)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, `{
  "mcpServers": {
    "fs": {
      "command": "npx",
      "args": [
        "-y",
        "server"
      ],
      "env": {
        "K": "${V}"
      }
    }
  }
}
`, string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestAddAndRemoveKeepTheRestOfTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	require.NoError(t, os.WriteFile(path, []byte(`{
	"zfirst": {"kept": [1, 2], "q": "a<b&c"},
	"mcpServers": {
		"b": {"command": "b", "custom": true},
		"a": {"url": "https://a"}
	},
	"autoEnableCodemode": false
}`), 0o640))

	replaced, err := AddServer(path, "b", Server{URL: "https://b/mcp?x=1&y=2", Headers: map[string]string{"Authorization": "Bearer ${B}"}})
	require.NoError(t, err)
	assert.True(t, replaced)
	_, err = AddServer(path, "c", Server{Command: "c"})
	require.NoError(t, err)
	b, _ := os.ReadFile(path)
	// Order, unrelated keys and the file's tab indentation stay.
	assert.Equal(t, "{\n\t\"zfirst\": {\n\t\t\"kept\": [\n\t\t\t1,\n\t\t\t2\n\t\t],\n\t\t\"q\": \"a<b&c\"\n\t},\n\t\"mcpServers\": {\n"+
		"\t\t\"b\": {\n\t\t\t\"url\": \"https://b/mcp?x=1&y=2\",\n\t\t\t\"headers\": {\n\t\t\t\t\"Authorization\": \"Bearer ${B}\"\n\t\t\t}\n\t\t},\n"+
		"\t\t\"a\": {\n\t\t\t\"url\": \"https://a\"\n\t\t},\n\t\t\"c\": {\n\t\t\t\"command\": \"c\"\n\t\t}\n\t},\n"+
		"\t\"autoEnableCodemode\": false\n}\n", string(b))
	fi, _ := os.Stat(path)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "an existing file keeps its mode")

	removed, err := RemoveServer(path, "a")
	require.NoError(t, err)
	assert.True(t, removed)
	removed, err = RemoveServer(path, "a")
	require.NoError(t, err)
	assert.False(t, removed)
	c, errs := Load(filepath.Dir(path), t.TempDir(), false)
	require.Empty(t, errs)
	assert.Equal(t, []string{"b", "c"}, names(c))

	removed, err = RemoveServer(filepath.Join(t.TempDir(), FileName), "a")
	require.NoError(t, err)
	assert.False(t, removed, "no file, nothing to remove")
}

func TestEditRefusesABrokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	require.NoError(t, os.WriteFile(path, []byte(`{"mcpServers": [`), 0o644))
	_, err := AddServer(path, "a", Server{Command: "a"})
	assert.ErrorContains(t, err, path+": invalid JSON")
	b, _ := os.ReadFile(path)
	assert.Equal(t, `{"mcpServers": [`, string(b), "left as it was")
	require.NoError(t, os.WriteFile(path, []byte(`{"mcpServers": []}`), 0o644))
	_, err = RemoveServer(path, "a")
	assert.EqualError(t, err, path+`: expected an object with an "mcpServers" object`)
}

// SetServerFields (/mcp's enable, disable and exposure) changes one
// entry's members and keeps the rest: its other members in their order,
// the other servers, the file's other keys; a missing server is an error
// and leaves the file alone.
func TestSetServerFieldsKeepsTheRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	orig := "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\", \"enabled\": false, \"x\": 1},\n    \"b\": {\"url\": \"https://b\"}\n  },\n  \"other\": true\n}\n"
	require.NoError(t, os.WriteFile(path, []byte(orig), 0o644))
	require.NoError(t, SetServerFields(path, "a", map[string]any{"enabled": true, "exposure": "direct"}))
	b, _ := os.ReadFile(path)
	assert.Equal(t, "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"a\",\n      \"enabled\": true,\n      \"x\": 1,\n"+
		"      \"exposure\": \"direct\"\n    },\n    \"b\": {\n      \"url\": \"https://b\"\n    }\n  },\n  \"other\": true\n}\n", string(b))

	before, _ := os.ReadFile(path)
	err := SetServerFields(path, "nope", map[string]any{"enabled": false})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `has no server "nope"`)
	after, _ := os.ReadFile(path)
	assert.Equal(t, string(before), string(after))
}
