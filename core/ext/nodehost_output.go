package ext

// This file owns the host's own output: copied to the log a line at a
// time, its tail kept for the report of a failed load or a crash.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync"
)

func tailNote(t *tailWriter) string {
	if s := t.String(); s != "" {
		return "; its last output: " + s
	}
	return ""
}

// lineWriter writes whole lines to w with a prefix.
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (l *lineWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, b...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		_, _ = fmt.Fprintf(l.w, "%s%s\n", l.prefix, l.buf[:i])
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 64<<10 { // a huge line without a newline
		_, _ = fmt.Fprintf(l.w, "%s%s\n", l.prefix, l.buf)
		l.buf = l.buf[:0]
	}
	return len(b), nil
}

// tailWriter keeps the last max bytes written.
type tailWriter struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(b), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := bytes.TrimSpace(t.b)
	// The last few lines are what says why.
	sc := bufio.NewScanner(bytes.NewReader(s))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > 6 {
		lines = lines[len(lines)-6:]
	}
	return string(bytes.Join(toBytes(lines), []byte(" | ")))
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
