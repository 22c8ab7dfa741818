package tools

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

type writeTool struct {
	prompter
	cwd string
	c   *config
}

var (
	_ agent.Tool = (*writeTool)(nil)
	_ Prompter   = (*writeTool)(nil)
)

const writeSchema = `{
	"type": "object",
	"properties": {
		"path": {"type": "string", "description": "File to write, relative to the working directory or absolute"},
		"content": {"type": "string", "description": "The complete new content of the file"}
	},
	"required": ["path", "content"]
}`

func (t *writeTool) Spec() llm.ToolSpec { return spec(NameWrite, writeSchema) }

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (t *writeTool) Run(ctx context.Context, call agent.Call, _ func(agent.Result)) (agent.Result, error) {
	var a writeArgs
	if r, ok := decodeArgs(call, &a); !ok {
		return r, nil
	}
	abs := ResolvePath(a.Path, t.cwd)
	unlock := lockFile(abs)
	defer unlock()
	if ctx.Err() != nil {
		return agent.ErrorResult("Operation aborted"), nil
	}
	if err := t.c.checkWrite(abs); err != nil {
		return agent.ErrorResult("Cannot write %s: %v; nothing was written.", a.Path, err), nil
	}
	if err := t.c.fs.MkdirAll(ctx, filepath.Dir(abs)); err != nil {
		return agent.ErrorResult("Cannot create the directory for %s: %v", a.Path, err), nil
	}
	if err := t.c.fs.WriteFile(ctx, abs, []byte(a.Content)); err != nil {
		return agent.ErrorResult("Cannot write %s: %v", a.Path, err), nil
	}
	// pi counts UTF-16 code units (JavaScript's string length); keep its
	// number so transcripts agree.
	n := llm.UTF16Len(a.Content)
	return agent.TextResult(fmt.Sprintf("Successfully wrote %d bytes to %s", n, a.Path)), nil
}
