// Package rpc is gopi's wire layer for stdio clients: the framers (newline
// JSONL and LSP Content-Length), dialect detection, the single ordered
// writer, and pi's native JSONL dialect on top of core/api.
//
// Start with [Detect] on the connection's input, then read records with a
// [LineReader] or [HeaderReader] and write them with a [Writer].
package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxRecord is the largest record gopi reads: 64 MiB, room for prompts
// carrying several large base64 images. A larger record is skipped and
// answered with an error; reading resumes at the next record.
const MaxRecord = 64 << 20

// ErrRecordTooLarge reports a record over the reader's limit. The reader
// has already skipped past it.
type ErrRecordTooLarge struct{ Size, Max int }

func (e *ErrRecordTooLarge) Error() string {
	return fmt.Sprintf("record of at least %d bytes exceeds the %d byte limit", e.Size, e.Max)
}

// LineReader splits a byte stream into records on LF only. A trailing CR
// is removed, a last line without LF is still a record, and Unicode line
// separators (U+2028, U+2029) inside JSON strings never split a record.
// Blank lines are skipped.
type LineReader struct {
	r   *bufio.Reader
	max int
	buf bytes.Buffer
}

// NewLineReader reads records of at most max bytes (0 means [MaxRecord]).
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = MaxRecord
	}
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	return &LineReader{r: br, max: max}
}

// Next returns the next record. The slice is valid until the next call.
// It returns io.EOF at the end of input and *ErrRecordTooLarge for a record
// it skipped; after that error, Next may be called again.
func (l *LineReader) Next() ([]byte, error) {
	for {
		l.buf.Reset()
		tooBig := 0
		for {
			chunk, err := l.r.ReadSlice('\n')
			if tooBig == 0 {
				if l.buf.Len()+len(chunk) > l.max+2 { // +2: the CR LF we strip
					tooBig = l.buf.Len() + len(chunk)
					l.buf.Reset()
				} else {
					l.buf.Write(chunk)
				}
			} else {
				tooBig += len(chunk)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			if tooBig > 0 {
				return nil, &ErrRecordTooLarge{Size: tooBig, Max: l.max}
			}
			line := bytes.TrimSuffix(l.buf.Bytes(), []byte("\n"))
			line = bytes.TrimSuffix(line, []byte("\r"))
			if len(line) > l.max {
				return nil, &ErrRecordTooLarge{Size: len(line), Max: l.max}
			}
			if len(bytes.TrimSpace(line)) == 0 {
				if err != nil { // EOF
					return nil, io.EOF
				}
				break // blank line: read the next one
			}
			return line, nil
		}
	}
}

// HeaderReader reads LSP base-protocol frames: headers ("Content-Length",
// matched case-insensitively; "Content-Type" accepted), a blank line, then
// exactly Content-Length bytes.
type HeaderReader struct {
	r   *bufio.Reader
	max int
	buf []byte
	// resync is set after a header block without a usable length: its
	// body (of unknown size) is still in the stream, so the next frame
	// starts at the next "Content-Length:" header, wherever it is.
	resync bool
}

// MaxHeaderLine caps one header line; the rest of a longer line is
// skipped, and error messages quote only its beginning.
const MaxHeaderLine = 8 << 10

// readLine returns the next line without its line ending, cut to
// MaxHeaderLine bytes (the rest of the line is read and dropped).
func (h *HeaderReader) readLine() (string, error) {
	var line []byte
	for {
		chunk, err := h.r.ReadSlice('\n')
		if room := MaxHeaderLine - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return string(line), err
		}
		return strings.TrimRight(string(line), "\r\n"), nil
	}
}

// quoteStart quotes the beginning of s for an error message.
func quoteStart(s string) string {
	const n = 64
	if len(s) <= n {
		return strconv.Quote(s)
	}
	return strconv.Quote(strings.ToValidUTF8(s[:n], "\uFFFD")) + "…"
}

// NewHeaderReader reads frames of at most max bytes (0 means [MaxRecord]).
func NewHeaderReader(r io.Reader, max int) *HeaderReader {
	if max <= 0 {
		max = MaxRecord
	}
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	return &HeaderReader{r: br, max: max}
}

// ErrBadHeader reports a frame whose headers could not be used; the reader
// has skipped to the end of that header block (and body, if its length was
// known).
type ErrBadHeader struct{ Reason string }

func (e *ErrBadHeader) Error() string { return "bad frame header: " + e.Reason }

