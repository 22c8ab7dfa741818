package tools

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// outputBuffer collects a command's output with bounded memory: it keeps a
// rolling tail for display and, once the output outgrows the limits, spills
// everything to a temp file so the full output stays readable (pi's
// OutputAccumulator). It is safe for concurrent use.
type outputBuffer struct {
	maxLines, maxBytes int
	tempDir, prefix    string

	mu sync.Mutex // guards the fields below
	// tail is the end of the output, between 2 and 4 times maxBytes long
	// once trimmed; tailAtLineStart says whether it begins a line.
	tail            []byte
	tailAtLineStart bool
	totalBytes      int
	// newlines counts the finished lines; lastLineBytes is the size of
	// the line still open (0 right after a newline) and doneLineBytes
	// that of the last finished line. A trailing newline ends a line and
	// starts none, as pi counts.
	newlines      int
	lastLineBytes int
	doneLineBytes int
	// head holds the output until the temp file exists; then file takes
	// every write.
	head     []byte
	file     *os.File
	path     string
	fileErr  error
	dirty    bool
	finished bool
}

func newOutputBuffer(l Limits, tempDir, prefix string) *outputBuffer {
	lines, size := l.resolve()
	if prefix == "" {
		prefix = "gopi-bash"
	}
	return &outputBuffer{maxLines: lines, maxBytes: size, tempDir: tempDir, prefix: prefix,
		tailAtLineStart: true}
}

func (o *outputBuffer) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	o.totalBytes += len(p)
	if n := bytes.Count(p, []byte{'\n'}); n > 0 {
		o.newlines += n
		last := bytes.LastIndexByte(p, '\n')
		if n == 1 {
			o.doneLineBytes = o.lastLineBytes + last
		} else {
			o.doneLineBytes = last - bytes.LastIndexByte(p[:last], '\n') - 1
		}
		o.lastLineBytes = len(p) - last - 1
	} else {
		o.lastLineBytes += len(p)
	}
	o.tail = append(o.tail, p...)
	if keep := 2 * o.maxBytes; len(o.tail) > 2*keep {
		start := len(o.tail) - keep
		for start < len(o.tail) && !utf8.RuneStart(o.tail[start]) {
			start++
		}
		o.tailAtLineStart = o.tail[start-1] == '\n'
		o.tail = append([]byte(nil), o.tail[start:]...)
	}
	switch {
	case o.file != nil:
		o.writeFile(p)
	case o.overLimits():
		o.head = append(o.head, p...)
		o.openFile()
	default:
		o.head = append(o.head, p...)
	}
	o.dirty = true
	return len(p), nil
}

func (o *outputBuffer) overLimits() bool {
	return o.totalBytes > o.maxBytes || o.totalLines() > o.maxLines
}

// totalLines counts the output's lines: the finished ones and the one
// still open, if any.
func (o *outputBuffer) totalLines() int {
	if o.lastLineBytes > 0 {
		return o.newlines + 1
	}
	return o.newlines
}

// shownLineBytes is the size of the output's last line with text: the
// open one, or the last finished one when the output ends in a newline.
func (o *outputBuffer) shownLineBytes() int {
	if o.lastLineBytes > 0 {
		return o.lastLineBytes
	}
	return o.doneLineBytes
}

// openFile creates the temp file and moves head into it. A failure is
// remembered and the output is simply not saved.
func (o *outputBuffer) openFile() {
	if o.file != nil || o.fileErr != nil {
		return
	}
	f, err := os.CreateTemp(o.tempDir, o.prefix+"-*.log")
	if err != nil {
		o.fileErr = fmt.Errorf("create full output file: %w", err)
		return
	}
	o.file, o.path = f, f.Name()
	o.writeFile(o.head)
	o.head = nil
}

func (o *outputBuffer) writeFile(p []byte) {
	if o.fileErr != nil {
		return
	}
	if _, err := o.file.Write(p); err != nil {
		o.fileErr = fmt.Errorf("write full output file: %w", err)
	}
}

// takeDirty reports whether output arrived since the last call.
func (o *outputBuffer) takeDirty() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	d := o.dirty
	o.dirty = false
	return d
}

// finish marks the end of the output: it makes sure a truncated output
// has its temp file and closes it.
func (o *outputBuffer) finish() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.finished {
		return o.fileErr
	}
	o.finished = true
	if o.overLimits() {
		o.openFile()
	}
	if o.file != nil {
		if err := o.file.Close(); err != nil && o.fileErr == nil {
			o.fileErr = fmt.Errorf("close full output file: %w", err)
		}
	}
	return o.fileErr
}

