package tools

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func numbered(n int) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = "line " + strconv.Itoa(i+1)
	}
	return strings.Join(lines, "\n")
}

func TestTruncateHead(t *testing.T) {
	tr := TruncateHead("a\nb", Limits{})
	require.False(t, tr.Truncated)
	require.Equal(t, 2, tr.TotalLines)

	tr = TruncateHead(numbered(10), Limits{MaxLines: 3})
	require.True(t, tr.Truncated)
	require.Equal(t, TruncatedByLines, tr.TruncatedBy)
	require.Equal(t, "line 1\nline 2\nline 3", tr.Content)
	require.Equal(t, 3, tr.OutputLines)
	require.Equal(t, 10, tr.TotalLines)

	tr = TruncateHead("aaaa\nbbbb\ncccc", Limits{MaxBytes: 10})
	require.Equal(t, TruncatedByBytes, tr.TruncatedBy)
	require.Equal(t, "aaaa\nbbbb", tr.Content)

	tr = TruncateHead(strings.Repeat("x", 20)+"\nshort", Limits{MaxBytes: 10})
	require.True(t, tr.FirstLineExceedsLimit)
	require.Empty(t, tr.Content)

	data, err := json.Marshal(TruncateHead("x", Limits{}))
	require.NoError(t, err)
	require.Contains(t, string(data), `"truncatedBy":null`)
}

func TestTruncateTail(t *testing.T) {
	tr := TruncateTail(numbered(10), Limits{MaxLines: 3})
	require.Equal(t, "line 8\nline 9\nline 10", tr.Content)
	require.Equal(t, TruncatedByLines, tr.TruncatedBy)

	tr = TruncateTail("aaaa\nbbbb\ncccc", Limits{MaxBytes: 10})
	require.Equal(t, "bbbb\ncccc", tr.Content)
	require.Equal(t, TruncatedByBytes, tr.TruncatedBy)

	tr = TruncateTail("short\n"+strings.Repeat("é", 10), Limits{MaxBytes: 5})
	require.True(t, tr.LastLinePartial)
	require.Equal(t, "éé", tr.Content) // never half a character

	// A trailing newline ends the last line and starts none: the end of
	// one long line is shown, not an empty line after it.
	tr = TruncateTail("short\n"+strings.Repeat("x", 20)+"\n", Limits{MaxBytes: 5})
	require.True(t, tr.LastLinePartial)
	require.Equal(t, "xxxxx", tr.Content)
	require.Equal(t, 2, tr.TotalLines)
}

func TestTruncateLineAndFormatSize(t *testing.T) {
	s, cut := TruncateLine(strings.Repeat("ü", 600), 500)
	require.True(t, cut)
	require.Equal(t, strings.Repeat("ü", 500)+"... [truncated]", s)
	_, cut = TruncateLine("short", 500)
	require.False(t, cut)
	require.Equal(t, "512B", FormatSize(512))
	require.Equal(t, "50.0KB", FormatSize(MaxBytes))
	require.Equal(t, "1.5MB", FormatSize(1536*1024))
}
