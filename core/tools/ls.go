package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// LsDetails is the details object of an ls result.
type LsDetails struct {
	Truncation        *Truncation `json:"truncation,omitempty"`
	EntryLimitReached int         `json:"entryLimitReached,omitempty"`
}

const lsDefaultLimit = 500

type lsTool struct {
	prompter
	cwd string
	c   *config
}

var (
	_ agent.Tool = (*lsTool)(nil)
	_ Prompter   = (*lsTool)(nil)
)

const lsSchema = `{
	"type": "object",
	"properties": {
		"path": {"type": "string", "description": "Directory to list (defaults to the working directory)"},
		"limit": {"type": "number", "description": "Most entries to return (default 500)"}
	}
}`

func (t *lsTool) Spec() llm.ToolSpec { return spec(NameLs, lsSchema) }

type lsArgs struct {
	Path  string   `json:"path"`
	Limit *float64 `json:"limit"`
}

func (t *lsTool) Run(ctx context.Context, call agent.Call, _ func(agent.Result)) (agent.Result, error) {
	var a lsArgs
	if r, ok := decodeArgs(call, &a); !ok {
		return r, nil
	}
	if ctx.Err() != nil {
		return agent.ErrorResult("Operation aborted"), nil
	}
	p := a.Path
	if p == "" {
		p = "."
	}
	dir := ResolvePath(p, t.cwd)
	limit := lsDefaultLimit
	if l, ok := intArg(a.Limit); ok {
		limit = l
	}
	info, err := t.c.fs.Stat(ctx, dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return agent.ErrorResult("Path not found: %s", dir), nil
	case err != nil:
		return agent.ErrorResult("Cannot read directory: %v", err), nil
	case !info.IsDir():
		return agent.ErrorResult("Not a directory: %s", dir), nil
	}
	entries, err := t.c.fs.ReadDir(ctx, dir)
	if err != nil {
		return agent.ErrorResult("Cannot read directory: %v", err), nil
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	sort.SliceStable(names, func(i, j int) bool {
		li, lj := strings.ToLower(names[i]), strings.ToLower(names[j])
		if li != lj {
			return li < lj
		}
		return names[i] < names[j]
	})
	var out []string
	limitReached := false
	for _, name := range names {
		if len(out) >= limit {
			limitReached = true
			break
		}
		// Stat follows symlinks, so a link to a directory lists as one;
		// entries that cannot be stat'ed (dangling links) are left out.
		st, err := t.c.fs.Stat(ctx, filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if st.IsDir() {
			name += "/"
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return agent.TextResult("(empty directory)"), nil
	}
	tr := TruncateHead(strings.Join(out, "\n"), Limits{MaxLines: unlimitedLines})
	var d LsDetails
	var notices []string
	if limitReached {
		notices = append(notices, fmt.Sprintf("Stopped at the limit of %d entries. Use limit=%d to see more", limit, limit*2))
		d.EntryLimitReached = limit
	}
	if tr.Truncated {
		notices = append(notices, fmt.Sprintf("Output cut at the %s limit", FormatSize(MaxBytes)))
		d.Truncation = &tr
	}
	res := agent.TextResult(withNotices(tr.Content, notices))
	if len(notices) > 0 {
		res.Details = d
	}
	return res, nil
}
