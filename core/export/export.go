// Package export renders a session as one self-contained HTML page (pi's
// /export and the RPC export_html command): no network, no external files,
// readable with JavaScript disabled. Markdown is rendered here, in Go; the
// page template, stylesheet and the small expand/collapse script are
// embedded in the binary.
//
// Call [HTML] to write the page to a writer or [WriteFile] to write it
// atomically to a path; [DefaultFileName] is pi's file name for it.
package export

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/session"
	"github.com/gopi-dev/gopi/internal/atomicfile"
)

// Input is what a page is made of.
type Input struct {
	// Header is the session's header (id, cwd, creation time).
	Header session.Header
	// Entries is the active branch, root first (Store.Path).
	Entries []session.Entry
	// Provider and Model name the model in use at export time.
	Provider string
	Model    string
	// Title heads the page; empty means the session's name, or its id.
	Title string
	// SystemPrompt, when set, is shown collapsed above the conversation.
	SystemPrompt string
}

var (
	//go:embed page.html.tmpl
	pageSource string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string

	// pageTemplate is parsed on first use: gopi's startup does not pay
	// for an export it may never make.
	pageTemplate = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("page").Funcs(template.FuncMap{
			"commas": commas,
			"plural": func(n int, one, many string) string {
				if n == 1 {
					return "1 " + one
				}
				return commas(n) + " " + many
			},
			"dollars": func(v float64) string {
				return fmt.Sprintf("$%.4f", v)
			},
		}).Parse(pageSource))
	})
)

// HTML writes the page for in to w.
func HTML(w io.Writer, in Input) error {
	p := build(in)
	if err := pageTemplate().Execute(w, p); err != nil {
		return fmt.Errorf("render session page: %w", err)
	}
	return nil
}

// WriteFile writes the page for in to path. A new file is written through
// a temporary one, so path never holds half a page, and is 0600 (the page
// holds the conversation, as the session file does); an existing file is
// rewritten in place, keeping its mode, owner, inode and hard links (a
// symlink is written through). A path that is not a regular file (a FIFO,
// a device) is refused.
func WriteFile(path string, in Input) error {
	var b bytes.Buffer
	if err := HTML(&b, in); err != nil {
		return err
	}
	if err := atomicfile.WriteKeepingFilePerm(path, b.Bytes(), ".export-*.html.tmp", 0o600); err != nil {
		return fmt.Errorf("export html to %s: %w", path, err)
	}
	return nil
}

// DefaultFileName is pi's name for an exported session:
// "pi-session-<time>_<id>.html", where <time> is t as an ISO UTC timestamp
// with ':' and '.' replaced by '-'. Pass the header's creation time to get
// the session file's own base name, as pi does.
func DefaultFileName(sessionID string, t time.Time) string {
	ts := strings.NewReplacer(":", "-", ".", "-").Replace(session.FormatTime(t))
	return "pi-session-" + ts + "_" + sessionID + ".html"
}
