package tools

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/aymanbagabas/go-udiff"
	"golang.org/x/text/unicode/norm"
)

// Replacement is one oldText → newText edit.
type Replacement struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

// detectLineEnding reports the file's line ending by its first line break.
func detectLineEnding(s string) string {
	lf := strings.IndexByte(s, '\n')
	if lf < 0 {
		return "\n"
	}
	if crlf := strings.Index(s, "\r\n"); crlf >= 0 && crlf < lf {
		return "\r\n"
	}
	return "\n"
}

func normalizeToLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

func restoreLineEndings(s, ending string) string {
	if ending == "\r\n" {
		return strings.ReplaceAll(s, "\n", "\r\n")
	}
	return s
}

const bom = "\uFEFF"

var fuzzyChars = strings.NewReplacer(
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'",
	"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`,
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
	"\u00A0", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ",
	"\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200A", " ", "\u202F", " ", "\u205F", " ", "\u3000", " ",
)

// normalizeFuzzy is the forgiving form both file and oldText are compared
// in when an exact match fails: NFKC, no trailing whitespace on lines,
// ASCII quotes, dashes and spaces.
func normalizeFuzzy(s string) string {
	s = norm.NFKC.String(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	return fuzzyChars.Replace(strings.Join(lines, "\n"))
}

// findText finds old in content, exactly or else in fuzzy-normalised
// space. fuzzy reports which; index and length are then positions in
// normalizeFuzzy(content).
func findText(content, old string) (index, length int, fuzzy, found bool) {
	if i := strings.Index(content, old); i >= 0 {
		return i, len(old), false, true
	}
	fc, fo := normalizeFuzzy(content), normalizeFuzzy(old)
	if i := strings.Index(fc, fo); i >= 0 {
		return i, len(fo), true, true
	}
	return -1, 0, false, false
}

// editError is a failure the model caused; its text is the tool result.
type editError string

func (e editError) Error() string { return string(e) }

// applyEdits applies every replacement, each matched against the original
// LF-normalised content (not against the result of the ones before), and
// returns the content they were matched in and the new content. When any
// replacement only matches fuzzily, the whole file is worked on in fuzzy
// form, as pi does.
func applyEdits(content string, edits []Replacement, path string) (base, updated string, err error) {
	n := len(edits)
	norm := make([]Replacement, n)
	for i, e := range edits {
		norm[i] = Replacement{OldText: normalizeToLF(e.OldText), NewText: normalizeToLF(e.NewText)}
		if norm[i].OldText == "" {
			if n == 1 {
				return "", "", editError(fmt.Sprintf("oldText is empty; it must name the text to replace in %s.", path))
			}
			return "", "", editError(fmt.Sprintf("edits[%d].oldText is empty; it must name the text to replace in %s.", i, path))
		}
	}
	base = content
	for _, e := range norm {
		if _, _, fuzzy, _ := findText(content, e.OldText); fuzzy {
			base = normalizeFuzzy(content)
			break
		}
	}
	type match struct{ edit, at, length int }
	matches := make([]match, 0, n)
	fuzzyBase := normalizeFuzzy(base)
	for i, e := range norm {
		at, length, _, found := findText(base, e.OldText)
		if !found {
			if n == 1 {
				return "", "", editError(fmt.Sprintf("Could not find the text to replace in %s. oldText must match the file exactly, whitespace and line breaks included.", path))
			}
			return "", "", editError(fmt.Sprintf("Could not find edits[%d].oldText in %s. It must match the file exactly, whitespace and line breaks included.", i, path))
		}
		if count := strings.Count(fuzzyBase, normalizeFuzzy(e.OldText)); count > 1 {
			if n == 1 {
				return "", "", editError(fmt.Sprintf("Found %d occurrences of the text in %s, but it must occur once. Include more surrounding lines to make it unique.", count, path))
			}
			return "", "", editError(fmt.Sprintf("Found %d occurrences of edits[%d].oldText in %s, but each must occur once. Include more surrounding lines to make it unique.", count, i, path))
		}
		matches = append(matches, match{i, at, length})
	}
	sort.Slice(matches, func(i, j int) bool { return matches[i].at < matches[j].at })
	for i := 1; i < len(matches); i++ {
		prev, cur := matches[i-1], matches[i]
		if prev.at+prev.length > cur.at {
			return "", "", editError(fmt.Sprintf("edits[%d] and edits[%d] overlap in %s. Combine them into one edit or choose separate regions.", prev.edit, cur.edit, path))
		}
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		b.WriteString(base[last:m.at])
		b.WriteString(norm[m.edit].NewText)
		last = m.at + m.length
	}
	b.WriteString(base[last:])
	updated = b.String()
	if updated == base {
		if n == 1 {
			return "", "", editError(fmt.Sprintf("No changes made to %s: the replacement leaves the file as it was.", path))
		}
		return "", "", editError(fmt.Sprintf("No changes made to %s: the replacements leave the file as it was.", path))
	}
	return base, updated, nil
}

// diffPart is a run of lines that are equal, removed or added.
type diffPart struct {
	kind  byte // ' ', '-', '+'
	lines []string
}

// lineParts computes a line diff of old and new as parts in file order,
// removals before additions.
func lineParts(old, new string) []diffPart {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	}
	var parts []diffPart
	add := func(kind byte, s string) {
		if lines := split(s); len(lines) > 0 {
			parts = append(parts, diffPart{kind, lines})
		}
	}
	last := 0
	for _, e := range udiff.Lines(old, new) {
		add(' ', old[last:e.Start])
		add('-', old[e.Start:e.End])
		add('+', e.New)
		last = e.End
	}
	add(' ', old[last:])
	return parts
}

