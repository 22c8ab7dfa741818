package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// ReadDetails is the details object of a read result.
type ReadDetails struct {
	Truncation *Truncation `json:"truncation,omitempty"`
}

type readTool struct {
	prompter
	cwd string
	c   *config
}

var (
	_ agent.Tool = (*readTool)(nil)
	_ Prompter   = (*readTool)(nil)
)

const readSchema = `{
	"type": "object",
	"properties": {
		"path": {"type": "string", "description": "File to read, relative to the working directory or absolute"},
		"offset": {"type": "number", "description": "First line to return, counting from 1"},
		"limit": {"type": "number", "description": "Most lines to return"}
	},
	"required": ["path"]
}`

func (t *readTool) Spec() llm.ToolSpec { return spec(NameRead, readSchema) }

type readArgs struct {
	Path   string   `json:"path"`
	Offset *float64 `json:"offset"`
	Limit  *float64 `json:"limit"`
}

func (t *readTool) Run(ctx context.Context, call agent.Call, _ func(agent.Result)) (agent.Result, error) {
	var a readArgs
	if r, ok := decodeArgs(call, &a); !ok {
		return r, nil
	}
	if ctx.Err() != nil {
		return agent.ErrorResult("Operation aborted"), nil
	}
	abs := resolveExisting(ctx, t.c.fs, a.Path, t.cwd)
	info, err := t.c.fs.Stat(ctx, abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return agent.ErrorResult("File not found: %s", a.Path), nil
	case err != nil:
		return agent.ErrorResult("Cannot read %s: %v", a.Path, err), nil
	case info.IsDir():
		return agent.ErrorResult("%s is a directory, not a file. Use ls to see what it contains.", a.Path), nil
	}
	data, err := t.c.fs.ReadFile(ctx, abs)
	if err != nil {
		return agent.ErrorResult("Cannot read %s: %v", a.Path, err), nil
	}
	if ctx.Err() != nil {
		return agent.ErrorResult("Operation aborted"), nil
	}
	if mime := sniffImage(data); mime != "" {
		return t.image(data, mime), nil
	}
	return readText(string(data), a), nil
}

// readText renders the requested window of a text file with the note that
// tells the model how to go on.
func readText(content string, a readArgs) agent.Result {
	content = strings.ToValidUTF8(content, "\uFFFD")
	lines := strings.Split(content, "\n")
	offset, _ := intArg(a.Offset)
	start := max(0, offset-1)
	if start >= len(lines) {
		return agent.ErrorResult("Offset %d is beyond the end of the file (%d lines in total)", offset, len(lines))
	}
	selected := lines[start:]
	limit, limited := intArg(a.Limit)
	if limited {
		end := min(len(lines), max(start, start+limit))
		selected = lines[start:end]
	}
	tr := TruncateHead(strings.Join(selected, "\n"), Limits{})
	first := start + 1
	switch {
	case tr.FirstLineExceedsLimit:
		text := fmt.Sprintf("[Line %d is %s, over the %s limit. Read it with bash: sed -n '%dp' %s | head -c %d]",
			first, FormatSize(len(lines[start])), FormatSize(MaxBytes), first, a.Path, MaxBytes)
		return agent.Result{Content: llm.Contents{llm.TextContent{Text: text}}, Details: ReadDetails{Truncation: &tr}}
	case tr.Truncated:
		last := first + tr.OutputLines - 1
		limitNote := ""
		if tr.TruncatedBy == TruncatedByBytes {
			limitNote = fmt.Sprintf(" (%s limit)", FormatSize(MaxBytes))
		}
		text := fmt.Sprintf("%s\n\n[Showing lines %d-%d of %d%s. Use offset=%d to continue.]",
			tr.Content, first, last, len(lines), limitNote, last+1)
		return agent.Result{Content: llm.Contents{llm.TextContent{Text: text}}, Details: ReadDetails{Truncation: &tr}}
	case limited && start+len(selected) < len(lines):
		rest := len(lines) - (start + len(selected))
		next := start + len(selected) + 1
		return agent.TextResult(fmt.Sprintf("%s\n\n[%d more lines in file. Use offset=%d to continue.]", tr.Content, rest, next))
	}
	return agent.TextResult(tr.Content)
}