// Next returns the next frame's body, valid until the next call. Errors
// *ErrBadHeader and *ErrRecordTooLarge leave the reader at the next frame.
func (h *HeaderReader) Next() ([]byte, error) {
	length := -1
	var bad string
	sawHeader := false
	for {
		line, err := h.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && (h.resync || strings.TrimSpace(line) == "" && !sawHeader) {
				return nil, io.EOF
			}
			if errors.Is(err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if h.resync {
			// Skip the lost body up to the next frame's first header.
			i := strings.Index(strings.ToLower(line), "content-length:")
			if i < 0 {
				continue
			}
			line, h.resync = line[i:], false
		}
		if line == "" {
			if !sawHeader {
				continue // stray blank line between frames
			}
			break
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			bad = fmt.Sprintf("header line %s has no colon", quoteStart(line))
			continue
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "content-length":
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				bad = fmt.Sprintf("invalid Content-Length %s", quoteStart(strings.TrimSpace(value)))
				continue
			}
			length = n
		case "content-type":
			// Accepted; the body is always UTF-8 JSON.
		default:
			// Unknown headers are ignored, as the LSP base protocol allows.
		}
	}
	if length < 0 {
		if bad == "" {
			bad = "missing Content-Length"
		}
		h.resync = true
		return nil, &ErrBadHeader{Reason: bad}
	}
	if length > h.max {
		if _, err := io.CopyN(io.Discard, h.r, int64(length)); err != nil {
			return nil, err
		}
		return nil, &ErrRecordTooLarge{Size: length, Max: h.max}
	}
	if cap(h.buf) < length {
		h.buf = make([]byte, length)
	}
	h.buf = h.buf[:length]
	if _, err := io.ReadFull(h.r, h.buf); err != nil {
		return nil, fmt.Errorf("reading %d byte frame body: %w", length, err)
	}
	if bad != "" {
		return nil, &ErrBadHeader{Reason: bad}
	}
	return h.buf, nil
}

// Framing is how records are delimited on the wire.
type Framing int

const (
	FramingNewline Framing = iota // one JSON value per LF-terminated line
	FramingHeader                 // LSP Content-Length frames
)

// Dialect is the protocol spoken over the framing.
type Dialect int

const (
	DialectPi      Dialect = iota // pi's native JSONL commands
	DialectJSONRPC                // JSON-RPC 2.0
	// DialectACP is the Agent Client Protocol: newline-framed JSON-RPC 2.0
	// whose first message is an initialize with a numeric protocolVersion.
	DialectACP
)

func (d Dialect) String() string {
	switch d {
	case DialectJSONRPC:
		return "jsonrpc"
	case DialectACP:
		return "acp"
	}
	return "pi"
}

// Detection is what [Detect] found.
type Detection struct {
	Framing Framing
	Dialect Dialect
	// Reader continues the input; nothing has been consumed from it
	// except leading white space.
	Reader *bufio.Reader
}

// Detect looks at the first bytes of r: "Content-Length:" means LSP
// framing (and JSON-RPC); a first line holding a JSON object with
// "jsonrpc":"2.0" means newline-delimited JSON-RPC, and ACP when it is an
// initialize request with a numeric params.protocolVersion (LSP's has
// none, MCP's is a date string); anything else is pi's native dialect. It
// reads no further than the first record.
func Detect(r io.Reader) (Detection, error) {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < 64<<10 {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	d := Detection{Reader: br}
	// Skip leading white space without consuming anything else.
	for {
		b, err := br.Peek(1)
		if err != nil {
			return d, err
		}
		if b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n' {
			_, _ = br.ReadByte()
			continue
		}
		break
	}
	head, _ := br.Peek(len("content-length:"))
	if strings.EqualFold(string(head), "content-length:") {
		d.Framing, d.Dialect = FramingHeader, DialectJSONRPC
		return d, nil
	}
	// Newline framing: look at as much of the first line as is buffered.
	// "jsonrpc" is near the start of any real client's first message; a
	// first record larger than the buffer is a pi prompt in practice.
	buf, _ := br.Peek(br.Buffered())
	if len(buf) == 0 {
		buf, _ = br.Peek(1)
	}
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i]
	}
	if isJSONRPC(buf) {
		d.Dialect = DialectJSONRPC
		if isACPInitialize(buf) {
			d.Dialect = DialectACP
		}
	}
	return d, nil
}

