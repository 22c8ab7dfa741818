package api

import "unicode/utf8"

// Clip shortens s to at most n bytes (cut on a rune boundary, "…"
// added) for an error message or a field that echoes a client's input:
// a 300 KB command name comes back as its first n bytes, not whole.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Lengths for Clip: a name quoted in a message, and a whole message.
const (
	ClipName    = 256
	ClipMessage = 4096
)
