package tools

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// BashDetails is the details object of a bash result and of its partial
// results.
type BashDetails struct {
	Truncation     *Truncation `json:"truncation,omitempty"`
	FullOutputPath string      `json:"fullOutputPath,omitempty"`
}

type bashTool struct {
	prompter
	cwd string
	c   *config
}

var (
	_ agent.Tool = (*bashTool)(nil)
	_ Prompter   = (*bashTool)(nil)
)

const bashSchema = `{
	"type": "object",
	"properties": {
		"command": {"type": "string", "description": "The bash command line to run"},
		"timeout": {"type": "number", "description": "Seconds after which the command is stopped (optional; by default it may run indefinitely)"}
	},
	"required": ["command"]
}`

func (t *bashTool) Spec() llm.ToolSpec { return spec(NameBash, bashSchema) }

type bashArgs struct {
	Command string   `json:"command"`
	Timeout *float64 `json:"timeout"`
}

func (t *bashTool) Run(ctx context.Context, call agent.Call, update func(agent.Result)) (agent.Result, error) {
	var a bashArgs
	if r, ok := decodeArgs(call, &a); !ok {
		return r, nil
	}
	command := a.Command
	if t.c.commandPrefix != "" {
		command = t.c.commandPrefix + "\n" + command
	}
	opts := ShellOptions{
		Command:    command,
		Dir:        t.cwd,
		Shell:      t.c.shell,
		TempDir:    t.c.tempDir,
		TempPrefix: "gopi-bash",
	}
	if a.Timeout != nil && *a.Timeout > 0 {
		opts.Timeout = time.Duration(*a.Timeout * float64(time.Second))
	}
	if update != nil {
		update(agent.Result{Content: llm.Contents{}})
		opts.OnUpdate = func(p ShellProgress) {
			var d BashDetails
			if p.Truncation.Truncated {
				tr := p.Truncation
				d.Truncation = &tr
			}
			d.FullOutputPath = p.FullOutputPath
			update(agent.Result{Content: llm.Contents{llm.TextContent{Text: p.Truncation.Content}}, Details: d})
		}
	}
	res, err := RunShell(ctx, opts)
	if err != nil {
		return agent.ErrorResult("%v", err), nil
	}
	switch {
	case res.Cancelled:
		return agent.ErrorResult("%s", withStatus(formatBashOutput(res, ""), "Command aborted")), nil
	case res.TimedOut:
		secs := strconv.FormatFloat(*a.Timeout, 'f', -1, 64)
		return agent.ErrorResult("%s", withStatus(formatBashOutput(res, ""), "Command timed out after "+secs+" seconds")), nil
	}
	text := formatBashOutput(res, "(no output)")
	if res.ExitCode != nil && *res.ExitCode != 0 {
		return agent.ErrorResult("%s", withStatus(text, fmt.Sprintf("Command exited with code %d", *res.ExitCode))), nil
	}
	out := agent.TextResult(text)
	if res.Truncated {
		tr := res.Truncation
		out.Details = BashDetails{Truncation: &tr, FullOutputPath: res.FullOutputPath}
	}
	return out, nil
}

// formatBashOutput is the output text with, when truncated, a note on what
// is shown and where the rest is.
func formatBashOutput(res ShellResult, empty string) string {
	text := res.Output
	if text == "" {
		text = empty
	}
	if !res.Truncated {
		return text
	}
	tr := res.Truncation
	first, last := tr.TotalLines-tr.OutputLines+1, tr.TotalLines
	where := "Full output: " + res.FullOutputPath
	if res.FullOutputPath == "" {
		where = "The full output could not be saved"
	}
	switch {
	case tr.LastLinePartial:
		return fmt.Sprintf("%s\n\n[Showing last %s of line %d (line is %s). %s]",
			text, FormatSize(tr.OutputBytes), last, FormatSize(res.LastLineBytes), where)
	case tr.TruncatedBy == TruncatedByLines:
		return fmt.Sprintf("%s\n\n[Showing lines %d-%d of %d. %s]", text, first, last, tr.TotalLines, where)
	default:
		return fmt.Sprintf("%s\n\n[Showing lines %d-%d of %d (%s limit). %s]",
			text, first, last, tr.TotalLines, FormatSize(MaxBytes), where)
	}
}

func withStatus(text, status string) string {
	if text == "" {
		return status
	}
	return text + "\n\n" + status
}
