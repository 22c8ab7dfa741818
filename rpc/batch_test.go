package rpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingWriter counts the writes that reach it.
type countingWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	return c.buf.Write(p)
}

// A batching writer keeps every record, in order, and writes bursts of
// them at once; stop writes what is queued; later records are written at
// once.
func TestWriterBatch(t *testing.T) {
	for _, f := range []Framing{FramingNewline, FramingHeader} {
		out := &countingWriter{}
		w := NewWriter(out, f)
		stop := w.Batch()
		const n = 5000
		for i := range n {
			require.NoError(t, w.WriteRecord(fmt.Appendf(nil, `{"n":%d}`, i)))
		}
		stop()
		require.NoError(t, w.WriteRecord([]byte(`{"after":true}`)))
		out.mu.Lock()
		got := out.buf.String()
		writes := out.writes
		out.mu.Unlock()
		var r RecordReader = NewLineReader(strings.NewReader(got), 0)
		if f == FramingHeader {
			r = NewHeaderReader(strings.NewReader(got), 0)
		}
		for i := range n {
			rec, err := r.Next()
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf(`{"n":%d}`, i), string(rec))
		}
		rec, err := r.Next()
		require.NoError(t, err)
		assert.Equal(t, `{"after":true}`, string(rec))
		assert.Less(t, writes, n, "records were written one by one")
	}
}

// A write error closes Gone and fails later records; stop still returns.
func TestWriterBatchError(t *testing.T) {
	pr, pw := io.Pipe()
	pr.CloseWithError(errors.New("reader gone"))
	w := NewWriter(pw, FramingNewline)
	stop := w.Batch()
	defer stop()
	_ = w.WriteRecord([]byte(`{}`))
	select {
	case <-w.Gone():
	case <-time.After(10 * time.Second):
		t.Fatal("Gone not closed after a failed write")
	}
	assert.Error(t, w.WriteRecord([]byte(`{}`)))
	assert.ErrorContains(t, w.Err(), "reader gone")
}

// A reader that stops reading holds the writer back instead of letting
// queued records grow without bound.
func TestWriterBatchBackpressure(t *testing.T) {
	pr, pw := io.Pipe()
	w := NewWriter(pw, FramingNewline)
	stop := w.Batch()
	rec := bytes.Repeat([]byte("x"), 64<<10)
	wrote := make(chan int, 1)
	go func() {
		n := 0
		for n < 200 { // 12.8 MB, far over maxPending
			if w.WriteRecord(rec) != nil {
				break
			}
			n++
		}
		wrote <- n
	}()
	select {
	case n := <-wrote:
		t.Fatalf("all %d records were queued with nobody reading", n)
	case <-time.After(200 * time.Millisecond):
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	select {
	case n := <-wrote:
		assert.Equal(t, 200, n)
	case <-time.After(10 * time.Second):
		t.Fatal("the writer did not resume once the reader read")
	}
	stop()
	pw.Close()
}
