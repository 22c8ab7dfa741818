package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gopi-dev/gopi/core/export"
	"github.com/gopi-dev/gopi/core/session"
	"github.com/gopi-dev/gopi/internal/homedir"
)

// runExport is --export <session file> [output]: the session as one HTML
// page, then exit. Without an output the page is
// "pi-session-<file name without .jsonl>.html" in the cwd, as pi names
// it; the page shows the branch the file ends on.
func runExport(a *args, stdout, stderr io.Writer) int {
	in := homedir.Expand(a.export)
	if abs, err := filepath.Abs(in); err == nil {
		in = abs
	}
	if _, err := os.Stat(in); err != nil {
		fmt.Fprintf(stderr, "gopi: export: %v\n", err)
		return 1
	}
	st, _, err := session.Open(in)
	if err != nil {
		fmt.Fprintf(stderr, "gopi: export: opening session %s: %v\n", in, err)
		return 1
	}
	out := "pi-session-" + strings.TrimSuffix(filepath.Base(in), ".jsonl") + ".html"
	if len(a.messages) > 0 {
		out = homedir.Expand(a.messages[0])
	}
	page := export.Input{Header: st.Header(), Entries: st.Path(), Title: st.Name()}
	if m := st.Context().Model; m != nil {
		page.Provider, page.Model = m.Provider, m.ModelID
	}
	if err := export.WriteFile(out, page); err != nil {
		fmt.Fprintln(stderr, "gopi: export:", err)
		return 1
	}
	fmt.Fprintln(stdout, "Exported to:", out)
	return 0
}
