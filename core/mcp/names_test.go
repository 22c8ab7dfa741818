package mcp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// one names a single server's tools.
func one(server string, tools ...string) []string {
	return nameTools([]serverTools{{server, tools}}, nil)[0]
}

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
		assert.Equal(t, []string{tc.plain}, one(tc.server, tc.tool))
		// A reserved name (an extension's tool has it) takes pi's suffix.
		reserved := func(n string) bool { return n == tc.plain }
		assert.Equal(t, [][]string{{tc.hashed}}, nameTools([]serverTools{{tc.server, []string{tc.tool}}}, reserved))
	}
	// Over 64 characters: 55 kept, "_", 8 hex digits.
	long := ToolName("long-server-name", strings.Repeat("x", 70))
	assert.Equal(t, "mcp__long_server_name__xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_32bda4e8", long)
	assert.Len(t, long, MaxToolNameLen)
	assert.Equal(t, []string{long}, one("long-server-name", strings.Repeat("x", 70)))
}

// Whatever a server calls its tools (spaces, slashes, dots, non-ASCII
// letters, a kilobyte of them), the model's names are at most 64
// characters of [A-Za-z0-9_], as every provider accepts.
func TestToolNamesSuitProviders(t *testing.T) {
	odd := []string{"read file", "a/b", "get.item", "ünïcödé", "😀", "", "x" + strings.Repeat("é", 1000),
		"tab\there", `quote"and\back`, strings.Repeat("y", 200)}
	for _, server := range []string{"s", strings.Repeat("long-server", 10)} {
		names := one(server, odd...)
		seen := map[string]bool{}
		for i, n := range names {
			assert.Regexp(t, `^[A-Za-z0-9_]{1,64}$`, n, "tool %q of %q", odd[i], server)
			assert.False(t, seen[n], "%s given twice", n)
			seen[n] = true
		}
	}
}

func TestToolNamesCollisions(t *testing.T) {
	// Every tool of the colliding group gets the suffix, the others not.
	names := one("a", "b-c", "list", "b_c", "b.c", "list")
	assert.Equal(t, "mcp__a__b_c_02654a5c", names[0])
	assert.Equal(t, "mcp__a__list", names[1])
	assert.Equal(t, "mcp__a__b_c_662f0bbb", names[2])
	assert.Regexp(t, `^mcp__a__b_c_[0-9a-f]{8}$`, names[3])
	assert.Equal(t, "mcp__a__list", names[4], "a tool listed twice is one tool")
	assert.Len(t, map[string]bool{names[0]: true, names[2]: true, names[3]: true}, 3)
}

// Issue 37: server "a" with tool "b__c" and server "a__b" with tool "c"
// both make mcp__a__b__c. Both get the suffix, whichever is listed (or
// connects) first and whether or not the other has listed anything yet;
// their other tools keep pi's names.
func TestToolNamesAcrossServers(t *testing.T) {
	both := nameTools([]serverTools{{"a", []string{"b__c", "d"}}, {"a__b", []string{"c"}}}, nil)
	assert.Equal(t, "mcp__a__d", both[0][1])
	assert.Regexp(t, `^mcp__a__b__c_[0-9a-f]{8}$`, both[0][0])
	assert.Regexp(t, `^mcp__a__b__c_[0-9a-f]{8}$`, both[1][0])
	assert.NotEqual(t, both[0][0], both[1][0])

	// The same names when only one of them has connected, in either
	// order of configuration: a tool's name does not wait on the others.
	alone := nameTools([]serverTools{{"a", []string{"b__c", "d"}}, {"a__b", nil}}, nil)
	assert.Equal(t, both[0], alone[0])
	alone = nameTools([]serverTools{{"a", nil}, {"a__b", []string{"c"}}}, nil)
	assert.Equal(t, both[1], alone[1])
	swapped := nameTools([]serverTools{{"a__b", []string{"c"}}, {"a", []string{"b__c", "d"}}}, nil)
	assert.Equal(t, both[1], swapped[0])
	assert.Equal(t, both[0], swapped[1])

	// "-" reads as "_": server "a-b" is as ambiguous as "a__b" is not.
	assert.Equal(t, [][]string{{"mcp__a__b_x"}, {"mcp__a_b__x"}},
		nameTools([]serverTools{{"a", []string{"b-x"}}, {"a-b", []string{"x"}}}, nil))
}

// A name that is still taken after the suffix (a server that named its
// tool after another's suffixed name, or an extension's tool that has
// it) makes the later tool try salted hashes: no two tools ever share a
// name, and no reserved name is given.
func TestToolNamesAreInjective(t *testing.T) {
	// An extension's tool holds mcp__s__echo: the server's echo takes the
	// suffix, and a tool the server named after that suffixed name takes
	// a salted one.
	reserved := func(n string) bool { return n == "mcp__s__echo" }
	hashed := nameTools([]serverTools{{"s", []string{"echo"}}}, reserved)[0][0]
	require.Regexp(t, `^mcp__s__echo_[0-9a-f]{8}$`, hashed)
	copycat := strings.TrimPrefix(hashed, "mcp__s__")
	names := nameTools([]serverTools{{"s", []string{"echo", copycat}}}, reserved)[0]
	assert.Equal(t, hashed, names[0])
	assert.Regexp(t, `^mcp__s__echo_[0-9a-f]{8}_[0-9a-f]{8}$`, names[1])
	// The same from another server, listed before or after.
	names2 := nameTools([]serverTools{{"s", []string{"echo"}}, {"t", []string{"x"}}}, reserved)
	assert.Equal(t, hashed, names2[0][0])

	// An extension's tool holds both the plain name and the suffixed one.
	again := nameTools([]serverTools{{"s", []string{"echo"}}}, func(n string) bool { return reserved(n) || n == hashed })[0][0]
	assert.NotEqual(t, hashed, again)
	assert.Regexp(t, `^mcp__s__echo_[0-9a-f]{8}$`, again)

	// Every name distinct over many servers whose names overlap.
	var servers []serverTools
	for _, s := range []string{"a", "a__b", "a__b__c", "a_", "a_b", "b"} {
		servers = append(servers, serverTools{s, []string{"c", "b__c", "c__d", "_b", "b", "x"}})
	}
	seen := map[string]bool{}
	for _, names := range nameTools(servers, nil) {
		for _, n := range names {
			assert.False(t, seen[n], "%s given twice", n)
			seen[n] = true
		}
	}
}

func TestNamespace(t *testing.T) {
	assert.Equal(t, "mcp__dev_radius", Namespace("dev-radius"))
	assert.Equal(t, Namespace("dev_radius"), Namespace("dev-radius"))
}
