package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// Preview describes the change an edit or write call would make, without
// making it: what an approval question shows.
type Preview struct {
	// Path is the target as the model wrote it; Abs is it resolved.
	Path string
	Abs  string
	// Diff is a unified diff of the file before and after ("" when the
	// call would change nothing or cannot apply).
	Diff string
	// Problem says why the call would fail (an edit whose text is not in
	// the file), "" when it would apply.
	Problem string
	// After is the whole content the file would hold after the call, byte
	// for byte as the tool would write it; "" when Problem is set.
	After string
	// Before is the file's content now, byte for byte; nil when the file
	// does not exist (or could not be read).
	Before *string
}

// PreviewChange previews an edit or write call's arguments against the
// file system as it is now. Other tools have no preview (ok is false).
func PreviewChange(ctx context.Context, cwd, toolName string, args json.RawMessage, opts ...Option) (p Preview, ok bool) {
	c := newConfig(opts)
	switch toolName {
	case NameWrite:
		var a writeArgs
		if json.Unmarshal(args, &a) != nil || a.Path == "" {
			return Preview{}, false
		}
		p = Preview{Path: a.Path, Abs: ResolvePath(a.Path, cwd)}
		old, err := readForPreview(ctx, c.fs, p.Abs)
		if err == nil {
			p.Before = &old
		}
		p.Diff = udiff.Unified(a.Path, a.Path, old, a.Content)
		p.After = a.Content
		return p, true
	case NameEdit:
		t := &editTool{cwd: cwd, c: c}
		var a editArgs
		if json.Unmarshal(t.PrepareArguments(args), &a) != nil || a.Path == "" {
			return Preview{}, false
		}
		p = Preview{Path: a.Path, Abs: ResolvePath(a.Path, cwd)}
		var edits []Replacement
		if len(bytes.TrimSpace(a.Edits)) > 0 {
			_ = json.Unmarshal(a.Edits, &edits)
		}
		raw, err := readForPreview(ctx, c.fs, p.Abs)
		if err != nil {
			p.Problem = err.Error()
			return p, true
		}
		before := raw // raw loses its byte order mark below
		p.Before = &before
		mark := ""
		if strings.HasPrefix(raw, bom) {
			mark, raw = bom, raw[len(bom):]
		}
		base, updated, err := applyEdits(normalizeToLF(raw), edits, a.Path)
		if err != nil {
			p.Problem = err.Error()
			return p, true
		}
		p.Diff = udiff.Unified(a.Path, a.Path, base, updated)
		p.After = mark + restoreLineEndings(updated, detectLineEnding(raw))
		return p, true
	}
	return Preview{}, false
}

// Settle rewrites the arguments of an edit or write call so that the call
// leaves the file holding exactly content: what the user made of the
// proposed change before approving it. A write's content becomes it; an
// edit's replacements give way to finalContent, which the edit tool
// writes as it is over the file (which must still exist). ok is false for
// other tools and for arguments that are not a JSON object.
func Settle(toolName string, args json.RawMessage, content string) (settled json.RawMessage, ok bool) {
	if toolName != NameWrite && toolName != NameEdit {
		return args, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil || m == nil {
		return args, false
	}
	c, err := json.Marshal(content)
	if err != nil {
		return args, false
	}
	if toolName == NameWrite {
		m["content"] = c
	} else {
		delete(m, "edits")
		delete(m, "oldText")
		delete(m, "newText")
		m["finalContent"] = c
	}
	out, err := json.Marshal(m)
	if err != nil {
		return args, false
	}
	return out, true
}

func readForPreview(ctx context.Context, fsys FS, abs string) (string, error) {
	data, err := fsys.ReadFile(ctx, abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s %w", abs, errNoFile)
	}
	if err != nil {
		return "", err
	}
	return string(data), nil
}
