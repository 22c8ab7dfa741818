package acp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/mcp"
)

// A client's env and header values reach the server as written: core/mcp
// expands $VAR and a leading ! in mcp.json's values, not in these.
func TestClientServersAreLiteral(t *testing.T) {
	values := []string{"plain", "$HOME", "${HOME}", "$$", "!echo hi", "a!b", "$!", "100%"}
	var env, headers []map[string]string
	for i, v := range values {
		k := string(rune('A' + i))
		env = append(env, map[string]string{"name": k, "value": v})
		headers = append(headers, map[string]string{"name": k, "value": v})
	}
	params, err := json.Marshal(map[string]any{"mcpServers": []any{
		map[string]any{"name": "local", "command": "/bin/server", "args": []string{"-x"}, "env": env},
		map[string]any{"type": "http", "name": "remote", "url": "https://example.com/mcp", "headers": headers},
	}})
	require.NoError(t, err)
	entries, err := clientServers(params)
	require.NoError(t, err)
	require.Len(t, entries, 2)
	for _, e := range entries {
		assert.Equal(t, ScopeClient, e.Scope)
		assert.Equal(t, mcp.ExposureDirect, e.Server.Exposure, "a client's tools are declared directly")
	}
	x := mcp.Expander{Getenv: func(string) string { return "EXPANDED" }}
	l, err := x.Stdio(context.Background(), "local", entries[0].Server, "/work")
	require.NoError(t, err)
	assert.Equal(t, "/bin/server", l.Command)
	assert.Equal(t, []string{"-x"}, l.Args)
	h, err := x.Headers(context.Background(), "remote", entries[1].Server)
	require.NoError(t, err)
	for i, v := range values {
		k := string(rune('A' + i))
		assert.Equal(t, v, l.Env[k], "env %s", k)
		assert.Equal(t, v, h[k], "header %s", k)
	}
	assert.True(t, entries[1].Server.IsHTTP())
}

func TestClientNotices(t *testing.T) {
	for params, want := range map[string]bool{
		`{"protocolVersion":1}`:                                                    false,
		`{"protocolVersion":1,"clientCapabilities":{}}`:                            false,
		`{"protocolVersion":1,"clientCapabilities":{"session":null}}`:              false,
		`{"protocolVersion":1,"clientCapabilities":{"session":{"notices":null}}}`:  false,
		`{"protocolVersion":1,"clientCapabilities":{"session":{"notices":{}}}}`:    true,
		`{"protocolVersion":1,"clientCapabilities":{"session":{"compaction":{}}}}`: false,
	} {
		assert.Equal(t, want, clientNotices(json.RawMessage(params)), params)
	}
}
