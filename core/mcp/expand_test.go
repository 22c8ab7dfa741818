package mcp

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestExpanderValue(t *testing.T) {
	x := Expander{Getenv: testEnv(map[string]string{"TOKEN": "t0k", "USER_1": "me", "EMPTY": ""})}
	ctx := context.Background()
	for _, tc := range []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"Bearer ${TOKEN}", "Bearer t0k", ""},
		{"$TOKEN/$USER_1", "t0k/me", ""},
		{"${TOKEN}x${TOKEN}", "t0kxt0k", ""},
		{"cost $$5 and $!", "cost $5 and !", ""},
		{"${not a name} $ ${open", "${not a name} $ ${open", ""},
		{"$1", "$1", ""},
		{"TOKEN", "TOKEN", ""}, // no $: literal
		{"Bearer ${MISSING}", "", `failed to resolve the value from environment variable: MISSING`},
		{"${EMPTY}", "", `failed to resolve the value from environment variable: EMPTY`},
		{"$A $B $A", "", `failed to resolve the value from environment variables: A, B`},
		{"!printf ' Bearer %s \\n' secret", "Bearer secret", ""},
		{"!echo $TOKEN_FROM_SHELL", "", `failed to resolve the value from shell command: echo $TOKEN_FROM_SHELL: it printed nothing`},
		{"!exit 3", "", `failed to resolve the value from shell command: exit 3: exit status 3`},
		{"a !b", "a !b", ""}, // only a whole-value command runs
	} {
		got, err := x.Value(ctx, tc.in, "the value")
		if tc.err != "" {
			assert.EqualError(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}

	// Without Getenv, the process's environment.
	t.Setenv("GOPI_MCP_TEST_VAR", "from-env")
	got, err := Expander{}.Value(ctx, "${GOPI_MCP_TEST_VAR}", "v")
	require.NoError(t, err)
	assert.Equal(t, "from-env", got)

	// A command that does not end in time fails, and is not waited for.
	start := time.Now()
	_, err = Expander{Getenv: testEnv(nil), Timeout: 100 * time.Millisecond}.Value(ctx, "!sleep 5; echo late", "header")
	assert.ErrorContains(t, err, "context deadline exceeded")
	assert.Less(t, time.Since(start), 3*time.Second)
}

func TestExpanderStdioAndHeaders(t *testing.T) {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	x := Expander{Getenv: testEnv(map[string]string{"KEY": "k"})}
	ctx := context.Background()
	session := t.TempDir()

	l, err := x.Stdio(ctx, "fs", Server{
		Command: "~/bin/server", Args: []string{"~/data", "x~/y", "~"},
		Env: map[string]string{"API_KEY": "${KEY}", "MODE": "!echo fast"}, Cwd: "sub",
	}, session)
	require.NoError(t, err)
	assert.Equal(t, Launch{
		Command: filepath.Join(home, "bin/server"),
		Args:    []string{filepath.Join(home, "data"), "x~/y", home},
		Env:     map[string]string{"API_KEY": "k", "MODE": "fast"},
		Dir:     filepath.Join(session, "sub"),
	}, l)

	l, err = x.Stdio(ctx, "fs", Server{Command: "npx"}, session)
	require.NoError(t, err)
	assert.Equal(t, Launch{Command: "npx", Dir: session}, l, "no cwd: the session's")
	l, err = x.Stdio(ctx, "fs", Server{Command: "npx", Cwd: "~/w"}, session)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(home, "w"), l.Dir)
	l, err = x.Stdio(ctx, "fs", Server{Command: "npx", Cwd: "/abs"}, session)
	require.NoError(t, err)
	assert.Equal(t, "/abs", l.Dir)

	_, err = x.Stdio(ctx, "fs", Server{Command: "npx", Env: map[string]string{"T": "${NOPE}"}}, session)
	assert.EqualError(t, err, `failed to resolve MCP server "fs" env "T" from environment variable: NOPE`)

	h, err := x.Headers(ctx, "docs", Server{URL: "https://x", Headers: map[string]string{"Authorization": "Bearer ${KEY}", "X-Lit": "v"}})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"Authorization": "Bearer k", "X-Lit": "v"}, h)
	_, err = x.Headers(ctx, "docs", Server{URL: "https://x", Headers: map[string]string{"Authorization": "!false"}})
	assert.EqualError(t, err, `failed to resolve MCP server "docs" header "Authorization" from shell command: false: exit status 1`)
}
