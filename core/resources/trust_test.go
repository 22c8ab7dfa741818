package resources

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolveTrust(t *testing.T) {
	yes, no := true, false
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	home := filepath.Join(root, "home")
	project := filepath.Join(root, "work", "project")
	agentDir := filepath.Join(root, "agent")
	for _, d := range []string{home, project, agentDir} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	saved := func(m string) {
		t.Helper()
		require.NoError(t, os.WriteFile(filepath.Join(agentDir, "trust.json"), []byte(m), 0o644))
	}
	decide := func(o TrustOptions) TrustDecision {
		t.Helper()
		o.Cwd, o.Home, o.AgentDir = project, home, agentDir
		d, err := ResolveTrust(o)
		require.NoError(t, err)
		return d
	}

	// Nothing to guard: trusted.
	d := decide(TrustOptions{})
	assert.True(t, d.Trusted)
	assert.Empty(t, d.Protected)
	// A bare .pi needs nothing either.
	require.NoError(t, os.MkdirAll(filepath.Join(project, ".pi"), 0o755))
	assert.True(t, decide(TrustOptions{}).Trusted)

	require.NoError(t, os.MkdirAll(filepath.Join(project, ".pi", "extensions"), 0o755))
	d = decide(TrustOptions{})
	assert.False(t, d.Trusted, "ask, and nobody to ask: declined")
	assert.Equal(t, "not asked", d.Why)
	assert.Equal(t, []string{filepath.Join(project, ".pi", "extensions")}, d.Protected)
	assert.True(t, decide(TrustOptions{Default: TrustAlways}).Trusted)
	assert.False(t, decide(TrustOptions{Default: TrustNever}).Trusted)
	assert.True(t, decide(TrustOptions{Override: &yes, Default: TrustNever}).Trusted, "--approve first")
	assert.False(t, decide(TrustOptions{Override: &no, Default: TrustAlways}).Trusted, "--no-approve first")

	// Saved decisions: the closest directory with true or false wins
	// (null is no decision), and beats defaultProjectTrust.
	saved(`{"` + filepath.Join(root, "work") + `": true}`)
	d = decide(TrustOptions{Default: TrustNever})
	assert.True(t, d.Trusted)
	assert.Equal(t, "trust.json ("+filepath.Join(root, "work")+")", d.Why)
	saved(`{"` + filepath.Join(root, "work") + `": true, "` + project + `": false}`)
	assert.False(t, decide(TrustOptions{}).Trusted)
	saved(`{"` + filepath.Join(root, "work") + `": true, "` + project + `": null}`)
	assert.True(t, decide(TrustOptions{}).Trusted)

	// A broken store declines and says so.
	saved(`[true]`)
	_, err = ResolveTrust(TrustOptions{Cwd: project, Home: home, AgentDir: agentDir})
	assert.ErrorContains(t, err, "trust store")
}

func TestProtectedResourcesIncludeAncestorAgentSkills(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	home := filepath.Join(root, "home")
	project := filepath.Join(home, "code", "app")
	require.NoError(t, os.MkdirAll(project, 0o755))
	// The user's own ~/.agents/skills is not the project's.
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".agents", "skills"), 0o755))
	assert.Empty(t, ProtectedResources(project, home))
	require.NoError(t, os.MkdirAll(filepath.Join(home, "code", ".agents", "skills"), 0o755))
	assert.Equal(t, []string{filepath.Join(home, "code", ".agents", "skills")}, ProtectedResources(project, home))
}

func TestUntrustedProjectLoadsNoProjectSkillsOrTemplates(t *testing.T) {
	cwd := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(cwd, ".pi", "prompts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cwd, ".pi", "prompts", "review.md"), []byte("Review $ARGUMENTS\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(cwd, ".pi", "skills", "ship"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cwd, ".pi", "skills", "ship", "SKILL.md"), []byte("---\nname: ship\ndescription: Ship it\n---\nGo.\n"), 0o644))

	ts, _ := LoadTemplates("", cwd, nil, true)
	ss, _ := LoadSkills("", cwd, nil, true)
	require.Len(t, ts, 1)
	require.Len(t, ss, 1)
	ts, _ = LoadTemplates("", cwd, nil, false)
	ss, _ = LoadSkills("", cwd, nil, false)
	assert.Empty(t, ts)
	assert.Empty(t, ss)
	// Named on the command line, they still load.
	ts, _ = LoadTemplates("", cwd, []string{filepath.Join(cwd, ".pi", "prompts", "review.md")}, false)
	assert.Len(t, ts, 1)
}

// A project whose only .pi resource is mcp.json still needs trust: pi 1.5
// lists .pi/mcp.json among the protected resources, and a server it names
// is a command gopi would run.
func TestProjectMCPConfigNeedsTrust(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	project := filepath.Join(root, "app")
	require.NoError(t, os.MkdirAll(filepath.Join(project, ".pi"), 0o755))
	assert.Empty(t, ProtectedResources(project, root))
	mcp := filepath.Join(project, ".pi", "mcp.json")
	require.NoError(t, os.WriteFile(mcp, []byte(`{"mcpServers":{}}`), 0o644))
	assert.Equal(t, []string{mcp}, ProtectedResources(project, root))
	d, err := ResolveTrust(TrustOptions{Cwd: project, Home: root, AgentDir: t.TempDir()})
	require.NoError(t, err)
	assert.False(t, d.Trusted)
}
