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
		old, _ := readForPreview(ctx, c.fs, p.Abs)
		p.Diff = udiff.Unified(a.Path, a.Path, old, a.Content)
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
		raw = strings.TrimPrefix(raw, bom)
		base, updated, err := applyEdits(normalizeToLF(raw), edits, a.Path)
		if err != nil {
			p.Problem = err.Error()
			return p, true
		}
		p.Diff = udiff.Unified(a.Path, a.Path, base, updated)
		return p, true
	}
	return Preview{}, false
}

func readForPreview(ctx context.Context, fsys FS, abs string) (string, error) {
	data, err := fsys.ReadFile(ctx, abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s does not exist", abs)
	}
	if err != nil {
		return "", err
	}
	return string(data), nil
}
