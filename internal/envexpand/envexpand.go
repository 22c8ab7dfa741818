// Package envexpand expands environment references in configuration
// values the way pi 1.5 reads them (models.json keys and headers, mcp.json
// env and headers): "$NAME" and "${NAME}" are the variable's value, "$$" is
// "$" and "$!" is "!", and anything else stays as written. Call [Expand].
package envexpand

import (
	"slices"
	"strings"
)

// Expand replaces the references in v with getenv's values. missing lists
// the referenced names that are unset or empty, once each, in order of
// appearance; what to do about them (fail, or drop the whole value) is the
// caller's rule.
func Expand(v string, getenv func(string) string) (out string, missing []string) {
	if !strings.Contains(v, "$") {
		return v, nil
	}
	var b strings.Builder
	lookup := func(name string) {
		if val := getenv(name); val != "" {
			b.WriteString(val)
		} else if !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
	}
	for i := 0; i < len(v); {
		j := strings.IndexByte(v[i:], '$')
		if j < 0 {
			b.WriteString(v[i:])
			break
		}
		b.WriteString(v[i : i+j])
		i += j + 1 // past the "$"
		switch {
		case i < len(v) && (v[i] == '$' || v[i] == '!'):
			b.WriteByte(v[i])
			i++
		case i < len(v) && v[i] == '{':
			end := strings.IndexByte(v[i:], '}')
			if end < 0 {
				b.WriteByte('$')
				continue
			}
			if name := v[i+1 : i+end]; IsName(name) {
				lookup(name)
			} else {
				b.WriteString("$" + v[i:i+end+1])
			}
			i += end + 1
		default:
			n := nameLen(v[i:])
			if n == 0 {
				b.WriteByte('$')
				continue
			}
			lookup(v[i : i+n])
			i += n
		}
	}
	return b.String(), missing
}

// IsName reports whether s is a whole environment variable name
// ([A-Za-z_][A-Za-z0-9_]*).
func IsName(s string) bool { return s != "" && nameLen(s) == len(s) }

// nameLen is the length of the variable name s starts with, 0 when none.
func nameLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9') {
			return i
		}
	}
	return len(s)
}
