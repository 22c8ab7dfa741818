package mcp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToolExposureOf(t *testing.T) {
	// The example of pi's mcp.md, with a pattern that an exact name and
	// an earlier pattern both beat.
	var s Server
	require.NoError(t, json.Unmarshal([]byte(`{
		"url": "https://api.githubcopilot.com/mcp/",
		"exposure": "deferred",
		"toolExposure": {
			"get_secret": "hidden",
			"get_*": "codemode",
			"search_code": "direct",
			"*_code": "hidden",
			"delete_*": "codemode-deferred"
		}
	}`), &s))
	for tool, want := range map[string]Exposure{
		"search_code":   ExposureDirect,   // exact beats the pattern after it
		"get_secret":    ExposureHidden,   // exact beats the pattern before it
		"get_code":      ExposureCodemode, // the first matching pattern wins
		"fetch_code":    ExposureHidden,
		"delete_repo":   ExposureCodemode, // the alias resolved
		"list_issues":   ExposureDeferred, // no match: the server's
		"get_":          ExposureCodemode, // * matches nothing too
		"xget_a":        ExposureDeferred, // patterns match whole names
		"get.*":         ExposureDeferred, // "_" is no wildcard
		"search_code\n": ExposureDeferred,
	} {
		assert.Equal(t, want, s.ToolExposureOf(tool), tool)
	}
	assert.Equal(t, []ToolExposureRule{
		{"get_secret", ExposureHidden}, {"get_*", ExposureCodemode}, {"search_code", ExposureDirect},
		{"*_code", ExposureHidden}, {"delete_*", ExposureCodemode},
	}, s.ToolExposureRules())

	// The order is the file's, so it decides: the other order, the other
	// answer.
	require.NoError(t, json.Unmarshal([]byte(`{"command":"x","toolExposure":{"*_code":"hidden","get_*":"direct"}}`), &s))
	assert.Equal(t, ExposureHidden, s.ToolExposureOf("get_code"))
	require.NoError(t, json.Unmarshal([]byte(`{"command":"x","toolExposure":{"get_*":"direct","*_code":"hidden"}}`), &s))
	assert.Equal(t, ExposureDirect, s.ToolExposureOf("get_code"))

	// Without exposure, pi's default; regexp characters are literal.
	s = Server{Command: "x", ToolExposure: map[string]Exposure{"a.b*": ExposureDirect}}
	assert.Equal(t, ExposureCodemode, s.ToolExposureOf("axb"))
	assert.Equal(t, ExposureDirect, s.ToolExposureOf("a.bc"))
}

func TestMatchToolPattern(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "", true}, {"*", "anything", true}, {"a*c", "abc", true}, {"a*c", "ac", true},
		{"a*c", "abcd", false}, {"(a)", "(a)", true}, {"a+", "aa", false}, {"*x*", "axb", true},
		{"mcp__radius__*", "mcp__radius__search", true}, {"exact", "exact", true}, {"exact", "exactly", false},
	} {
		assert.Equal(t, tc.want, MatchToolPattern(tc.pattern, tc.name), "%q %q", tc.pattern, tc.name)
	}
}

func TestMayExpose(t *testing.T) {
	plain := Server{Command: "x"} // pi's default: codemode
	assert.True(t, plain.MayExpose(ExposureCodemode))
	assert.False(t, plain.MayExpose(ExposureDirect, ExposureDeferred))

	mixed := Server{Command: "x", Exposure: ExposureHidden, ToolExposure: map[string]Exposure{"search": ExposureDirect, "get_*": ExposureCodemodeDeferred}}
	assert.True(t, mixed.MayExpose(ExposureDirect))
	assert.True(t, mixed.MayExpose(ExposureCodemode), "an alias counts as what it names")
	assert.True(t, mixed.MayExpose(ExposureHidden))
	assert.False(t, mixed.MayExpose(ExposureDeferred))
}