// isACPInitialize reports whether line is an ACP initialize request: a
// numeric params.protocolVersion.
func isACPInitialize(line []byte) bool {
	var probe struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion json.RawMessage `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(bytes.TrimSpace(line), &probe) != nil || probe.Method != "initialize" {
		return false
	}
	var n json.Number
	v := bytes.TrimSpace(probe.Params.ProtocolVersion)
	return len(v) > 0 && v[0] != '"' && json.Unmarshal(v, &n) == nil
}

func isJSONRPC(line []byte) bool {
	var probe struct {
		JSONRPC *string `json:"jsonrpc"`
	}
	if json.Unmarshal(bytes.TrimSpace(line), &probe) == nil {
		return probe.JSONRPC != nil && *probe.JSONRPC == "2.0"
	}
	// A line cut by the peek window: fall back to a textual check.
	return bytes.Contains(line, []byte(`"jsonrpc":"2.0"`)) || bytes.Contains(line, []byte(`"jsonrpc": "2.0"`))
}

// appendBufs recycle the buffers Appenders write into.
var appendBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// Writer emits whole records, one at a time, in the order Write is called.
type Writer struct {
	mu      sync.Mutex // serialises records on w; guards err and the batch fields
	w       *bufio.Writer
	framing Framing
	err     error
	gone    chan struct{} // closed at the first write error

	// Batching (see Batch): records gather in pending and one goroutine
	// writes them, as many as have gathered per write.
	batching bool
	pending  []byte
	room     *sync.Cond    // signalled when the writer took pending
	kick     chan struct{} // pending has data (capacity 1)
}

// NewWriter writes records to w with the given framing.
func NewWriter(w io.Writer, f Framing) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), framing: f, gone: make(chan struct{})}
}

// Gone is closed when a write fails: the client closed its end (EPIPE) or
// the output broke otherwise. Nobody will read another record, so the
// server should stop as it does when its input ends.
func (w *Writer) Gone() <-chan struct{} { return w.gone }

// Err is the write error that closed Gone, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Appender is a value that can write its own JSON faster than
// encoding/json; ok false means it cannot this time (use MarshalJSON).
type Appender interface {
	AppendJSON(dst []byte) (out []byte, ok bool)
}

// Encode marshals v (without HTML escaping, as JavaScript's JSON.stringify
// does) and writes it as one record.
func (w *Writer) Encode(v any) error {
	if a, ok := v.(Appender); ok {
		bp := appendBufs.Get().(*[]byte)
		defer appendBufs.Put(bp)
		if b, ok := a.AppendJSON((*bp)[:0]); ok {
			*bp = b
			return w.WriteRecord(b)
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encoding record: %w", err)
	}
	return w.WriteRecord(bytes.TrimRight(b.Bytes(), "\n"))
}

// maxPending bounds the records a batching Writer holds for a slow
// reader; past it WriteRecord waits, so a client that stops reading slows
// gopi down instead of growing its memory.
const maxPending = 1 << 20

// Batch makes w write records from a goroutine of its own, as many as
// have gathered since its last write in one write: a reply streaming
// thousands of events costs a write per burst instead of a write per
// event. WriteRecord then returns once the record is queued (a write
// error shows in Err, Gone and later calls). stop writes what is still
// queued and ends the goroutine; records written after it are written at
// once, as before Batch. The caller owns the goroutine: it must call stop.
func (w *Writer) Batch() (stop func()) {
	w.mu.Lock()
	w.batching = true
	w.room = sync.NewCond(&w.mu)
	w.kick = make(chan struct{}, 1)
	w.mu.Unlock()
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var buf []byte
		for {
			select {
			case <-w.kick:
			case <-quit:
				w.writePending(&buf)
				w.mu.Lock()
				w.batching = false
				w.mu.Unlock()
				return
			}
			w.writePending(&buf)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-done
		})
	}
}

// writePending writes what has gathered; buf is the goroutine's own
// buffer, swapped with pending so records keep gathering meanwhile.
func (w *Writer) writePending(buf *[]byte) {
	for {
		w.mu.Lock()
		if len(w.pending) == 0 || w.err != nil {
			w.mu.Unlock()
			return
		}
		*buf, w.pending = w.pending, (*buf)[:0]
		w.room.Broadcast()
		w.mu.Unlock()
		_, err := w.w.Write(*buf)
		if err == nil {
			err = w.w.Flush()
		}
		if err != nil {
			w.mu.Lock()
			w.fail(err)
			w.room.Broadcast()
			w.mu.Unlock()
			return
		}
	}
}

// fail records the first write error; w.mu is held.
func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
		close(w.gone)
	}
}

// WriteRecord writes one already-encoded JSON value and flushes (or, when
// batching, queues it). After a write error every later call returns it:
// the peer is gone.
func (w *Writer) WriteRecord(rec []byte) error {
	if !utf8.Valid(rec) {
		// A request's bad bytes can come back inside a record (an echoed
		// id, a method name quoted in an error). Everything gopi writes is
		// UTF-8: each invalid run becomes U+FFFD, which keeps the JSON
		// valid since only string contents can hold such bytes.
		rec = bytes.ToValidUTF8(rec, []byte("\uFFFD"))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.batching {
		for len(w.pending) > maxPending && w.err == nil {
			w.room.Wait()
		}
		if w.err != nil {
			return w.err
		}
		// The writer goroutine drains pending until it is empty, so only
		// the first record of a burst needs to wake it.
		wake := len(w.pending) == 0
		if w.framing == FramingHeader {
			w.pending = fmt.Appendf(w.pending, "Content-Length: %d\r\n\r\n", len(rec))
			w.pending = append(w.pending, rec...)
		} else {
			w.pending = append(append(w.pending, rec...), '\n')
		}
		if wake {
			select {
			case w.kick <- struct{}{}:
			default:
			}
		}
		return nil
	}
	if w.framing == FramingHeader {
		fmt.Fprintf(w.w, "Content-Length: %d\r\n\r\n", len(rec))
		w.w.Write(rec)
	} else {
		w.w.Write(rec)
		w.w.WriteByte('\n')
	}
	if err := w.w.Flush(); err != nil {
		w.fail(err)
	}
	return w.err
}