// renderDiff renders the change from old to new in pi's diff format (the
// one its clients draw): lines "+N text", "-N text" and " N text" with
// line numbers padded to one width, at most context unchanged lines around
// each change and " ..." for the lines skipped. It also returns the first
// changed line in the new file (0 when nothing changed).
func renderDiff(old, new string, context int) (string, int) {
	parts := lineParts(old, new)
	width := len(fmt.Sprint(max(len(strings.Split(old, "\n")), len(strings.Split(new, "\n")))))
	var out []string
	oldNum, newNum, firstChanged := 1, 1, 0
	line := func(prefix byte, num int, text string) {
		out = append(out, fmt.Sprintf("%c%*d %s", prefix, width, num, text))
	}
	skip := func(n int) {
		out = append(out, " "+strings.Repeat(" ", width)+" ...")
		oldNum += n
		newNum += n
	}
	equal := func(lines []string) {
		for _, l := range lines {
			line(' ', oldNum, l)
			oldNum++
			newNum++
		}
	}
	lastWasChange := false
	for i, p := range parts {
		if p.kind != ' ' {
			if firstChanged == 0 {
				firstChanged = newNum
			}
			for _, l := range p.lines {
				if p.kind == '+' {
					line('+', newNum, l)
					newNum++
				} else {
					line('-', oldNum, l)
					oldNum++
				}
			}
			lastWasChange = true
			continue
		}
		nextIsChange := i+1 < len(parts) && parts[i+1].kind != ' '
		lines := p.lines
		switch {
		case lastWasChange && nextIsChange:
			if len(lines) <= 2*context {
				equal(lines)
			} else {
				equal(lines[:context])
				skip(len(lines) - 2*context)
				equal(lines[len(lines)-context:])
			}
		case lastWasChange:
			shown := min(context, len(lines))
			equal(lines[:shown])
			if len(lines) > shown {
				skip(len(lines) - shown)
			}
		case nextIsChange:
			if hidden := max(0, len(lines)-context); hidden > 0 {
				skip(hidden)
				equal(lines[hidden:])
			} else {
				equal(lines)
			}
		default:
			oldNum += len(lines)
			newNum += len(lines)
		}
		lastWasChange = false
	}
	return strings.Join(out, "\n"), firstChanged
}
