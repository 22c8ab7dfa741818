package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// GrepDetails is the details object of a grep result.
type GrepDetails struct {
	Truncation        *Truncation `json:"truncation,omitempty"`
	MatchLimitReached int         `json:"matchLimitReached,omitempty"`
	LinesTruncated    bool        `json:"linesTruncated,omitempty"`
}

const grepDefaultLimit = 100

type grepTool struct {
	prompter
	cwd string
	c   *config
}

var (
	_ agent.Tool = (*grepTool)(nil)
	_ Prompter   = (*grepTool)(nil)
)

const grepSchema = `{
	"type": "object",
	"properties": {
		"pattern": {"type": "string", "description": "Regular expression to look for, or plain text with literal set"},
		"path": {"type": "string", "description": "Directory or file to search (defaults to the working directory)"},
		"glob": {"type": "string", "description": "Only search files matching this glob, such as '*.go' or 'cmd/**/*_test.go'"},
		"ignoreCase": {"type": "boolean", "description": "Match regardless of case (default false)"},
		"literal": {"type": "boolean", "description": "Take pattern as plain text, not a regular expression (default false)"},
		"context": {"type": "number", "description": "Lines to show before and after every match (default 0)"},
		"limit": {"type": "number", "description": "Most matches to return (default 100)"}
	},
	"required": ["pattern"]
}`

func (t *grepTool) Spec() llm.ToolSpec { return spec(NameGrep, grepSchema) }

type grepArgs struct {
	Pattern    string   `json:"pattern"`
	Path       string   `json:"path"`
	Glob       string   `json:"glob"`
	IgnoreCase bool     `json:"ignoreCase"`
	Literal    bool     `json:"literal"`
	Context    *float64 `json:"context"`
	Limit      *float64 `json:"limit"`
}

// grepMatch is one matching line; text is set when the searcher already
// has the line.
type grepMatch struct {
	file string
	line int
	text *string
}

// grepSearch is a finished search.
type grepSearch struct {
	matches      []grepMatch
	limitReached bool
}

// errGrepUser marks search failures the model should read (bad pattern).
type errGrepUser struct{ msg string }

func (e errGrepUser) Error() string { return e.msg }

func (t *grepTool) Run(ctx context.Context, call agent.Call, _ func(agent.Result)) (agent.Result, error) {
	var a grepArgs
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
	info, err := t.c.fs.Stat(ctx, root)
	if err != nil {
		return agent.ErrorResult("Path not found: %s", root), nil
	}
	if !info.IsDir() && !info.Mode().IsRegular() {
		// rg, like the Go search, would wait on a FIFO for ever.
		return agent.ErrorResult("%s is %s, not a file or directory; grep searches regular files.", root, kindOf(info.Mode())), nil
	}
	contextLines, _ := intArg(a.Context)
	contextLines = max(0, contextLines)
	limit := grepDefaultLimit
	if l, ok := intArg(a.Limit); ok {
		limit = max(1, l)
	}

	var search grepSearch
	if rg := t.rgPath(); rg != "" {
		search, err = runRipgrep(ctx, rg, a, root, limit)
	} else {
		search, err = t.goGrep(ctx, a, root, info.IsDir(), limit)
	}
	var ue errGrepUser
	switch {
	case ctx.Err() != nil:
		return agent.ErrorResult("Operation aborted"), nil
	case errors.As(err, &ue):
		return agent.ErrorResult("%s", ue.msg), nil
	case err != nil:
		return agent.ErrorResult("%v", err), nil
	case len(search.matches) == 0:
		return agent.TextResult("No matches found"), nil
	}
	return t.format(ctx, search, root, info.IsDir(), contextLines, limit), nil
}

func (t *grepTool) rgPath() string {
	if t.c.noExternal || !t.c.localFS() {
		return ""
	}
	p, err := exec.LookPath("rg")
	if err != nil {
		return ""
	}
	return p
}

