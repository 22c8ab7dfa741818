package mcp

import (
	"crypto/sha256"
	"encoding/hex"
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
// first 8 hex digits of SHA-256 over server, a NUL byte and tool.
func hashedToolName(server, tool, plain string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	keep := min(len(plain), MaxToolNameLen-toolHashLen-1)
	return plain[:keep] + "_" + hex.EncodeToString(sum[:])[:toolHashLen]
}

// ToolName is the name the model sees for a server's tool when nothing
// collides with it: mcp__<server>__<tool>, sanitized (see ToolNames),
// shortened with a hash suffix when longer than MaxToolNameLen.
func ToolName(server, tool string) string {
	plain := plainToolName(server, tool)
	if len(plain) <= MaxToolNameLen {
		return plain
	}
	return hashedToolName(server, tool, plain)
}

// ToolNames names the tools a server offers, in order, as pi 1.5.2 does:
// mcp__<server>__<tool> with every character other than letters, digits
// and "_" replaced by "_". Tools whose names then collide (a-b and a_b)
// all get the hash suffix, as does a name over MaxToolNameLen and a
// name taken reports as used by another tool (another server's: taken
// may be nil). A tool listed twice gets one name.
func ToolNames(server string, tools []string, taken func(name string) bool) []string {
	count := map[string]int{}
	seen := map[string]bool{}
	for _, t := range tools {
		if !seen[t] {
			seen[t] = true
			count[plainToolName(server, t)]++
		}
	}
	names := make([]string, len(tools))
	byTool := map[string]string{}
	for i, t := range tools {
		if n, ok := byTool[t]; ok {
			names[i] = n
			continue
		}
		plain := plainToolName(server, t)
		n := plain
		if len(plain) > MaxToolNameLen || count[plain] > 1 || taken != nil && taken(plain) {
			n = hashedToolName(server, t, plain)
		}
		names[i], byTool[t] = n, n
	}
	return names
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
