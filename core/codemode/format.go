package codemode

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/tools"
)

// defaultMaxOutputTokens is the output budget unless the script sets one.
const defaultMaxOutputTokens = 10_000

// charsPerToken is how tokens are estimated, as pi does.
const charsPerToken = 4

// part is one piece of the result's content before it becomes a block.
type part struct {
	image    bool
	text     string // the text, or the image's base64
	mimeType string
}

// layout lays the output out as pi does: with more than one text item
// (text() and the returned value), each starts with "==> text N/M <==";
// the console lines follow in one <console_output> block.
func layout(out []item) []part {
	total := 0
	for _, it := range out {
		if it.kind == "text" {
			total++
		}
	}
	var parts []part
	var console []string
	n := 0
	for _, it := range out {
		switch it.kind {
		case "image":
			parts = append(parts, part{image: true, text: it.text, mimeType: it.mimeType})
		case "console":
			console = append(console, it.text)
		default:
			n++
			t := it.text
			if total > 1 {
				t = fmt.Sprintf("==> text %d/%d <==\n%s", n, total, t)
			}
			parts = append(parts, part{text: t})
		}
	}
	if len(console) > 0 {
		parts = append(parts, part{text: "<console_output>\n" + strings.Join(console, "\n") + "\n</console_output>"})
	}
	return parts
}

// joinText merges adjacent text parts, each starting on a line of its own.
func joinText(parts []part) []part {
	var out []part
	var b strings.Builder
	pending, last := false, ""
	flush := func() {
		if pending {
			out = append(out, part{text: b.String()})
		}
		b.Reset()
		pending, last = false, ""
	}
	for _, p := range parts {
		if p.image {
			flush()
			out = append(out, p)
			continue
		}
		if last != "" && !strings.HasSuffix(last, "\n") {
			b.WriteByte('\n')
			last = "\n"
		}
		b.WriteString(p.text)
		pending = true
		if p.text != "" {
			last = p.text
		}
	}
	flush()
	return out
}

// jsLen is a string's length as JavaScript counts it (UTF-16 units), so
// budgets and token counts are pi's.
func jsLen(s string) int {
	n := 0
	for _, r := range s {
		if utf16.RuneLen(r) == 2 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// HeadUTF16 is the longest prefix of s of at most n UTF-16 units (what
// JavaScript's slice counts) that does not split a character; tail the
// same at the end.
func HeadUTF16(s string, n int) string {
	used := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if w < 1 {
			w = 1
		}
		if used+w > n {
			return s[:i]
		}
		used += w
	}
	return s
}

func tail(s string, n int) string {
	used := 0
	for i := len(s); i > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		w := utf16.RuneLen(r)
		if w < 1 {
			w = 1
		}
		if used+w > n {
			return s[i:]
		}
		used += w
		i -= size
	}
	return s
}

// budget applies the output budget: past it, the text parts become one
// that keeps the start and the end, the whole text goes to a private temp
// file named in it, and the images follow. path is that file ("" when the
// text fit or could not be saved).
func budget(parts []part, maxTokens int, tempDir string) (out []part, path string) {
	var texts []string
	for _, p := range parts {
		if !p.image {
			texts = append(texts, p.text)
		}
	}
	combined := strings.Join(texts, "\n")
	limit := maxTokens * charsPerToken
	size := jsLen(combined)
	if len(texts) == 0 || size <= limit {
		return parts, ""
	}
	headChars := limit / 2
	tailChars := limit - headChars
	removed := size - headChars - tailChars
	text := fmt.Sprintf("Warning: truncated output (original token count: %d)\nTotal output lines: %d\n\n%s…%d tokens truncated…%s",
		ceilDiv(size, charsPerToken), strings.Count(combined, "\n")+1,
		HeadUTF16(combined, headChars), ceilDiv(removed, charsPerToken), tail(combined, tailChars))
	if p, err := spill(tempDir, "gopi-codemode-*.txt", []byte(combined)); err != nil {
		text += "\n\n[Could not save the full output: " + err.Error() + "]"
	} else {
		path = p
		text += "\n\n[Full output: " + p + " (read with offset/limit)]"
	}
	out = []part{{text: text}}
	for _, p := range parts {
		if p.image {
			out = append(out, p)
		}
	}
	return out, path
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// spill writes data to a new file only this user can read.
func spill(dir, pattern string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", fmt.Errorf("codemode: saving output: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "", fmt.Errorf("codemode: saving output: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("codemode: saving output: %w", err)
	}
	return f.Name(), nil
}

// imageExtensions are the file extensions of the types image() accepts.
var imageExtensions = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
}

// saveImages saves each image to a private temp file and puts a line
// naming it before the image: the model has no other way to its bytes.
// An image shown twice is saved once.
func saveImages(parts []part, tempDir string) []part {
	labels := map[string]string{}
	var out []part
	for _, p := range parts {
		if !p.image {
			out = append(out, p)
			continue
		}
		label, ok := labels[p.text]
		if !ok {
			label = imageLabel(p, tempDir)
			labels[p.text] = label
		}
		out = append(out, part{text: label}, p)
	}
	return out
}

func imageLabel(p part, tempDir string) string {
	data, err := base64.StdEncoding.DecodeString(p.text)
	kind := p.mimeType + ", " + tools.FormatSize(len(data))
	if err != nil {
		return fmt.Sprintf("[Image (%s) could not be saved: %v]", kind, err)
	}
	path, err := spill(tempDir, "gopi-codemode-*"+imageExtensions[p.mimeType], data)
	if err != nil {
		return fmt.Sprintf("[Image (%s) could not be saved: %v]", kind, err)
	}
	return fmt.Sprintf("[Image saved to %s (%s)]", path, kind)
}

// callSummary is the failed script's list of the calls it made.
func callSummary(calls []CallRecord) string {
	if len(calls) == 0 {
		return "No tool calls were made."
	}
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name + " (" + c.Status + ")"
	}
	return "Tool calls made before the failure (they are not undone): " + strings.Join(names, ", ")
}

// errorText is the "Script error:" section's text.
func errorText(e scriptError, timeoutMS int64, abortReason string, calls []CallRecord) string {
	var h string
	switch e.kind {
	case "script":
		h = e.stack
		if h == "" {
			name := e.name
			if name == "" {
				name = "Error"
			}
			h = name + ": " + e.message
		}
	case "timeout":
		h = fmt.Sprintf("Script timed out: Execution timed out after %d ms", timeoutMS)
	case "aborted":
		h = "Script aborted: " + abortReason
	default:
		h = "Script sandbox failed: " + e.message
	}
	return h + "\n\n" + callSummary(calls)
}

// header starts every result.
func header(ok bool, wall time.Duration) string {
	status := "Script completed"
	if !ok {
		status = "Script failed"
	}
	return fmt.Sprintf("%s\nWall time %.1f seconds\nOutput:\n", status, wall.Seconds())
}

// contents turns the parts into the result's content blocks, after the
// header.
func contents(hdr string, parts []part) llm.Contents {
	cs := llm.Contents{llm.TextContent{Text: hdr}}
	for _, p := range parts {
		if p.image {
			cs = append(cs, llm.ImageContent{Data: p.text, MimeType: p.mimeType})
		} else {
			cs = append(cs, llm.TextContent{Text: p.text})
		}
	}
	return cs
}
