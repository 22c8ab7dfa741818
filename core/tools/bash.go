package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
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

// BashOutput is bash's structured content (pi 1.5), for programs rather
// than the model: the whole output (up to [BashOutputMax] bytes, its
// middle left out beyond that, which Truncated says; FullOutputPath then
// names the file with all of it), the exit code and the wall time in
// tenths of a second. A command that did not exit on its own (aborted,
// timed out, killed by a signal) has none.
type BashOutput struct {
	Output          string  `json:"output"`
	Truncated       bool    `json:"truncated"`
	FullOutputPath  string  `json:"full_output_path,omitempty"`
	ExitCode        int     `json:"exit_code"`
	WallTimeSeconds float64 `json:"wall_time_seconds"`
}

// bashOutputSchema is the JSON Schema of [BashOutput] (pi's bash output
// schema): what a codemode script's bash call resolves to.
const bashOutputSchema = `{"type":"object","properties":{` +
	`"output":{"type":"string","description":"Combined stdout and stderr, possibly truncated"},` +
	`"truncated":{"type":"boolean"},` +
	`"full_output_path":{"type":"string","description":"Full output, when truncated"},` +
	`"exit_code":{"type":"number"},` +
	`"wall_time_seconds":{"type":"number"}},` +
	`"required":["output","truncated","exit_code","wall_time_seconds"]}`

// OutputSchema is the schema of the result's structured content.
func (t *bashTool) OutputSchema() json.RawMessage { return json.RawMessage(bashOutputSchema) }

// BashOutputMax bounds [BashOutput]'s output, as pi does.
const BashOutputMax = 1 << 20

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

// Run runs the command, confined when the tools have a sandbox. A
// confined command the sandbox may have stopped is put to the [Escape]
// in ctx, if any, and runs once more unconfined when it says yes.
func (t *bashTool) Run(ctx context.Context, call agent.Call, update func(agent.Result)) (agent.Result, error) {
	var a bashArgs
	if r, ok := decodeArgs(call, &a); !ok {
		return r, nil
	}
	sb := t.c.confined()
	if sb == nil {
		out, _ := t.run(ctx, a, t.c.shell, nil, update)
		return out, nil
	}
	local, ok := t.c.shell.(LocalShell)
	if m, here := t.c.shell.(OnLocalMachine); !ok && here && m.OnLocalMachine() {
		local, ok = t.c.local, true
	}
	if !ok {
		return agent.ErrorResult("gopi's sandbox cannot confine commands run by %T, so the command did not run.", t.c.shell), nil
	}
	// A copy: the escape below runs the same shell unconfined.
	confined := local
	confined.Start = sb.Start
	out, denied := t.run(ctx, a, confined, sb, update)
	if !denied || ctx.Err() != nil {
		return out, nil
	}
	esc := escapeFrom(ctx)
	if esc == nil || !esc.Escape(ctx, Denial{Command: a.Command, Confinement: sb.Describe()}) || ctx.Err() != nil {
		return out, nil
	}
	// Allowed once: the same command, unconfined, the same way; its
	// result is the call's, with a note that it ran twice.
	out, _ = t.run(ctx, a, local, nil, update)
	return withNote(out, escapedNote), nil
}

// run runs the command with shell, confined by sb when sb is not nil.
// denied reports a confined command that failed with the messages of a
// refused write or socket: the sandbox may have stopped it.
func (t *bashTool) run(ctx context.Context, a bashArgs, shell Shell, sb Sandbox, update func(agent.Result)) (out agent.Result, denied bool) {
	command := a.Command
	if t.c.commandPrefix != "" {
		command = t.c.commandPrefix + "\n" + command
	}
	opts := ShellOptions{
		Command:       command,
		Dir:           t.cwd,
		Shell:         shell,
		TempDir:       t.c.tempDir,
		TempPrefix:    "gopi-bash",
		FullOutputMax: BashOutputMax,
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
	started := time.Now()
	res, err := RunShell(ctx, opts)
	if err != nil {
		return agent.ErrorResult("%v", err), false
	}
	switch {
	case res.Cancelled:
		return agent.ErrorResult("%s", withStatus(formatBashOutput(res, ""), "Command aborted")), false
	case res.TimedOut:
		secs := strconv.FormatFloat(*a.Timeout, 'f', -1, 64)
		return agent.ErrorResult("%s", withStatus(formatBashOutput(res, ""), "Command timed out after "+secs+" seconds")), false
	}
	text := formatBashOutput(res, "(no output)")
	if res.ExitCode == nil {
		return agent.ErrorResult("%s", withStatus(text, "Command terminated without an exit code")), false
	}
	if *res.ExitCode != 0 {
		status := fmt.Sprintf("Command exited with code %d", *res.ExitCode)
		if sb != nil && (deniedLike(res.Output) || deniedLike(res.FullOutput)) {
			denied = true
			status += "\n\n" + sb.Describe()
		}
		out = agent.ErrorResult("%s", withStatus(text, status))
	} else {
		out = agent.TextResult(text)
	}
	if res.Truncated {
		tr := res.Truncation
		out.Details = BashDetails{Truncation: &tr, FullOutputPath: res.FullOutputPath}
	}
	structured := BashOutput{
		Output:          res.FullOutput,
		Truncated:       res.FullOutputCut,
		ExitCode:        *res.ExitCode,
		WallTimeSeconds: math.Round(time.Since(started).Seconds()*10) / 10,
	}
	if res.FullOutputCut {
		structured.FullOutputPath = res.FullOutputPath
	}
	out.StructuredContent = structured
	return out, denied
}

// withNote adds a bracketed note to the end of a result's text.
func withNote(res agent.Result, note string) agent.Result {
	content := slices.Clone(res.Content)
	if n := len(content); n > 0 {
		if t, ok := content[n-1].(llm.TextContent); ok {
			t.Text += "\n\n[" + note + "]"
			content[n-1] = t
			res.Content = content
			return res
		}
	}
	res.Content = append(content, llm.TextContent{Text: "[" + note + "]"})
	return res
}

// deniedLike reports whether a command's output has the messages of a
// refused write or socket: what Landlock (EACCES) and the seccomp filter
// (EPERM) make programs print.
func deniedLike(out string) bool {
	return strings.Contains(out, "Permission denied") || strings.Contains(out, "Operation not permitted")
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