// format renders matches as "path:line: text", with context lines as
// "path-line- text", then the notices about limits.
func (t *grepTool) format(ctx context.Context, s grepSearch, root string, isDir bool, contextLines, limit int) agent.Result {
	rel := func(file string) string {
		if isDir {
			if r, err := filepath.Rel(root, file); err == nil && r != "" && !strings.HasPrefix(r, "..") {
				return filepath.ToSlash(r)
			}
		}
		return filepath.Base(file)
	}
	cache := map[string][]string{}
	fileLines := func(file string) []string {
		lines, ok := cache[file]
		if !ok {
			if data, err := t.c.fs.ReadFile(ctx, file); err == nil {
				lines = strings.Split(normalizeToLF(string(data)), "\n")
			}
			cache[file] = lines
		}
		return lines
	}
	var out []string
	linesCut := false
	for _, m := range s.matches {
		name := rel(m.file)
		if contextLines == 0 && m.text != nil {
			text := strings.TrimSuffix(strings.ReplaceAll(normalizeToLF(*m.text), "\r", ""), "\n")
			text, cut := TruncateLine(text, GrepMaxLineLength)
			linesCut = linesCut || cut
			out = append(out, fmt.Sprintf("%s:%d: %s", name, m.line, text))
			continue
		}
		lines := fileLines(m.file)
		if len(lines) == 0 {
			out = append(out, fmt.Sprintf("%s:%d: (unable to read file)", name, m.line))
			continue
		}
		from, to := max(1, m.line-contextLines), min(len(lines), m.line+contextLines)
		if contextLines == 0 {
			from, to = m.line, m.line
		}
		for n := from; n <= to; n++ {
			text := ""
			if n-1 < len(lines) {
				text = strings.ReplaceAll(lines[n-1], "\r", "")
			}
			text, cut := TruncateLine(text, GrepMaxLineLength)
			linesCut = linesCut || cut
			if n == m.line {
				out = append(out, fmt.Sprintf("%s:%d: %s", name, n, text))
			} else {
				out = append(out, fmt.Sprintf("%s-%d- %s", name, n, text))
			}
		}
	}
	tr := TruncateHead(strings.Join(out, "\n"), Limits{MaxLines: unlimitedLines})
	var d GrepDetails
	var notices []string
	if s.limitReached {
		notices = append(notices, fmt.Sprintf("Stopped at the limit of %d matches. Use limit=%d to see more, or narrow the pattern", limit, limit*2))
		d.MatchLimitReached = limit
	}
	if tr.Truncated {
		notices = append(notices, fmt.Sprintf("Output cut at the %s limit", FormatSize(MaxBytes)))
		d.Truncation = &tr
	}
	if linesCut {
		notices = append(notices, fmt.Sprintf("Lines longer than %d characters were shortened. Use read to see them whole", GrepMaxLineLength))
		d.LinesTruncated = true
	}
	res := agent.TextResult(withNotices(tr.Content, notices))
	if len(notices) > 0 {
		res.Details = d
	}
	return res
}

// compileGrep builds the Go regexp for the arguments.
func compileGrep(a grepArgs) (*regexp.Regexp, error) {
	p := a.Pattern
	if a.Literal {
		p = regexp.QuoteMeta(p)
	}
	if a.IgnoreCase {
		p = "(?i)" + p
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, errGrepUser{fmt.Sprintf("Invalid pattern %q: %v", a.Pattern, err)}
	}
	return re, nil
}

// globFilter reports whether a file (slash path relative to the search
// root) passes the glob the way rg's --glob does: a pattern without a
// slash matches the file name at any depth, one with a slash the relative
// path; a leading "!" excludes instead.
func globFilter(glob string) (func(rel string) bool, error) {
	if glob == "" {
		return func(string) bool { return true }, nil
	}
	negate := strings.HasPrefix(glob, "!")
	g := strings.TrimPrefix(glob, "!")
	if !doublestar.ValidatePattern(g) {
		return nil, errGrepUser{fmt.Sprintf("Invalid glob %q", glob)}
	}
	return func(rel string) bool {
		subject := rel
		if !strings.Contains(strings.TrimSuffix(g, "/"), "/") {
			subject = path.Base(rel)
		}
		ok, _ := doublestar.Match(strings.TrimPrefix(g, "/"), subject)
		return ok != negate
	}, nil
}

// maxGrepLine is how much of one line the Go fallback searches.
const maxGrepLine = 1 << 20

