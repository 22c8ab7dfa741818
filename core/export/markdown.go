package export

import (
	"bytes"
	"html/template"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// md renders message markdown. Raw HTML stays off (goldmark's default):
// our own node renderer below shows it as escaped text instead of dropping
// it, and keeps remote images from turning into network requests.
// It is built on first use.
var md = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithRendererOptions(
			// Chat text means its single newlines.
			html.WithHardWraps(),
			renderer.WithNodeRenderers(util.Prioritized(offlineRenderer{}, 100)),
		),
	)
})

// markdown renders src to HTML that is safe to embed in the page.
func markdown(src string) template.HTML {
	var b bytes.Buffer
	if err := md().Convert([]byte(src), &b); err != nil {
		// goldmark only fails on a failing writer; a bytes.Buffer does
		// not. Fall back to the escaped source rather than lose it.
		return template.HTML("<pre>" + template.HTMLEscapeString(src) + "</pre>")
	}
	return template.HTML(b.String()) //nolint:gosec // goldmark output without unsafe mode
}

// offlineRenderer overrides three of goldmark's HTML renderers (it wins by
// its lower priority number):
//   - raw HTML, inline or as a block, is written as escaped text, so a
//     message that says "<script>" reads as it was written;
//   - an image is embedded only when it is a data: URI of an image type
//     goldmark considers safe; any other image becomes a link to its
//     address, so opening the page never touches the network.
type offlineRenderer struct{}

func (offlineRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
	reg.Register(ast.KindImage, renderImage)
}

func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.RawHTML)
	for i := range n.Segments.Len() {
		seg := n.Segments.At(i)
		_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
	}
	return ast.WalkSkipChildren, nil
}

func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.HTMLBlock)
	if entering {
		_, _ = w.WriteString(`<pre class="raw-html">`)
		for i := range n.Lines().Len() {
			line := n.Lines().At(i)
			_, _ = w.Write(util.EscapeHTML(line.Value(source)))
		}
		return ast.WalkContinue, nil
	}
	if n.HasClosure() {
		_, _ = w.Write(util.EscapeHTML(n.ClosureLine.Value(source)))
	}
	_, _ = w.WriteString("</pre>\n")
	return ast.WalkContinue, nil
}

func renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Image)
	dest := util.URLEscape(n.Destination, true)
	embedded := bytes.HasPrefix(bytes.ToLower(dest), []byte("data:image/")) && !html.IsDangerousURL(dest)
	if embedded {
		if !entering {
			return ast.WalkContinue, nil
		}
		_, _ = w.WriteString(`<img src="`)
		_, _ = w.Write(util.EscapeHTML(dest))
		_, _ = w.WriteString(`" alt="`)
		_, _ = w.Write(util.EscapeHTML(plainText(n, source)))
		_, _ = w.WriteString(`">`)
		return ast.WalkSkipChildren, nil
	}
	// A remote (or unsafe) image: its alt text, linked when the address is
	// one a reader may follow.
	link := !html.IsDangerousURL(dest) && len(dest) > 0
	if entering {
		if link {
			_, _ = w.WriteString(`<a class="remote-image" href="`)
			_, _ = w.Write(util.EscapeHTML(dest))
			_, _ = w.WriteString(`">`)
		}
		_, _ = w.WriteString("[image: ")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("]")
	if link {
		_, _ = w.WriteString("</a>")
	}
	return ast.WalkContinue, nil
}

// plainText collects the text below n (an image's alt text).
func plainText(n ast.Node, source []byte) []byte {
	var b bytes.Buffer
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(source))
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.Bytes()
}
