package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// EditDetails is the details object of an edit result.
type EditDetails struct {
	// Diff is the change in pi's numbered diff format.
	Diff string `json:"diff"`
	// FirstChangedLine is the first changed line of the new file, for
	// editors to jump to.
	FirstChangedLine int `json:"firstChangedLine,omitempty"`
}

// diffContext is how many unchanged lines the diff shows around a change.
const diffContext = 4

type editTool struct {
	prompter
	cwd string
	c   *config
}

var (
	_ agent.Tool             = (*editTool)(nil)
	_ Prompter               = (*editTool)(nil)
	_ agent.ArgumentPreparer = (*editTool)(nil)
)

const editSchema = `{
	"type": "object",
	"properties": {
		"path": {"type": "string", "description": "File to edit, relative to the working directory or absolute"},
		"edits": {
			"type": "array",
			"description": "The replacements to make. Each is matched against the file as it was before this call, not after the other edits; they must not overlap. Merge changes to the same or neighbouring lines into a single edit.",
			"items": {
				"type": "object",
				"properties": {
					"oldText": {"type": "string", "description": "Text to replace, copied exactly from the file; it must occur exactly once and must not overlap another edit's oldText."},
					"newText": {"type": "string", "description": "Text to put in its place."}
				},
				"required": ["oldText", "newText"],
				"additionalProperties": false
			}
		}
	},
	"required": ["path", "edits"],
	"additionalProperties": false
}`

func (t *editTool) Spec() llm.ToolSpec { return spec(NameEdit, editSchema) }

type editArgs struct {
	Path  string          `json:"path"`
	Edits json.RawMessage `json:"edits"`
	// The single-replacement form older prompts use.
	OldText *string `json:"oldText"`
	NewText *string `json:"newText"`
	// FinalContent is the whole content the file is to hold, in place of
	// the replacements: what the user made of the proposal before
	// approving it (see [Settle]). The schema does not have it, so a
	// model cannot send it.
	FinalContent *string `json:"finalContent"`
}

// PrepareArguments accepts the shapes models send besides the schema's
// (the agent calls it before validating):
// edits as a JSON string holding the array, and top-level oldText/newText
// (appended to edits). Anything it does not understand passes unchanged.
func (t *editTool) PrepareArguments(args json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	changed := false
	if raw, ok := m["edits"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			var arr []json.RawMessage
			if json.Unmarshal([]byte(s), &arr) == nil {
				m["edits"] = json.RawMessage(s)
				changed = true
			}
		}
	}
	var oldText, newText string
	if json.Unmarshal(m["oldText"], &oldText) == nil && json.Unmarshal(m["newText"], &newText) == nil &&
		m["oldText"] != nil && m["newText"] != nil {
		var edits []json.RawMessage
		_ = json.Unmarshal(m["edits"], &edits)
		one, _ := json.Marshal(Replacement{OldText: oldText, NewText: newText})
		edits = append(edits, one)
		m["edits"], _ = json.Marshal(edits)
		delete(m, "oldText")
		delete(m, "newText")
		changed = true
	}
	if !changed {
		return args
	}
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return out
}

func (t *editTool) Run(ctx context.Context, call agent.Call, _ func(agent.Result)) (agent.Result, error) {
	call.Args = t.PrepareArguments(call.Args)
	var a editArgs
	if r, ok := decodeArgs(call, &a); !ok {
		return r, nil
	}
	var edits []Replacement
	if len(bytes.TrimSpace(a.Edits)) > 0 && string(a.Edits) != "null" && a.FinalContent == nil {
		if err := json.Unmarshal(a.Edits, &edits); err != nil {
			return agent.ErrorResult("Invalid edits: %v", err), nil
		}
	}
	if len(edits) == 0 && a.FinalContent == nil {
		return agent.ErrorResult("Invalid edit arguments: edits must hold at least one replacement."), nil
	}
	abs := ResolvePath(a.Path, t.cwd)
	unlock := lockFile(abs)
	defer unlock()
	if ctx.Err() != nil {
		return agent.ErrorResult("Operation aborted"), nil
	}
	if err := t.c.checkWrite(abs); err != nil {
		return agent.ErrorResult("Could not edit %s: %v; nothing was written.", a.Path, err), nil
	}
	info, err := t.c.fs.Stat(ctx, abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return agent.ErrorResult("Could not edit %s: file not found.", a.Path), nil
	case err != nil:
		return agent.ErrorResult("Could not edit %s: %v.", a.Path, err), nil
	case info.IsDir():
		return agent.ErrorResult("Could not edit %s: it is a directory.", a.Path), nil
	}
	data, err := t.c.fs.ReadFile(ctx, abs)
	if err != nil {
		return agent.ErrorResult("Could not edit %s: %v.", a.Path, err), nil
	}
	if a.FinalContent != nil {
		return t.replaceAll(ctx, abs, a.Path, string(data), *a.FinalContent)
	}
	// Models never include the invisible byte order mark in oldText: match
	// without it and put it back.
	raw := string(data)
	mark := ""
	if strings.HasPrefix(raw, bom) {
		mark, raw = bom, raw[len(bom):]
	}
	ending := detectLineEnding(raw)
	base, updated, err := applyEdits(normalizeToLF(raw), edits, a.Path)
	var ee editError
	if errors.As(err, &ee) {
		return agent.ErrorResult("%s", ee), nil
	} else if err != nil {
		return agent.Result{}, err
	}
	if ctx.Err() != nil {
		return agent.ErrorResult("Operation aborted"), nil
	}
	if err := t.c.fs.WriteFile(ctx, abs, []byte(mark+restoreLineEndings(updated, ending))); err != nil {
		return agent.ErrorResult("Could not write %s: %v", a.Path, err), nil
	}
	diff, first := renderDiff(base, updated, diffContext)
	res := agent.TextResult(fmt.Sprintf("Successfully replaced %d block(s) in %s.", len(edits), a.Path))
	res.Details = EditDetails{Diff: diff, FirstChangedLine: first}
	return res, nil
}

// replaceAll writes final, byte for byte, over the file at abs, which
// holds old; path is the file as the call names it. The details' diff
// compares the two as the other edits' do: byte order mark left out,
// line endings as LF. The caller holds the file's lock.
func (t *editTool) replaceAll(ctx context.Context, abs, path, old, final string) (agent.Result, error) {
	base := normalizeToLF(strings.TrimPrefix(old, bom))
	updated := normalizeToLF(strings.TrimPrefix(final, bom))
	if old == final {
		return agent.TextResult(fmt.Sprintf("No changes made to %s: it already holds the approved content.", path)), nil
	}
	if ctx.Err() != nil {
		return agent.ErrorResult("Operation aborted"), nil
	}
	if err := t.c.fs.WriteFile(ctx, abs, []byte(final)); err != nil {
		return agent.ErrorResult("Could not write %s: %v", path, err), nil
	}
	res := agent.TextResult(fmt.Sprintf("Successfully replaced the content of %s.", path))
	if base != updated {
		diff, first := renderDiff(base, updated, diffContext)
		res.Details = EditDetails{Diff: diff, FirstChangedLine: first}
	} else {
		res.Details = EditDetails{}
	}
	return res, nil
}
