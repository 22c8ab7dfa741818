package tools

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // decoder for resizing
	"image/jpeg"
	"image/png"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// Image limits (pi's): the longest side a model gets, and the largest
// base64 payload (below Anthropic's 5 MB).
const (
	maxImageSide   = 2000
	maxImageBase64 = 4.5 * 1024 * 1024
)

// sniffImage returns the MIME type of the image formats models accept, by
// content, or "" for anything else.
func sniffImage(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}):
		return "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// image returns an image file as an image block with a short text note,
// scaled down first when it is too big for a model.
func (t *readTool) image(data []byte, mime string) agent.Result {
	encoded := base64.StdEncoding.EncodeToString(data)
	note := fmt.Sprintf("Read image file [%s]", mime)
	if !t.c.noImageResize {
		fitted, ok := fitImage(data, mime, encoded)
		if !ok {
			return agent.TextResult(note + "\n[Image omitted: it could not be made small enough to send inline.]")
		}
		if fitted.resized {
			note = fmt.Sprintf("Read image file [%s]\n[Image: original %dx%d, displayed at %dx%d. Multiply coordinates by %.2f to map to original image.]",
				fitted.mime, fitted.origW, fitted.origH, fitted.w, fitted.h, float64(fitted.origW)/float64(fitted.w))
		}
		encoded, mime = fitted.data, fitted.mime
	}
	return agent.Result{Content: llm.Contents{
		llm.TextContent{Text: note},
		llm.ImageContent{Data: encoded, MimeType: mime},
	}}
}

type fittedImage struct {
	data, mime   string
	origW, origH int
	w, h         int
	resized      bool
}

// maxDecodePixels is the largest picture gopi decodes to scale it down
// (about 200 MB as RGBA); a larger one is omitted from the result.
const maxDecodePixels = 50_000_000

// fitImage keeps an image within maxImageSide and maxImageBase64: as is
// when it already fits, else scaled down and re-encoded as PNG or JPEG,
// whichever fits first, shrinking further until one does. ok is false when
// nothing fits or the format cannot be decoded (WebP, which the standard
// library does not read, passes only when it already fits by size).
func fitImage(data []byte, mime, encoded string) (fittedImage, bool) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		if mime == "image/webp" && len(encoded) < maxImageBase64 {
			return fittedImage{data: encoded, mime: mime}, true
		}
		return fittedImage{}, false
	}
	f := fittedImage{data: encoded, mime: mime, origW: cfg.Width, origH: cfg.Height, w: cfg.Width, h: cfg.Height}
	if cfg.Width <= maxImageSide && cfg.Height <= maxImageSide && len(encoded) < maxImageBase64 {
		return f, true
	}
	if int64(cfg.Width)*int64(cfg.Height) > maxDecodePixels {
		// A small file can declare a huge picture; decoding it would take
		// width × height × 4 bytes of memory.
		return fittedImage{}, false
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return fittedImage{}, false
	}
	w, h := cfg.Width, cfg.Height
	if w > maxImageSide {
		h, w = max(1, h*maxImageSide/w), maxImageSide
	}
	if h > maxImageSide {
		w, h = max(1, w*maxImageSide/h), maxImageSide
	}
	for {
		scaled := scaleImage(src, w, h)
		for _, c := range encodings(scaled) {
			if len(c.data) < maxImageBase64 {
				f.data, f.mime, f.w, f.h, f.resized = c.data, c.mime, w, h, true
				return f, true
			}
		}
		if w == 1 && h == 1 {
			return fittedImage{}, false
		}
		w, h = max(1, w*3/4), max(1, h*3/4)
	}
}

type encodedImage struct{ data, mime string }

// encodings yields img as PNG, then as JPEG at falling qualities.
func encodings(img image.Image) []encodedImage {
	var out []encodedImage
	var buf bytes.Buffer
	if png.Encode(&buf, img) == nil {
		out = append(out, encodedImage{base64.StdEncoding.EncodeToString(buf.Bytes()), "image/png"})
	}
	for _, q := range []int{80, 85, 70, 55, 40} {
		buf.Reset()
		if jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}) == nil {
			out = append(out, encodedImage{base64.StdEncoding.EncodeToString(buf.Bytes()), "image/jpeg"})
		}
	}
	return out
}

// scaleImage shrinks src to w×h by averaging the source pixels each
// target pixel covers (a box filter, good enough for downscaling).
func scaleImage(src image.Image, w, h int) image.Image {
	b := src.Bounds()
	rgba := image.NewRGBA(b)
	draw.Draw(rgba, b, src, b.Min, draw.Src)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	sw, sh := b.Dx(), b.Dy()
	for y := range h {
		y0, y1 := y*sh/h, max((y+1)*sh/h, y*sh/h+1)
		for x := range w {
			x0, x1 := x*sw/w, max((x+1)*sw/w, x*sw/w+1)
			var r, g, bl, a, n uint64
			for sy := y0; sy < y1; sy++ {
				row := rgba.Pix[sy*rgba.Stride:]
				for sx := x0; sx < x1; sx++ {
					p := row[sx*4 : sx*4+4]
					r, g, bl, a = r+uint64(p[0]), g+uint64(p[1]), bl+uint64(p[2]), a+uint64(p[3])
					n++
				}
			}
			dst.SetRGBA(x, y, color.RGBA{uint8(r / n), uint8(g / n), uint8(bl / n), uint8(a / n)})
		}
	}
	return dst
}
