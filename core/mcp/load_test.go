package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
}

func names(c Config) []string {
	var out []string
	for _, e := range c.Servers {
		out = append(out, e.Name)
	}
	return out
}

func messages(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestLoadMergesTheProjectOverTheUser(t *testing.T) {
	agentDir, cwd := t.TempDir(), t.TempDir()
	global, project := GlobalFile(agentDir), ProjectFile(cwd)
	writeFile(t, global, `{
	  "mcpServers": {
	    "zeta": {"command": "z"},
	    "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}, "exposure": "direct"},
	    "internal-tools": {"command": "it", "env": {"KEY": "${IT_KEY}"}, "toolExposure": {"b*": "hidden", "a*": "direct"}},
	    "alpha": {"command": "a"}
	  },
	  "autoEnableCodemode": true
	}`)
	writeFile(t, project, "\ufeff"+`{
	  "mcpServers": {
	    "docs": {"command": "local-docs"},
	    "internal-tools": {"enabled": false, "exposure": "deferred"},
	    "new": {"url": "http://localhost:1/mcp"}
	  },
	  "autoEnableCodemode": false
	}`)

	// Untrusted: the project file is not read at all.
	c, errs := Load(agentDir, cwd, false)
	require.Empty(t, errs)
	assert.Equal(t, []string{"zeta", "docs", "internal-tools", "alpha"}, names(c))
	assert.True(t, *c.AutoEnableCodemode)

	c, errs = Load(agentDir, cwd, true)
	require.Empty(t, errs)
	// Replaced servers keep their place; new ones come last.
	assert.Equal(t, []string{"zeta", "docs", "internal-tools", "alpha", "new"}, names(c))
	assert.False(t, *c.AutoEnableCodemode)

	docs, _ := c.Lookup("docs")
	assert.Equal(t, Entry{Name: "docs", Server: Server{Command: "local-docs"}, Source: project, Scope: ScopeProject}, docs,
		"a full project entry replaces the user's whole")

	it, _ := c.Lookup("internal-tools")
	assert.Equal(t, ScopeGlobal, it.Scope)
	assert.Equal(t, global, it.Source)
	assert.Equal(t, project, it.Override)
	assert.False(t, it.Server.IsEnabled())
	assert.Equal(t, ExposureDeferred, it.Server.Exposure)
	assert.Equal(t, "it", it.Server.Command, "the rest of the user's entry stays")
	assert.Equal(t, map[string]string{"KEY": "${IT_KEY}"}, it.Server.Env, "values are not expanded when read")
	assert.Equal(t, []ToolExposureRule{{"b*", ExposureHidden}, {"a*", ExposureDirect}}, it.Server.ToolExposureRules(),
		"the user's toolExposure keeps its order")
	assert.Equal(t, ExposureHidden, it.Server.ToolExposureOf("ba"))
}

func TestLoadReportsInvalidEntriesAndKeepsTheRest(t *testing.T) {
	agentDir, cwd := t.TempDir(), t.TempDir()
	global, project := GlobalFile(agentDir), ProjectFile(cwd)
	writeFile(t, global, `{"mcpServers": {
	  "good": {"command": "g"},
	  "legacy": {"type": "sse", "url": "https://x/sse"},
	  "my-srv": {"command": "m"},
	  "my_srv": {"command": "m2"},
	  "nothing": {},
	  "remote": {"url": "https://x", "auth": {"provider": "anthropic"}}
	}}`)
	writeFile(t, project, `{"mcpServers": {
	  "good": {"enabled": false, "command2": "x"},
	  "ghost": {"enabled": false},
	  "My-srv": {"command": "ok"},
	  "my-srv": {"exposure": "sometimes"},
	  "theirs": {"url": "https://x", "auth": {"provider": "openai"}},
	  "remote": {"exposure": "hidden"}
	}}`)
	c, errs := Load(agentDir, cwd, true)
	assert.Equal(t, []string{"good", "my-srv", "remote", "My-srv"}, names(c))
	assert.Equal(t, []string{
		global + `: server "legacy": legacy SSE transport is not supported; use the streamable HTTP URL (servers that document an SSE endpoint often serve streamable HTTP at /mcp instead of /sse)`,
		global + `: server "my_srv" conflicts with "my-srv"`,
		global + `: server "nothing" needs either "command" (stdio) or "url" (streamable HTTP)`,
		project + `: server "good": an override can only set enabled, exposure, toolExposure`,
		project + `: server "ghost" needs "command" or "url", or a global server to override`,
		project + `: server "my-srv": exposure must be one of "codemode", "deferred", "direct", "hidden"`,
		project + `: server "theirs": auth is only allowed in the global mcp.json`,
	}, messages(errs))
	var ce *ConfigError
	require.ErrorAs(t, errs[1], &ce)
	assert.Equal(t, ConfigError{File: global, Server: "my_srv", Msg: `server "my_srv" conflicts with "my-srv"`}, *ce)
	good, _ := c.Lookup("good")
	assert.True(t, good.Server.IsEnabled(), "a rejected override changes nothing")
	remote, _ := c.Lookup("remote")
	assert.Equal(t, ExposureHidden, remote.Server.Exposure, "an override keeps the user's auth")
	assert.Equal(t, "anthropic", remote.Server.Auth.Provider)
}

func TestLoadReportsBrokenFiles(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"mcpServers": `, "invalid JSON"},
		{`[1]`, `expected an object with an "mcpServers" object`},
		{`{"mcpServers": []}`, `expected an object with an "mcpServers" object`},
		{`{"mcpServers": null}`, `expected an object with an "mcpServers" object`},
		{`{"mcpServers": {}, "autoEnableCodemode": "yes"}`, "autoEnableCodemode must be a boolean"},
		{`{} {}`, "invalid JSON"},
	} {
		agentDir := t.TempDir()
		writeFile(t, GlobalFile(agentDir), tc.body)
		c, errs := Load(agentDir, t.TempDir(), true)
		assert.Empty(t, c.Servers)
		require.Len(t, errs, 1, tc.body)
		assert.True(t, strings.HasPrefix(errs[0].Error(), GlobalFile(agentDir)+": "+tc.want), errs[0].Error())
	}
	// Missing files are no error; an empty one holds no servers.
	c, errs := Load(t.TempDir(), t.TempDir(), true)
	assert.Empty(t, c.Servers)
	assert.Empty(t, errs)
	agentDir := t.TempDir()
	writeFile(t, GlobalFile(agentDir), `{}`)
	c, errs = Load(agentDir, t.TempDir(), true)
	assert.Empty(t, c.Servers)
	assert.Empty(t, errs)
	// A directory where the file should be is reported, not read.
	agentDir = t.TempDir()
	require.NoError(t, os.Mkdir(GlobalFile(agentDir), 0o755))
	_, errs = Load(agentDir, t.TempDir(), true)
	assert.Len(t, errs, 1)
}
