package host

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/export"
	"github.com/gopi-dev/gopi/core/session"
)

// ExportHTML writes the active branch as one self-contained HTML page and
// returns its absolute path. Without p.OutputPath the page goes to the
// cwd, named after the session file as pi names it
// ("pi-session-<file name>.html"; an in-memory session uses the name its
// file would have had). A relative p.OutputPath is taken from the cwd.
// Unlike pi, an in-memory session can be exported too.
func (h *Host) ExportHTML(_ context.Context, p api.ExportParams) (api.PathResult, error) {
	st := h.Store()
	if !hasMessage(st.Entries()) {
		return api.PathResult{}, errNothingToExport
	}
	header := st.Header()
	path := p.OutputPath
	if path == "" {
		path = defaultExportName(st.File(), header)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(h.opts.Cwd, path)
	}
	// A page written over a session file would leave a file that no
	// longer opens (or, for this session's file not written yet, one it
	// can no longer be saved to).
	if path == st.File() || session.IsSessionFile(path) {
		return api.PathResult{}, fmt.Errorf("refusing to export over the session file %s", path)
	}
	in := export.Input{
		Header:       header,
		Entries:      st.Path(),
		Title:        st.Name(),
		SystemPrompt: h.agent.SystemPrompt(),
	}
	if m := h.agent.Model(); m != nil {
		in.Provider, in.Model = m.Provider, m.ID
	}
	if err := export.WriteFile(path, in); err != nil {
		return api.PathResult{}, err
	}
	return api.PathResult{Path: path}, nil
}

// defaultExportName is pi's "pi-session-<session file base name>.html";
// for a session without a file it is built from the header, which gives
// the same name a file of this session would.
func defaultExportName(file string, h session.Header) string {
	if file != "" {
		return "pi-session-" + strings.TrimSuffix(filepath.Base(file), ".jsonl") + ".html"
	}
	created, err := time.Parse(time.RFC3339Nano, h.Timestamp)
	if err != nil {
		created = time.Now()
	}
	return export.DefaultFileName(h.ID, created)
}

func hasMessage(entries []session.Entry) bool {
	for _, e := range entries {
		if _, ok := e.(*session.MessageEntry); ok {
			return true
		}
	}
	return false
}
