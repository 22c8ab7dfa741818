package rpc

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// Issue 17: the readers meet whatever a client sends. Whatever the bytes,
// they never panic, never return a record over the limit, always come to
// an end, and a record they return holds no framing.

const fuzzMax = 256 // small, so the fuzzer reaches the too-large paths

func FuzzLineReader(f *testing.F) {
	for _, s := range []string{
		"{\"type\":\"get_state\"}\n", "a\r\nb\n\nc", "\n\n\n", "\xff\xfe\n", string(bytes.Repeat([]byte("x"), 300)) + "\nok\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewLineReader(bytes.NewReader(data), fuzzMax)
		read := 0
		for range len(data) + 2 {
			rec, err := r.Next()
			var tooLarge *ErrRecordTooLarge
			switch {
			case errors.Is(err, io.EOF):
				return
			case errors.As(err, &tooLarge):
				continue
			case err != nil:
				t.Fatalf("unexpected error: %v", err)
			}
			if len(rec) > fuzzMax {
				t.Fatalf("a record of %d bytes passed the %d-byte limit", len(rec), fuzzMax)
			}
			if bytes.IndexByte(rec, '\n') >= 0 {
				t.Fatalf("a record holds a newline: %q", rec)
			}
			read += len(rec)
			if read > len(data) {
				t.Fatalf("read %d bytes of records from %d bytes of input", read, len(data))
			}
		}
		t.Fatalf("the reader did not reach the end of %d bytes", len(data))
	})
}

func FuzzHeaderReader(f *testing.F) {
	for _, s := range []string{
		"Content-Length: 2\r\n\r\n{}",
		"Content-Length: abc\r\n\r\n{}Content-Length: 2\r\n\r\n{}",
		"content-length:5\n\n{\"a\"}",
		"Content-Type: x\r\nContent-Length: 3\r\n\r\n[1]",
		"Content-Length: 999999999999\r\n\r\n",
		"Content-Length: -1\r\n\r\n",
		"no header at all\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewHeaderReader(bytes.NewReader(data), fuzzMax)
		for range len(data) + 2 {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return
			}
			if err != nil {
				continue // a bad frame is reported and the reader goes on
			}
			if len(rec) > fuzzMax {
				t.Fatalf("a frame of %d bytes passed the %d-byte limit", len(rec), fuzzMax)
			}
		}
		t.Fatalf("the reader did not reach the end of %d bytes", len(data))
	})
}
