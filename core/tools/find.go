package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// FindDetails is the details object of a find result.
type FindDetails struct {
	Truncation         *Truncation `json:"truncation,omitempty"`
	ResultLimitReached int         `json:"resultLimitReached,omitempty"`
}

const findDefaultLimit = 1000

type findTool struct {
	prompter
	cwd string
	c   *config
}

var (
	_ agent.Tool = (*findTool)(nil)
	_ Prompter   = (*findTool)(nil)
)

const findSchema = `{
	"type": "object",
	"properties": {
		"pattern": {"type": "string", "description": "Glob the paths must match, relative to the searched directory, such as 'internal/**/*_test.go' or '**/testdata/*.json'; without a slash, such as '*.go', it matches names at any depth"},
		"path": {"type": "string", "description": "Directory to search (defaults to the working directory)"},
		"limit": {"type": "number", "description": "Most paths to return (default 1000)"}
	},
	"required": ["pattern"]
}`

func (t *findTool) Spec() llm.ToolSpec { return spec(NameFind, findSchema) }

type findArgs struct {
	Pattern string   `json:"pattern"`
	Path    string   `json:"path"`
	Limit   *float64 `json:"limit"`
}

func (t *findTool) Run(ctx context.Context, call agent.Call, _ func(agent.Result)) (agent.Result, error) {
	var a findArgs
	if r, ok := decodeArgs(call, &a); !ok {
		return r, nil
	}
	if ctx.Err() != nil {
		return agent.ErrorResult("Operation aborted"), nil
	}
	dir := a.Path
	if dir == "" {
		dir = "."
	}
	root := ResolvePath(dir, t.cwd)
	limit := findDefaultLimit
	if l, ok := intArg(a.Limit); ok && l > 0 {
		limit = l
	}
	info, err := t.c.fs.Stat(ctx, root)
	if err != nil {
		return agent.ErrorResult("Path not found: %s", root), nil
	}
	if !info.IsDir() {
		return agent.ErrorResult("Not a directory: %s", root), nil
	}
	if !doublestar.ValidatePattern(a.Pattern) {
		return agent.ErrorResult("Invalid glob pattern: %s", a.Pattern), nil
	}

	var paths []string
	if fd := t.fdPath(); fd != "" {
		paths, err = runFd(ctx, fd, a.Pattern, root, limit)
	} else {
		paths, err = t.goFind(ctx, a.Pattern, root, limit)
	}
	switch {
	case ctx.Err() != nil:
		return agent.ErrorResult("Operation aborted"), nil
	case err != nil:
		return agent.ErrorResult("%v", err), nil
	case len(paths) == 0:
		return agent.TextResult("No files found matching pattern"), nil
	}
	tr := TruncateHead(strings.Join(paths, "\n"), Limits{MaxLines: unlimitedLines})
	var d FindDetails
	var notices []string
	if len(paths) >= limit {
		notices = append(notices, fmt.Sprintf("Stopped at the limit of %d results. Use limit=%d to see more, or narrow the pattern", limit, limit*2))
		d.ResultLimitReached = limit
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

func (t *findTool) fdPath() string {
	if t.c.noExternal || !t.c.localFS() {
		return ""
	}
	for _, name := range []string{"fd", "fdfind"} {
		if p, err := exec.LookPath(name); err == nil {
			if !fdUsable(p) {
				return "" // the Go walker has the same rules
			}
			return p
		}
	}
	return ""
}

// fdVersions caches, per fd binary, whether it is new enough.
var fdVersions sync.Map // path -> bool

// fdUsable reports whether the fd at path knows --no-require-git (fd 8.7,
// 2023), without which it ignores .gitignore files outside a git
// repository; Debian 12 ships fd 8.6.
func fdUsable(path string) bool {
	if v, ok := fdVersions.Load(path); ok {
		return v.(bool)
	}
	out, err := exec.Command(path, "--version").Output()
	ok := err == nil && fdAtLeast(string(out), 8, 7)
	fdVersions.Store(path, ok)
	return ok
}

// fdAtLeast parses "fd 8.6.0" (or "fdfind 8.6.0") and compares.
func fdAtLeast(version string, major, minor int) bool {
	fields := strings.Fields(version)
	if len(fields) < 2 {
		return false
	}
	parts := strings.SplitN(fields[1], ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// findPattern is a find pattern as it is matched, as in pi 1.6: leading
// "./" dropped; a pattern with a slash is a path pattern, anchored at the
// search directory like grep's glob ("src/*.ts" finds src/a.ts, not
// pkg/src/a.ts; "**/src/*.ts" finds both) unless it is absolute; one
// without a slash matches names at any depth.
type findPattern struct {
	glob     string
	path     bool // matched against a path, not a name
	absolute bool // matched against the absolute path
}

func parseFindPattern(pattern string) findPattern {
	for strings.HasPrefix(pattern, "./") {
		pattern = strings.TrimLeft(pattern[2:], "/")
	}
	p := findPattern{glob: pattern, path: strings.Contains(pattern, "/")}
	p.absolute = p.path && filepath.IsAbs(pattern)
	return p
}

// findMatcher matches entries of root against pattern.
func findMatcher(pattern, root string) func(e walkEntry) bool {
	p := parseFindPattern(pattern)
	rootSlash := strings.TrimSuffix(filepath.ToSlash(root), "/")
	return func(e walkEntry) bool {
		var ok bool
		switch {
		case !p.path:
			ok, _ = doublestar.Match(p.glob, path.Base(e.rel))
		case p.absolute:
			ok, _ = doublestar.Match(p.glob, rootSlash+"/"+e.rel)
		default:
			ok, _ = doublestar.Match(p.glob, e.rel)
		}
		return ok
	}
}

// goFind walks root for paths matching pattern; directories end in "/".
func (t *findTool) goFind(ctx context.Context, pattern, root string, limit int) ([]string, error) {
	match := findMatcher(pattern, root)
	var out []string
	err := walkTree(ctx, t.c.fs, root, func(e walkEntry) bool {
		if match(e) {
			p := e.rel
			if e.isDir {
				p += "/"
			}
			out = append(out, p)
		}
		return len(out) < limit
	})
	return out, err
}

// globEscape escapes the characters a glob gives a meaning.
var globEscape = strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`, "{", `\{`, "}", `\}`)

// runFd lists matches with fd, relative to root.
func runFd(ctx context.Context, fd, pattern, root string, limit int) ([]string, error) {
	args := []string{"--glob", "--color=never", "--hidden", "--no-require-git", "--exclude", ".git",
		"--max-results", strconv.Itoa(limit)}
	p := parseFindPattern(pattern)
	pattern = p.glob
	if p.path {
		// fd matches a path pattern against the absolute path: a relative
		// one is put under the search directory, glob-escaped. Smart case
		// then follows the pattern alone, not the directory's letters.
		args = append(args, "--full-path")
		if !p.absolute {
			if pattern == strings.ToLower(pattern) {
				args = append(args, "--ignore-case")
			}
			pattern = globEscape.Replace(strings.TrimSuffix(filepath.ToSlash(root), "/")) + "/" + pattern
		}
	}
	args = append(args, "--", pattern, root)
	cmd := exec.CommandContext(ctx, fd, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var out []string
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(strings.TrimSuffix(sc.Text(), "\r"))
		if line == "" {
			continue
		}
		slash := strings.HasSuffix(line, "/") || strings.HasSuffix(line, `\`)
		rel := line
		if r, relErr := filepath.Rel(root, line); relErr == nil {
			rel = r
		}
		rel = filepath.ToSlash(rel)
		if slash && !strings.HasSuffix(rel, "/") {
			rel += "/"
		}
		out = append(out, rel)
	}
	if err != nil && len(out) == 0 {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, errors.New(msg)
		}
		return nil, fmt.Errorf("%w: %v", errFdFailed, err)
	}
	return out, nil
}
