package tools

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

func TestReadSmallFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), "one\ntwo\nthree\n")
	res := run(t, dir, "read", map[string]any{"path": "a.txt"})
	require.False(t, res.IsError)
	require.Equal(t, "one\ntwo\nthree\n", text(res))
	require.Nil(t, res.Details)
}

func TestReadTruncatesAndContinues(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "big.txt"), numbered(2500))

	res := run(t, dir, "read", map[string]any{"path": "big.txt"})
	require.False(t, res.IsError)
	out := text(res)
	require.True(t, strings.HasPrefix(out, "line 1\n"))
	require.Contains(t, out, "line 2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]")
	require.NotContains(t, out, "line 2001")
	d := res.Details.(ReadDetails)
	require.Equal(t, TruncatedByLines, d.Truncation.TruncatedBy)

	res = run(t, dir, "read", map[string]any{"path": "big.txt", "offset": 2001})
	require.Equal(t, numbered(2500)[len(numbered(2000))+1:], text(res))

	res = run(t, dir, "read", map[string]any{"path": "big.txt", "offset": 10, "limit": 3})
	require.Equal(t, "line 10\nline 11\nline 12\n\n[2488 more lines in file. Use offset=13 to continue.]", text(res))

	res = run(t, dir, "read", map[string]any{"path": "big.txt", "offset": 3000})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "2500 lines")
}

func TestReadByteLimit(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("x", 99)
	var b strings.Builder
	for range 1000 {
		b.WriteString(line + "\n")
	}
	writeFile(t, filepath.Join(dir, "wide.txt"), b.String())
	res := run(t, dir, "read", map[string]any{"path": "wide.txt"})
	out := text(res)
	// 50KB holds 512 lines of 100 bytes (the last without its newline).
	require.Contains(t, out, "[Showing lines 1-512 of 1001 (50.0KB limit). Use offset=513 to continue.]")

	writeFile(t, filepath.Join(dir, "oneline.txt"), strings.Repeat("y", 60*1024))
	res = run(t, dir, "read", map[string]any{"path": "oneline.txt"})
	require.Contains(t, text(res), "Line 1 is 60.0KB")
	require.Contains(t, text(res), "sed -n '1p' oneline.txt")
	require.True(t, res.Details.(ReadDetails).Truncation.FirstLineExceedsLimit)
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	res := run(t, dir, "read", map[string]any{"path": "missing.txt"})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "not found")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	res = run(t, dir, "read", map[string]any{"path": "sub"})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "directory")
}

func TestReadAtAndHomePaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeFile(t, filepath.Join(home, "notes.md"), "from home")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "here.md"), "from cwd")
	require.Equal(t, "from home", text(run(t, dir, "read", map[string]any{"path": "~/notes.md"})))
	require.Equal(t, "from cwd", text(run(t, dir, "read", map[string]any{"path": "@here.md"})))
	require.Equal(t, "from cwd", text(run(t, dir, "read", map[string]any{"path": filepath.Join(dir, "here.md")})))
}

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 200, 255})
		}
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

func TestReadImage(t *testing.T) {
	dir := t.TempDir()
	data := pngBytes(t, 4, 3)
	// The name says text; the content decides.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pic.dat"), data, 0o644))
	res := run(t, dir, "read", map[string]any{"path": "pic.dat"})
	require.False(t, res.IsError)
	require.Len(t, res.Content, 2)
	require.Equal(t, "Read image file [image/png]", res.Content[0].(llm.TextContent).Text)
	img := res.Content[1].(llm.ImageContent)
	require.Equal(t, "image/png", img.MimeType)
	require.Equal(t, base64.StdEncoding.EncodeToString(data), img.Data)
}

func TestReadImageResized(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "wide.png"), pngBytes(t, 2400, 10), 0o644))
	res := run(t, dir, "read", map[string]any{"path": "wide.png"})
	require.Len(t, res.Content, 2)
	note := res.Content[0].(llm.TextContent).Text
	require.Contains(t, note, "original 2400x10, displayed at 2000x8")
	img := res.Content[1].(llm.ImageContent)
	raw, err := base64.StdEncoding.DecodeString(img.Data)
	require.NoError(t, err)
	cfg, _, err := image.DecodeConfig(bytes.NewReader(raw))
	require.NoError(t, err)
	require.Equal(t, fmt.Sprint(2000, 8), fmt.Sprint(cfg.Width, cfg.Height))

	res = run(t, dir, "read", map[string]any{"path": "wide.png"}, WithoutImageResize())
	require.Equal(t, "Read image file [image/png]", res.Content[0].(llm.TextContent).Text)
}

// A read that succeeds carries its output as structured content (pi 1.5):
// the text the model reads, notes included, or the image with its note;
// a failed one carries none.
func TestReadStructuredContent(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), "one\ntwo\nthree\n")
	res := run(t, dir, "read", map[string]any{"path": "a.txt"})
	require.Equal(t, "one\ntwo\nthree\n", res.StructuredContent)

	res = run(t, dir, "read", map[string]any{"path": "a.txt", "limit": 1})
	require.Equal(t, text(res), res.StructuredContent)
	require.Contains(t, res.StructuredContent, "more lines in file")

	writeFile(t, filepath.Join(dir, "empty.txt"), "")
	res = run(t, dir, "read", map[string]any{"path": "empty.txt"})
	require.Equal(t, "", res.StructuredContent)
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	require.Contains(t, string(raw), `"structuredContent":""`)

	data := pngBytes(t, 4, 3)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pic.png"), data, 0o644))
	res = run(t, dir, "read", map[string]any{"path": "pic.png"})
	require.Equal(t, ReadImage{Type: "image", Data: base64.StdEncoding.EncodeToString(data), MimeType: "image/png", Note: "Read image file [image/png]"}, res.StructuredContent)
	raw, err = json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.JSONEq(t, fmt.Sprintf(`{"type":"image","data":%q,"mimeType":"image/png","note":"Read image file [image/png]"}`, base64.StdEncoding.EncodeToString(data)), string(raw))

	for _, args := range []map[string]any{{"path": "missing.txt"}, {"path": "a.txt", "offset": 99}, {"nopath": true}} {
		res = run(t, dir, "read", args)
		require.True(t, res.IsError)
		require.Nil(t, res.StructuredContent, "%v", args)
	}
}