// goGrep searches with Go's regexp, walking the tree like rg would.
func (t *grepTool) goGrep(ctx context.Context, a grepArgs, root string, isDir bool, limit int) (grepSearch, error) {
	re, err := compileGrep(a)
	if err != nil {
		return grepSearch{}, err
	}
	pass, err := globFilter(a.Glob)
	if err != nil {
		return grepSearch{}, err
	}
	var s grepSearch
	// searchFile streams one file line by line: FIFOs, devices and
	// sockets are skipped (Open refuses them without blocking), and a
	// file of any size costs one buffer, with lines over maxGrepLine
	// searched in their first maxGrepLine bytes.
	searchFile := func(file string) bool {
		f, err := t.c.fs.Open(ctx, file)
		if err != nil {
			return true
		}
		defer f.Close()
		br := bufio.NewReaderSize(f, 64<<10)
		if head, _ := br.Peek(8000); isBinary(head) {
			return true
		}
		var line []byte
		for n := 1; ; n++ {
			line = line[:0]
			var err error
			for {
				var chunk []byte
				chunk, err = br.ReadSlice('\n')
				if room := maxGrepLine - len(line); room > 0 {
					line = append(line, chunk[:min(len(chunk), room)]...)
				}
				if !errors.Is(err, bufio.ErrBufferFull) {
					break
				}
			}
			if len(line) == 0 && err != nil {
				return ctx.Err() == nil
			}
			text := strings.TrimSuffix(string(line), "\n")
			if re.MatchString(strings.TrimSuffix(text, "\r")) {
				s.matches = append(s.matches, grepMatch{file: file, line: n, text: &text})
				if len(s.matches) >= limit {
					s.limitReached = true
					return false
				}
			}
			if err != nil {
				return ctx.Err() == nil
			}
		}
	}
	if !isDir {
		searchFile(root)
		return s, nil
	}
	err = walkTree(ctx, t.c.fs, root, func(e walkEntry) bool {
		if e.isDir || !pass(e.rel) {
			return true
		}
		return searchFile(e.abs)
	})
	return s, err
}

// rgGlobArgs turns the tool's glob into rg flags. rg's --glob overrides
// ignore files (a whitelisting glob brings back a file a nested
// .gitignore hides), while a file type filters only what the ignore rules
// let through; so a glob on the file name becomes a one-off type, as the
// Go fallback treats it. Exclusions and globs on whole paths stay --glob:
// excluding more is harmless, and a type cannot match a path.
func rgGlobArgs(glob string) []string {
	switch {
	case glob == "":
		return nil
	case strings.HasPrefix(glob, "!") || strings.Contains(strings.TrimSuffix(glob, "/"), "/"):
		return []string{"--glob", glob}
	}
	return []string{"--type-add", "gopiglob:" + glob, "--type", "gopiglob"}
}

// runRipgrep searches with rg's JSON output, stopping it at the limit.
func runRipgrep(ctx context.Context, rg string, a grepArgs, root string, limit int) (grepSearch, error) {
	args := []string{"--json", "--line-number", "--color=never", "--hidden", "--glob", "!.git"}
	if a.IgnoreCase {
		args = append(args, "--ignore-case")
	}
	if a.Literal {
		args = append(args, "--fixed-strings")
	}
	args = append(args, rgGlobArgs(a.Glob)...)
	args = append(args, "--", a.Pattern, root)
	cmd := exec.CommandContext(ctx, rg, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return grepSearch{}, fmt.Errorf("ripgrep: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return grepSearch{}, fmt.Errorf("run ripgrep: %w", err)
	}
	var s grepSearch
	r := bufio.NewReaderSize(stdout, 64*1024)
	for {
		line, readErr := r.ReadBytes('\n')
		if m, ok := parseRipgrepMatch(line); ok {
			s.matches = append(s.matches, m)
			if len(s.matches) >= limit {
				s.limitReached = true
				_ = cmd.Process.Kill()
				break
			}
		}
		if readErr != nil {
			break
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	if s.limitReached || ctx.Err() != nil {
		return s, nil
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.ExitCode() == 1 {
		return s, nil // no matches
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = fmt.Sprintf("ripgrep failed: %v", err)
		}
		return grepSearch{}, errGrepUser{msg}
	}
	return s, nil
}

func parseRipgrepMatch(line []byte) (grepMatch, bool) {
	var ev struct {
		Type string `json:"type"`
		Data struct {
			Path struct {
				Text string `json:"text"`
			} `json:"path"`
			Lines struct {
				Text *string `json:"text"`
			} `json:"lines"`
			LineNumber int `json:"line_number"`
		} `json:"data"`
	}
	if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &ev) != nil || ev.Type != "match" {
		return grepMatch{}, false
	}
	if ev.Data.Path.Text == "" || ev.Data.LineNumber == 0 {
		return grepMatch{}, false
	}
	return grepMatch{file: ev.Data.Path.Text, line: ev.Data.LineNumber, text: ev.Data.Lines.Text}, true
}
