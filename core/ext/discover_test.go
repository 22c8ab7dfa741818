package ext

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func write(t *testing.T, path, body string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

// Discovery follows pi's rules: project, then agent dir, then settings
// and -e paths; files, index files, package manifests; one level deep;
// each path once.
func TestDiscover(t *testing.T) {
	cwd, agent := t.TempDir(), t.TempDir()
	project := write(t, filepath.Join(cwd, ".pi", "extensions", "a.ts"), "")
	write(t, filepath.Join(cwd, ".pi", "extensions", "notes.md"), "")
	indexed := write(t, filepath.Join(agent, "extensions", "tools", "index.ts"), "")
	write(t, filepath.Join(agent, "extensions", "tools", "helper.ts"), "")
	manifested := write(t, filepath.Join(agent, "extensions", "pkg", "src", "main.js"), "")
	write(t, filepath.Join(agent, "extensions", "pkg", "package.json"), `{"pi":{"extensions":["./src/main.js","./missing.ts"]}}`)
	write(t, filepath.Join(agent, "extensions", "deep", "sub", "x.ts"), "")
	configured := write(t, filepath.Join(cwd, "more", "b.js"), "")
	explicit := write(t, filepath.Join(cwd, "c.ts"), "")

	got := Discover(DiscoverOptions{
		Cwd: cwd, AgentDir: agent,
		Configured: []string{"more"},
		Explicit:   []string{"c.ts", project, filepath.Join(cwd, "nope.ts")},
	})
	assert.Equal(t, []string{project, manifested, indexed, configured, explicit, filepath.Join(cwd, "nope.ts")}, got)

	// --no-extensions: only what -e names.
	got = Discover(DiscoverOptions{Cwd: cwd, AgentDir: agent, Configured: []string{"more"}, Explicit: []string{"c.ts"}, NoDiscovery: true})
	assert.Equal(t, []string{explicit}, got)
}

func TestVersionAtLeast(t *testing.T) {
	assert.True(t, versionAtLeast("22.19.0", "22.19.0"))
	assert.True(t, versionAtLeast("22.23.3", "22.19.0"))
	assert.True(t, versionAtLeast("23.0.0", "22.19.0"))
	assert.False(t, versionAtLeast("22.18.9", "22.19.0"))
	assert.False(t, versionAtLeast("20.19.5", "22.19.0"))
}

func TestWithRID(t *testing.T) {
	assert.Equal(t, `{"rid":3}`, string(withRID([]byte(`{}`), 3)))
	assert.Equal(t, `{"rid":4,"a":1}`, string(withRID([]byte(`{"a":1}`), 4)))
	assert.Equal(t, `[1]`, string(withRID([]byte(`[1]`), 5)))
}
