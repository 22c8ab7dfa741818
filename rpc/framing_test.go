package rpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readAll(t *testing.T, lr *LineReader) (recs []string, errs []error) {
	t.Helper()
	for {
		rec, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			errs = append(errs, err)
			recs = append(recs, "<err>")
			continue
		}
		recs = append(recs, string(rec))
	}
}

func TestLineReaderSplitsOnLFOnly(t *testing.T) {
	in := "{\"a\":1}\r\n\n{\"s\":\"x\u2028y\u2029z\"}\n{\"last\":true}"
	recs, errs := readAll(t, NewLineReader(strings.NewReader(in), 0))
	require.Empty(t, errs)
	assert.Equal(t, []string{`{"a":1}`, "{\"s\":\"x\u2028y\u2029z\"}", `{"last":true}`}, recs)
}

func TestLineReaderOversizedRecordResyncs(t *testing.T) {
	big := `{"type":"prompt","message":"` + strings.Repeat("x", 5000) + `"}`
	in := `{"n":1}` + "\n" + big + "\n" + `{"n":2}` + "\n"
	// A tiny bufio buffer forces records to span many reads.
	lr := NewLineReader(io.MultiReader(strings.NewReader(in)), 1000)
	recs, errs := readAll(t, lr)
	assert.Equal(t, []string{`{"n":1}`, "<err>", `{"n":2}`}, recs)
	require.Len(t, errs, 1)
	var tl *ErrRecordTooLarge
	require.ErrorAs(t, errs[0], &tl)
	assert.Greater(t, tl.Size, 1000)
}

func TestLineReaderLargeRecordWithinLimit(t *testing.T) {
	big := strings.Repeat("y", 20<<20)
	lr := NewLineReader(strings.NewReader(`{"d":"`+big+`"}`+"\n"), 0)
	rec, err := lr.Next()
	require.NoError(t, err)
	assert.Len(t, rec, len(big)+8)
}

func TestHeaderReader(t *testing.T) {
	body1 := `{"jsonrpc":"2.0","id":1,"method":"initialize"}`
	body2 := `{"jsonrpc":"2.0","method":"initialized"}`
	in := "content-length: " + itoa(len(body1)) + "\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body1 +
		"Content-Length: x\r\n\r\n" +
		"Content-Length: " + itoa(len(body2)) + "\r\n\r\n" + body2
	hr := NewHeaderReader(strings.NewReader(in), 0)
	b, err := hr.Next()
	require.NoError(t, err)
	assert.Equal(t, body1, string(b))
	_, err = hr.Next()
	var bad *ErrBadHeader
	require.ErrorAs(t, err, &bad)
	b, err = hr.Next()
	require.NoError(t, err)
	assert.Equal(t, body2, string(b))
	_, err = hr.Next()
	assert.ErrorIs(t, err, io.EOF)
}

func TestHeaderReaderTooLarge(t *testing.T) {
	in := "Content-Length: 50\r\n\r\n" + strings.Repeat("z", 50) + "Content-Length: 2\r\n\r\n{}"
	hr := NewHeaderReader(strings.NewReader(in), 10)
	_, err := hr.Next()
	var tl *ErrRecordTooLarge
	require.ErrorAs(t, err, &tl)
	b, err := hr.Next()
	require.NoError(t, err)
	assert.Equal(t, "{}", string(b))
}

func TestDetect(t *testing.T) {
	cases := []struct {
		in      string
		framing Framing
		dialect Dialect
	}{
		{"Content-Length: 2\r\n\r\n{}", FramingHeader, DialectJSONRPC},
		{"\n  CONTENT-LENGTH: 2\r\n\r\n{}", FramingHeader, DialectJSONRPC},
		{`{"jsonrpc":"2.0","id":1,"method":"pi/get_state"}` + "\n", FramingNewline, DialectJSONRPC},
		{`{"type":"get_state"}` + "\n", FramingNewline, DialectPi},
		{`{"type":"prompt","message":"say \"jsonrpc\":\"2.0\""}` + "\n", FramingNewline, DialectPi},
		{`not json` + "\n", FramingNewline, DialectPi},
		// ACP: initialize with a numeric protocolVersion.
		{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n", FramingNewline, DialectACP},
		// MCP's protocolVersion is a date string; LSP's initialize has none.
		{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}` + "\n", FramingNewline, DialectJSONRPC},
		{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":1,"rootUri":null,"capabilities":{}}}` + "\n", FramingNewline, DialectJSONRPC},
		{`{"jsonrpc":"2.0","id":0,"method":"session/new","params":{"protocolVersion":1}}` + "\n", FramingNewline, DialectJSONRPC},
	}
	for _, c := range cases {
		d, err := Detect(strings.NewReader(c.in))
		require.NoError(t, err, c.in)
		assert.Equal(t, c.framing, d.Framing, c.in)
		assert.Equal(t, c.dialect, d.Dialect, c.in)
		// Nothing but leading white space was consumed.
		rest, _ := io.ReadAll(d.Reader)
		assert.Equal(t, strings.TrimLeft(c.in, " \r\n\t"), string(rest))
	}
}

func TestWriterKeepsRecordsWhole(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, FramingNewline)
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = w.Encode(map[string]string{"k": strings.Repeat("v", 1000), "html": "<&>"})
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 50)
	for _, l := range lines {
		assert.Contains(t, l, `"html":"<&>"`)
	}
	var hb bytes.Buffer
	require.NoError(t, NewWriter(&hb, FramingHeader).WriteRecord([]byte(`{}`)))
	assert.Equal(t, "Content-Length: 2\r\n\r\n{}", hb.String())
}

func itoa(n int) string { return strconv.Itoa(n) }

// Issue 17: a header line is capped (8 KiB) and never quoted whole; a
// frame whose Content-Length cannot be read is reported and reading
// resynchronises on the next Content-Length header, even when the lost
// body runs straight into it.
func TestHeaderReaderCapsLinesAndResyncs(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":2,"method":"ok"}`
	input := strings.Repeat("x", 200<<10) + "\r\n\r\n" +
		"Content-Length: abc\r\n\r\n" + `{"jsonrpc":"2.0","id":1,"method":"lost"}` +
		fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(good), good) +
		"Content-Length: 1x\r\n\r\n{}\n" +
		fmt.Sprintf("content-length: %d\r\n\r\n%s", len(good), good)
	h := NewHeaderReader(strings.NewReader(input), 0)

	_, err := h.Next()
	var bad *ErrBadHeader
	require.ErrorAs(t, err, &bad)
	assert.Less(t, len(err.Error()), 200, "the error quotes only the line's beginning")

	_, err = h.Next()
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), `invalid Content-Length "abc"`)

	body, err := h.Next()
	require.NoError(t, err)
	assert.Equal(t, good, string(body))

	_, err = h.Next()
	require.ErrorAs(t, err, &bad)
	body, err = h.Next()
	require.NoError(t, err)
	assert.Equal(t, good, string(body))

	_, err = h.Next()
	assert.ErrorIs(t, err, io.EOF)
}
