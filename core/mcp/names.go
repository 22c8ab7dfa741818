package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// MaxToolNameLen is the longest tool name providers accept (64
// characters of [A-Za-z0-9_-]); longer MCP tool names are shortened.
const MaxToolNameLen = 64

// toolHashLen is how many hex digits of the hash a shortened or
// colliding name ends with, after a "_".
const toolHashLen = 8

// Namespace is the prefix of a server's tools, mcp__<server> with "-" as
// "_": names that differ only in "-" and "_" share it, so one
// configuration may not hold both.
func Namespace(server string) string {
	return "mcp__" + strings.ReplaceAll(server, "-", "_")
}

// plainToolName is mcp__<server>__<tool> with every character other than
// ASCII letters, digits and "_" replaced by "_". pi replaces UTF-16 code
// units, so a character outside the Basic Multilingual Plane (an emoji)
// becomes two.
func plainToolName(server, tool string) string {
	var b strings.Builder
	for _, r := range "mcp__" + server + "__" + tool {
		switch {
		case r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("__")
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// hashedToolName is the plain name cut to 55 characters, "_" and the
// first 8 hex digits of SHA-256 over server, a NUL byte and tool (pi's
// suffix). A salt above 0 is hashed after them, behind another NUL: the
// names a tool tries when its suffixed name is taken too.
func hashedToolName(server, tool, plain string, salt int) string {
	in := server + "\x00" + tool
	if salt > 0 {
		in += fmt.Sprintf("\x00%d", salt)
	}
	sum := sha256.Sum256([]byte(in))
	keep := min(len(plain), MaxToolNameLen-toolHashLen-1)
	return plain[:keep] + "_" + hex.EncodeToString(sum[:])[:toolHashLen]
}

// ToolName is the name the model sees for a server's tool when nothing
// collides with it: mcp__<server>__<tool>, sanitized (see plainToolName),
// shortened with a hash suffix when longer than MaxToolNameLen.
func ToolName(server, tool string) string {
	plain := plainToolName(server, tool)
	if len(plain) <= MaxToolNameLen {
		return plain
	}
	return hashedToolName(server, tool, plain, 0)
}

// serverTools are one server's tools as the server names them, for
// nameTools.
type serverTools struct {
	server string
	tools  []string
}

// nameTools gives every tool of servers its name for the model, one name
// per tool and no name twice. servers are every server of the session in
// its order (configured ones first, enabled or not, then those
// extensions registered), each with the tools it listed last (none
// before it connects); reserved reports the names of the tools that are
// not MCP's (the built-ins, the extensions' tools), which keep their
// names. The result holds each server's names in the order of its tools.
//
// A tool is named mcp__<server>__<tool>, sanitized (pi's name), unless
// that name
//
//   - is longer than MaxToolNameLen,
//   - is the name of another tool of the same server (a-b and a_b: all of
//     them are suffixed, as in pi),
//   - could be another server's: it begins with that server's
//     mcp__<other>__ (server "a" with tool "b__c" and server "a__b" with
//     tool "c" both make mcp__a__b__c; both are suffixed, whichever
//     connects first and whether or not the other offers such a tool), or
//   - is reserved;
//
// then it gets pi's hash suffix. The name therefore depends on the
// server, the tool, its server's other tools and the names of the other
// servers, never on which server connected first: a tool keeps its name
// across reconnections, a changed tool list of another server and a
// restart. Should the suffixed name still be taken (a server that named a
// tool after another's suffixed name, or a reserved one), the tool that
// comes later in servers' order tries the hash with a salt of 1, 2, ...
// until a name is free.
func nameTools(servers []serverTools, reserved func(name string) bool) [][]string {
	if reserved == nil {
		reserved = func(string) bool { return false }
	}
	prefixes := make([]string, len(servers))
	for i, s := range servers {
		prefixes[i] = plainToolName(s.server, "")
	}
	ambiguous := func(i int, plain string) bool {
		for j, p := range prefixes {
			if j != i && strings.HasPrefix(plain, p) {
				return true
			}
		}
		return false
	}
	used := map[string]bool{}
	out := make([][]string, len(servers))
	for i, s := range servers {
		count := map[string]int{}
		seen := map[string]bool{}
		for _, t := range s.tools {
			if !seen[t] {
				seen[t] = true
				count[plainToolName(s.server, t)]++
			}
		}
		names := make([]string, len(s.tools))
		byTool := map[string]string{}
		for k, t := range s.tools {
			if n, ok := byTool[t]; ok {
				names[k] = n // a tool listed twice is one tool
				continue
			}
			plain := plainToolName(s.server, t)
			n := plain
			if len(plain) > MaxToolNameLen || count[plain] > 1 || ambiguous(i, plain) || reserved(plain) {
				n = hashedToolName(s.server, t, plain, 0)
			}
			for salt := 1; used[n] || reserved(n); salt++ {
				n = hashedToolName(s.server, t, plain, salt)
			}
			used[n] = true
			names[k], byTool[t] = n, n
		}
		out[i] = names
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
