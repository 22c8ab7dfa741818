package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Output limits shared by every tool (pi's values).
const (
	// MaxLines is the most lines a tool result shows.
	MaxLines = 2000
	// MaxBytes is the most bytes a tool result shows.
	MaxBytes = 50 * 1024
	// GrepMaxLineLength is the most characters of one grep line.
	GrepMaxLineLength = 500
)

// unlimitedLines stands for "no line limit" (pi passes
// Number.MAX_SAFE_INTEGER); it is what details report as maxLines then.
const unlimitedLines = 1<<53 - 1

// TruncatedBy names the limit that cut an output; it encodes as null when
// nothing was cut.
type TruncatedBy string

const (
	TruncatedByLines TruncatedBy = "lines"
	TruncatedByBytes TruncatedBy = "bytes"
)

func (t TruncatedBy) MarshalJSON() ([]byte, error) {
	if t == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(t))
}

func (t *TruncatedBy) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*t = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	*t = TruncatedBy(s)
	return nil
}

// Truncation describes how an output was cut. It is pi's TruncationResult
// and appears as details.truncation of tool results.
type Truncation struct {
	Content     string      `json:"content"`
	Truncated   bool        `json:"truncated"`
	TruncatedBy TruncatedBy `json:"truncatedBy"`
	TotalLines  int         `json:"totalLines"`
	TotalBytes  int         `json:"totalBytes"`
	OutputLines int         `json:"outputLines"`
	OutputBytes int         `json:"outputBytes"`
	// LastLinePartial is set by tail truncation when the last line alone
	// was over the byte limit and only its end is kept.
	LastLinePartial bool `json:"lastLinePartial"`
	// FirstLineExceedsLimit is set by head truncation when the first line
	// alone is over the byte limit; Content is empty then.
	FirstLineExceedsLimit bool `json:"firstLineExceedsLimit"`
	MaxLines              int  `json:"maxLines"`
	MaxBytes              int  `json:"maxBytes"`
}

// Limits overrides the default line and byte limits; zero fields mean the
// default.
type Limits struct {
	MaxLines int
	MaxBytes int
}

func (l Limits) resolve() (int, int) {
	lines, bytes := l.MaxLines, l.MaxBytes
	if lines <= 0 {
		lines = MaxLines
	}
	if bytes <= 0 {
		bytes = MaxBytes
	}
	return lines, bytes
}

// TruncateHead keeps the first lines of content that fit both limits. It
// never cuts a line in half: when the first line alone is too big the
// result is empty with FirstLineExceedsLimit set. Used for file reads.
func TruncateHead(content string, l Limits) Truncation {
	maxLines, maxBytes := l.resolve()
	lines := strings.Split(content, "\n")
	t := Truncation{
		TotalLines: len(lines),
		TotalBytes: len(content),
		MaxLines:   maxLines,
		MaxBytes:   maxBytes,
	}
	if len(lines) <= maxLines && len(content) <= maxBytes {
		t.Content, t.OutputLines, t.OutputBytes = content, len(lines), len(content)
		return t
	}
	t.Truncated = true
	if len(lines[0]) > maxBytes {
		t.TruncatedBy = TruncatedByBytes
		t.FirstLineExceedsLimit = true
		return t
	}
	n, size := 0, 0
	t.TruncatedBy = TruncatedByLines
	for i := 0; i < len(lines) && i < maxLines; i++ {
		add := len(lines[i])
		if i > 0 {
			add++ // the newline before it
		}
		if size+add > maxBytes {
			t.TruncatedBy = TruncatedByBytes
			break
		}
		n++
		size += add
	}
	if n >= maxLines && size <= maxBytes {
		t.TruncatedBy = TruncatedByLines
	}
	t.Content = strings.Join(lines[:n], "\n")
	t.OutputLines = n
	t.OutputBytes = len(t.Content)
	return t
}

// TruncateTail keeps the last lines of content that fit both limits. When
// the last line alone is too big its end is kept and LastLinePartial is
// set. Used for command output, where the end matters most.
func TruncateTail(content string, l Limits) Truncation {
	maxLines, maxBytes := l.resolve()
	// A trailing newline ends the last line and starts none.
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	if content == "" {
		lines = nil
	}
	t := Truncation{
		TotalLines: len(lines),
		TotalBytes: len(content),
		MaxLines:   maxLines,
		MaxBytes:   maxBytes,
	}
	if len(lines) <= maxLines && len(content) <= maxBytes {
		t.Content, t.OutputLines, t.OutputBytes = content, len(lines), len(content)
		return t
	}
	t.Truncated = true
	t.TruncatedBy = TruncatedByLines
	start, n, size := len(lines), 0, 0
	for i := len(lines) - 1; i >= 0 && n < maxLines; i-- {
		add := len(lines[i])
		if n > 0 {
			add++
		}
		if size+add > maxBytes {
			t.TruncatedBy = TruncatedByBytes
			if n == 0 {
				t.Content = tailBytes(lines[i], maxBytes)
				t.OutputLines = 1
				t.OutputBytes = len(t.Content)
				t.LastLinePartial = true
				return t
			}
			break
		}
		start = i
		n++
		size += add
	}
	if n >= maxLines && size <= maxBytes {
		t.TruncatedBy = TruncatedByLines
	}
	t.Content = strings.Join(lines[start:], "\n")
	t.OutputLines = n
	t.OutputBytes = len(t.Content)
	return t
}

// tailBytes returns at most max bytes from the end of s, starting on a
// character boundary.
func tailBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	start := len(s) - max
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:]
}

// TruncateLine shortens one line to maxChars characters, marking the cut.
// It reports whether it cut anything.
func TruncateLine(line string, maxChars int) (string, bool) {
	if maxChars <= 0 {
		maxChars = GrepMaxLineLength
	}
	if utf8.RuneCountInString(line) <= maxChars {
		return line, false
	}
	i, n := 0, 0
	for i = range line {
		if n == maxChars {
			break
		}
		n++
	}
	return line[:i] + "... [truncated]", true
}

// FormatSize renders a byte count the way pi's notes do: 512B, 1.5KB, 2.0MB.
func FormatSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fKB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1fMB", float64(n)/(1024*1024))
	}
}
