package api

import (
	"fmt"
	"io/fs"
	"unicode/utf8"
)

// Clip shortens s to at most n bytes (cut on a rune boundary, "…"
// added) for an error message or a field that echoes a client's input:
// a 40 MB method name comes back as its first n bytes, not whole. Every
// dialect quotes input through it.
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

// Lengths for Clip: a name (a command, a method, an id, a path, a field's
// value) quoted in a message, and a whole message, the bound every
// dialect's writer puts on the error texts it sends.
const (
	ClipName    = 256
	ClipMessage = 4096
)

// MaxID bounds the id of a request, as the client wrote it (its JSON
// text): every dialect echoes the id whole in the answer (JSON-RPC
// requires it), so a longer one is refused with an answer that carries
// no id instead of being echoed. Clients number their requests or use
// UUIDs; 256 bytes is far more than either needs.
const MaxID = 256

// IDTooLong is the refusal of an id of n bytes, more than MaxID: it
// wraps [ErrIDTooLong].
func IDTooLong(n int) error {
	return fmt.Errorf(`%w: "id" is %d bytes long; gopi answers requests whose id is at most %d bytes`, ErrIDTooLong, n, MaxID)
}

// ClipPathError is err, an error of the os package about a path (one a
// client gave, perhaps), with the path quoted at most ClipName bytes;
// other errors are returned as they are. Call it before the error is
// wrapped: a wrapper's text is made when it is.
func ClipPathError(err error) error {
	if pe, ok := err.(*fs.PathError); ok && len(pe.Path) > ClipName {
		return &fs.PathError{Op: pe.Op, Path: Clip(pe.Path, ClipName), Err: pe.Err}
	}
	return err
}
