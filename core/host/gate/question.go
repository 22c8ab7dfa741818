package gate

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What an approval question's title shows of a call's target. pi's
// clients show a select's title and nothing else, so the title carries the
// whole target up to these limits, and says what it leaves out.
const (
	questionMaxLines = 20
	questionMaxRunes = 1000
	// questionSpaceRun is the shortest run of spaces shown as a count:
	// a wide gap could push the rest of a line out of a dialog's sight.
	questionSpaceRun = 32
)

// visible is s as a question shows it: every character readable, whatever
// the client does with control characters. Control and format characters
// (escape sequences, carriage returns, tabs, bidirectional overrides,
// zero-width and non-ASCII spaces) and invalid UTF-8 are written as Go
// escapes (\x1b, \r, \t, \u202e, \xff), and a long run of spaces as
// "[40 spaces]". keepLines leaves line breaks as they are, so a command's
// lines read as lines (trailing ones, which run nothing, are dropped);
// otherwise they are escaped too (\n). At most questionMaxLines lines and
// questionMaxRunes characters are shown; when more is left out, a note at
// the end says how much, so the question never hides part of its target
// without saying so.
func visible(s string, keepLines bool) string {
	if keepLines {
		s = strings.TrimRight(s, "\n")
	}
	var b strings.Builder
	shown, line := 0, 1
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var piece string
		switch {
		case r == '\n' && keepLines:
			if line == questionMaxLines {
				return b.String() + hiddenNote(0, strings.Count(s[i:], "\n"))
			}
			line++
			piece = "\n"
		case r == ' ':
			piece = " "
			if run := len(s[i:]) - len(strings.TrimLeft(s[i:], " ")); run >= questionSpaceRun {
				piece, size = fmt.Sprintf("[%d spaces]", run), run
			}
		case r == utf8.RuneError && size == 1:
			piece = fmt.Sprintf(`\x%02x`, s[i])
		default:
			piece = escapeRune(r)
		}
		if n := utf8.RuneCountInString(piece); shown+n <= questionMaxRunes {
			b.WriteString(piece)
			shown += n
			i += size
			continue
		}
		rest := s[i:]
		if !keepLines {
			return b.String() + hiddenNote(utf8.RuneCountInString(rest), 0)
		}
		lineRest, _, _ := strings.Cut(rest, "\n")
		return b.String() + hiddenNote(utf8.RuneCountInString(lineRest), strings.Count(rest, "\n"))
	}
	return b.String()
}

// escapeRune writes a character that does not show itself (or shows as
// something else) as a Go escape; others stay as they are.
func escapeRune(r rune) string {
	switch {
	case r == '\t':
		return `\t`
	case r == '\r':
		return `\r`
	case r == '\n':
		return `\n`
	case r == ' ' || unicode.IsPrint(r):
		return string(r)
	case r < 0x80:
		return fmt.Sprintf(`\x%02x`, r)
	case r <= 0xffff:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}

// hiddenNote says how much of a target a question leaves out.
func hiddenNote(chars, lines int) string {
	var parts []string
	if chars > 0 {
		parts = append(parts, plural(chars, "more character"))
	}
	if lines > 0 {
		parts = append(parts, plural(lines, "more line"))
	}
	if len(parts) == 0 {
		return ""
	}
	return " … (+" + strings.Join(parts, " and +") + ", see details)"
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
