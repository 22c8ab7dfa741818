package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSelect(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       SelectOptions
		active  []string
		builtin []string
		allowed map[string]bool
	}{
		{"defaults", SelectOptions{}, DefaultNames, DefaultNames, map[string]bool{"grep": true, "ext": true}},
		{"allowlist", SelectOptions{Tools: []string{"read", "e*"}}, []string{"read", "e*"}, []string{"read", "edit"},
			map[string]bool{"read": true, "ext": true, "bash": false, "grep": false}},
		{"modifiers", SelectOptions{Tools: []string{"+grep", "-bash", "+grep", "-nope"}}, []string{"read", "edit", "write", "grep"},
			[]string{"read", "edit", "write", "grep"}, map[string]bool{"bash": true, "other": true}},
		{"no tools", SelectOptions{NoTools: true}, nil, nil, map[string]bool{"read": false, "ext": false}},
		{"no tools, modifiers", SelectOptions{NoTools: true, Tools: []string{"+ls"}}, []string{"ls"}, []string{"ls"},
			map[string]bool{"ls": true, "read": false}},
		{"no builtins", SelectOptions{NoBuiltin: true}, nil, nil, map[string]bool{"read": true, "ext": true}},
		{"exclude", SelectOptions{Exclude: []string{"*e*"}}, []string{"bash"}, []string{"bash"},
			map[string]bool{"read": false, "deploy": false, "ls": true}},
		{"empty allowlist", SelectOptions{Tools: []string{}}, []string{}, nil, map[string]bool{"read": false}},
		{"defaults setting", SelectOptions{Defaults: []string{"+ls"}}, []string{"read", "bash", "edit", "write", "ls"},
			[]string{"read", "bash", "edit", "write", "ls"}, nil},
		{"plain defaults setting", SelectOptions{Defaults: []string{"grep", "+ls", "-grep"}}, []string{"ls"}, []string{"ls"}, nil},
		{"empty defaults setting", SelectOptions{Defaults: []string{}}, nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Select(tc.o)
			assert.Equal(t, tc.active, s.Active)
			assert.Equal(t, tc.builtin, s.ActiveBuiltins())
			for name, want := range tc.allowed {
				assert.Equal(t, want, s.Allowed(name), name)
			}
		})
	}
}

func TestCheckSelection(t *testing.T) {
	assert.NoError(t, CheckSelection([]string{"read", "g*"}))
	assert.NoError(t, CheckSelection([]string{"+read", "-bash"}))
	assert.NoError(t, CheckSelection(nil))
	assert.ErrorContains(t, CheckSelection([]string{"read", "-bash"}), "cannot be mixed")
	assert.ErrorContains(t, CheckSelection([]string{"+g*"}), "+g*")
}

func TestNameMatcher(t *testing.T) {
	m := NameMatcher([]string{"read", "mcp__*__x", "a.b*"})
	for name, want := range map[string]bool{"read": true, "reader": false, "mcp__srv__x": true, "mcp__x": false, "a.bc": true, "axbc": false} {
		assert.Equal(t, want, m(name), name)
	}
	assert.False(t, NameMatcher(nil)("read"))
}

// Issue 29: --tools keeps MCP tools unless an entry starts with mcp__;
// --no-tools drops them; --exclude-tools applies to them too.
func TestSelectMCP(t *testing.T) {
	// allowed: MCPAllowed (the tool may exist); declared: MCPDeclared
	// (declared directly when its exposure is direct).
	type want struct{ allowed, declared bool }
	for _, tc := range []struct {
		name  string
		o     SelectOptions
		tools map[string]want
	}{
		{"defaults", SelectOptions{}, map[string]want{"mcp__a__x": {true, true}}},
		{"allowlist without mcp", SelectOptions{Tools: []string{"read"}}, map[string]want{"mcp__a__x": {true, false}}},
		{"allowlist matching all", SelectOptions{Tools: []string{"*"}}, map[string]want{"mcp__a__x": {true, true}}},
		{"allowlist with mcp", SelectOptions{Tools: []string{"read", "mcp__a__*"}},
			map[string]want{"mcp__a__x": {true, true}, "mcp__b__x": {false, false}}},
		{"no tools", SelectOptions{NoTools: true}, map[string]want{"mcp__a__x": {false, false}}},
		{"no tools, modifiers", SelectOptions{NoTools: true, Tools: []string{"+mcp__a__x"}},
			map[string]want{"mcp__a__x": {true, true}, "mcp__a__y": {false, false}}},
		{"no builtins", SelectOptions{NoBuiltin: true}, map[string]want{"mcp__a__x": {true, true}}},
		{"exclude", SelectOptions{Tools: []string{"mcp__*"}, Exclude: []string{"mcp__b__*"}},
			map[string]want{"mcp__a__x": {true, true}, "mcp__b__x": {false, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Select(tc.o)
			for name, w := range tc.tools {
				assert.Equal(t, w.allowed, s.MCPAllowed(name), "allowed: %s", name)
				assert.Equal(t, w.declared, s.MCPDeclared(name), "declared: %s", name)
			}
		})
	}
}
