package mcp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The expected names come from pi 1.5.2's createMcpToolName
// (@earendil-works/pi-mcp), run on the same input.
func TestToolName(t *testing.T) {
	for _, tc := range []struct{ server, tool, plain, hashed string }{
		{"fs", "read_file", "mcp__fs__read_file", "mcp__fs__read_file_c34df62f"},
		{"my-srv", "get.item", "mcp__my_srv__get_item", "mcp__my_srv__get_item_47c8c13c"},
		{"a", "b-c", "mcp__a__b_c", "mcp__a__b_c_02654a5c"},
		{"a", "b_c", "mcp__a__b_c", "mcp__a__b_c_662f0bbb"},
		// A character outside the BMP is two UTF-16 units, so two "_".
		{"srv", "emoji😀x", "mcp__srv__emoji__x", "mcp__srv__emoji__x_3e9678f3"},
		{"srv", "é", "mcp__srv___", "mcp__srv____66eeea91"},
	} {
		assert.Equal(t, tc.plain, ToolName(tc.server, tc.tool))
		assert.Equal(t, []string{tc.hashed}, ToolNames(tc.server, []string{tc.tool}, func(string) bool { return true }))
	}
	// Over 64 characters: 55 kept, "_", 8 hex digits.
	long := ToolName("long-server-name", strings.Repeat("x", 70))
	assert.Equal(t, "mcp__long_server_name__xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_32bda4e8", long)
	assert.Len(t, long, MaxToolNameLen)
}

func TestToolNamesCollisions(t *testing.T) {
	// Every tool of the colliding group gets the suffix, the others not.
	names := ToolNames("a", []string{"b-c", "list", "b_c", "b.c", "list"}, nil)
	assert.Equal(t, "mcp__a__b_c_02654a5c", names[0])
	assert.Equal(t, "mcp__a__list", names[1])
	assert.Equal(t, "mcp__a__b_c_662f0bbb", names[2])
	assert.Regexp(t, `^mcp__a__b_c_[0-9a-f]{8}$`, names[3])
	assert.Equal(t, "mcp__a__list", names[4], "a tool listed twice is one tool")
	assert.Len(t, map[string]bool{names[0]: true, names[2]: true, names[3]: true}, 3)

	// A name another server's tool holds.
	taken := func(n string) bool { return n == "mcp__a__b__c" }
	names = ToolNames("a", []string{"b__c", "d"}, taken)
	assert.Regexp(t, `^mcp__a__b__c_[0-9a-f]{8}$`, names[0])
	assert.Equal(t, "mcp__a__d", names[1])
}

func TestNamespace(t *testing.T) {
	assert.Equal(t, "mcp__dev_radius", Namespace("dev-radius"))
	assert.Equal(t, Namespace("dev_radius"), Namespace("dev-radius"))
}