// full returns the whole output, called after finish: from the temp file
// when there is one, else from memory (which then holds all of it); an
// error when the file could not be written or read. An output over limit bytes keeps
// its first and last halves around a note of how many bytes were left out
// (cut true), each half cut to whole characters, as pi's
// readFullOutput does. Invalid UTF-8 reads as U+FFFD.
func (o *outputBuffer) full(limit int) (text string, cut bool, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.path == "" {
		// Without a file, head holds all of it.
		if len(o.head) <= limit {
			return strings.ToValidUTF8(string(o.head), "\uFFFD"), false, nil
		}
		half := limit / 2
		return joinHalves(o.head[:half], o.head[len(o.head)-(limit-half):], len(o.head)-limit), true, nil
	}
	if o.fileErr != nil {
		// The file missed some of the output.
		return "", false, o.fileErr
	}
	f, err := os.Open(o.path)
	if err != nil {
		return "", false, fmt.Errorf("open full output file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", false, fmt.Errorf("stat full output file: %w", err)
	}
	size := int(info.Size())
	if size <= limit {
		b, err := io.ReadAll(f)
		if err != nil {
			return "", false, fmt.Errorf("read full output file: %w", err)
		}
		return strings.ToValidUTF8(string(b), "\uFFFD"), false, nil
	}
	half := limit / 2
	head, tail := make([]byte, half), make([]byte, limit-half)
	if _, err := f.ReadAt(head, 0); err != nil {
		return "", false, fmt.Errorf("read full output file: %w", err)
	}
	if _, err := f.ReadAt(tail, int64(size-len(tail))); err != nil {
		return "", false, fmt.Errorf("read full output file: %w", err)
	}
	return joinHalves(head, tail, size-limit), true, nil
}

// joinHalves is the start and end of an output with omitted bytes left
// out between them, each cut to whole characters.
func joinHalves(head, tail []byte, omitted int) string {
	head = head[:completeRunes(head)]
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return fmt.Sprintf("%s\n\n[... %d bytes omitted ...]\n\n%s",
		strings.ToValidUTF8(string(head), "\uFFFD"), omitted, strings.ToValidUTF8(string(tail), "\uFFFD"))
}

// outputSnapshot is the displayable state of an output.
type outputSnapshot struct {
	Truncation     Truncation
	FullOutputPath string
	LastLineBytes  int
}

// snapshot tail-truncates what the buffer holds. Totals count the whole
// output, not just the kept tail.
func (o *outputBuffer) snapshot() outputSnapshot {
	o.mu.Lock()
	defer o.mu.Unlock()
	text := o.tail
	if !o.tailAtLineStart {
		// The tail starts inside a line: drop that part, unless the tail
		// is all one line (its end), which is then what there is to show.
		if i := bytes.IndexByte(text, '\n'); i >= 0 && i+1 < len(text) {
			text = text[i+1:]
		}
	}
	t := TruncateTail(strings.ToValidUTF8(string(text), "\uFFFD"), Limits{MaxLines: o.maxLines, MaxBytes: o.maxBytes})
	truncated := o.overLimits()
	t.Truncated = truncated
	switch {
	case !truncated:
		t.TruncatedBy = ""
	case t.TruncatedBy == "" && o.totalBytes > o.maxBytes:
		t.TruncatedBy = TruncatedByBytes
	case t.TruncatedBy == "":
		t.TruncatedBy = TruncatedByLines
	}
	t.TotalLines, t.TotalBytes = o.totalLines(), o.totalBytes
	if truncated && !o.finished {
		o.openFile()
	}
	return outputSnapshot{Truncation: t, FullOutputPath: o.path, LastLineBytes: o.shownLineBytes()}
}

// ansiEscape matches terminal escape sequences (the pattern of the
// ansi-regex package pi strips them with), compiled on first use.
var ansiEscape = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[\x1b\x{9b}][\[\]()#;?]*(?:(?:(?:(?:;[-a-zA-Z\d/#&.:=?%@~_]+)*|[a-zA-Z\d]+(?:;[-a-zA-Z\d/#&.:=?%@~_]*)*)?(?:\x07|\x1b\x5c|\x{9c}))|(?:(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-nq-uy=><~]))`)
})

// sanitizer cleans streamed output for display and storage: it strips
// terminal escapes, control characters (but tab and newline), carriage
// returns and Unicode format characters that break width computations,
// and holds back a character or escape sequence split across chunks.
type sanitizer struct {
	pending []byte
}

func (s *sanitizer) feed(p []byte, final bool) string {
	buf := append(s.pending, p...)
	s.pending = nil
	cut := len(buf)
	if !final {
		cut = completeRunes(buf)
		if i := bytes.LastIndexByte(buf[:cut], 0x1b); i >= 0 && cut-i < 64 {
			// An escape that is unfinished, or finished only by the end
			// of the chunk, may continue in the next one.
			if loc := ansiEscape().FindIndex(buf[i:cut]); loc == nil || loc[0] != 0 || i+loc[1] == cut {
				cut = i
			}
		}
		s.pending = append([]byte(nil), buf[cut:]...)
	}
	text := strings.ToValidUTF8(string(buf[:cut]), "\uFFFD")
	text = ansiEscape().ReplaceAllString(text, "")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n':
			return r
		case r < 0x20, r >= 0xfff9 && r <= 0xfffb:
			return -1
		}
		return r
	}, text)
}

// completeRunes returns the length of buf without a trailing incomplete
// UTF-8 sequence.
func completeRunes(buf []byte) int {
	for back := 1; back <= utf8.UTFMax && back <= len(buf); back++ {
		i := len(buf) - back
		if utf8.RuneStart(buf[i]) {
			if utf8.FullRune(buf[i:]) {
				return len(buf)
			}
			return i
		}
	}
	return len(buf)
}
