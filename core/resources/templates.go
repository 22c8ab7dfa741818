package resources

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/gopi-dev/gopi/internal/regularfile"
)

// Template is a prompt template: a markdown file whose body replaces
// "/name args" in user input, with the arguments substituted.
type Template struct {
	Name        string
	Description string
	// ArgumentHint is the frontmatter "argument-hint", if any.
	ArgumentHint string
	// Content is the body without frontmatter.
	Content    string
	Path       string // absolute path of the .md file
	Location   Location
	SourceInfo SourceInfo
}

// descriptionFallbackLen caps a description taken from the first line of
// the body (pi's 60 characters, then "...").
const descriptionFallbackLen = 60

// LoadTemplates finds prompt templates in <cwd>/.pi/prompts (project),
// <agentDir>/prompts (user) and the extra paths (files or directories,
// relative to cwd, "~" expanded). When two templates share a name the first
// wins, in that order, and the loser is reported with [ErrCollision]. Files
// that cannot be read or have invalid frontmatter are reported and skipped.
// withProject false leaves out the project's templates (an untrusted
// project: see [ResolveTrust]); extra paths still load.
func LoadTemplates(agentDir, cwd string, extra []string, withProject bool) ([]Template, []error) {
	d := DiscoverAll
	if !withProject {
		d = DiscoverUser
	}
	return LoadTemplatesFrom(agentDir, cwd, extra, d)
}

// LoadTemplatesFrom is [LoadTemplates] searching the default folders d
// names.
func LoadTemplatesFrom(agentDir, cwd string, extra []string, d Discovery) ([]Template, []error) {
	cwd = absDir(cwd)
	agentDir = absDir(agentDir)
	l := templateLoader{
		userDir:    filepath.Join(agentDir, "prompts"),
		projectDir: filepath.Join(cwd, configDirName, "prompts"),
		seenPath:   map[string]bool{},
		byName:     map[string]string{},
	}
	if agentDir == "" {
		l.userDir = ""
	}
	// Project first: pi ranks project resources above user ones and keeps
	// the first of a name.
	if d == DiscoverAll {
		l.autoDir(l.projectDir, SourceInfo{Source: SourceAuto, Scope: ScopeProject, Origin: OriginTopLevel, BaseDir: filepath.Join(cwd, configDirName)})
	}
	if l.userDir != "" && d != DiscoverNone {
		l.autoDir(l.userDir, SourceInfo{Source: SourceAuto, Scope: ScopeUser, Origin: OriginTopLevel, BaseDir: agentDir})
	}
	for _, raw := range extra {
		l.explicit(resolvePath(raw, cwd))
	}
	return l.out, l.errs
}

type templateLoader struct {
	userDir, projectDir string
	out                 []Template
	errs                []error
	seenPath            map[string]bool   // canonical paths already loaded
	byName              map[string]string // name -> path of the winner
}

// autoDir loads the .md files directly in a default directory, skipping
// dot files and ignored names.
func (l *templateLoader) autoDir(dir string, info SourceInfo) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !regularfile.Missing(err) {
			l.errs = append(l.errs, &LoadError{Path: dir, Err: fmt.Errorf("listing prompt templates: %w", err), Skipped: true})
		}
		return
	}
	var ig ignorer
	ig.addDir(dir, "")
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == "node_modules" {
			continue
		}
		full := filepath.Join(dir, name)
		_, isFile, ok := statFollow(full)
		if !ok || !isFile || ig.ignored(name, false) || !strings.HasSuffix(name, ".md") {
			continue
		}
		si := info
		si.Path = full
		l.file(full, si)
	}
}

// explicit loads a path given by the user: a directory's .md files (all of
// them, not recursing) or one .md file.
func (l *templateLoader) explicit(p string) {
	isDir, isFile, ok := statFollow(p)
	if !ok {
		l.errs = append(l.errs, &LoadError{Path: p, Err: errNoTemplatePath, Skipped: true})
		return
	}
	switch {
	case isDir:
		entries, err := os.ReadDir(p)
		if err != nil {
			l.errs = append(l.errs, &LoadError{Path: p, Err: fmt.Errorf("listing prompt templates: %w", err), Skipped: true})
			return
		}
		for _, e := range entries {
			full := filepath.Join(p, e.Name())
			if _, f, ok := statFollow(full); ok && f && strings.HasSuffix(e.Name(), ".md") {
				l.file(full, l.explicitInfo(full))
			}
		}
	case isFile && strings.HasSuffix(p, ".md"):
		l.file(p, l.explicitInfo(p))
	}
}

// explicitInfo is pi's sourceInfo for a template named by an explicit path.
func (l *templateLoader) explicitInfo(p string) SourceInfo {
	switch {
	case l.userDir != "" && isUnder(p, l.userDir):
		return SourceInfo{Path: p, Source: SourceLocal, Scope: ScopeUser, Origin: OriginTopLevel, BaseDir: l.userDir}
	case isUnder(p, l.projectDir):
		return SourceInfo{Path: p, Source: SourceLocal, Scope: ScopeProject, Origin: OriginTopLevel, BaseDir: l.projectDir}
	default:
		return SourceInfo{Path: p, Source: SourceLocal, Scope: ScopeTemporary, Origin: OriginTopLevel, BaseDir: filepath.Dir(p)}
	}
}

func (l *templateLoader) file(p string, info SourceInfo) {
	key := canonical(p)
	if l.seenPath[key] {
		return
	}
	l.seenPath[key] = true
	t, err := loadTemplate(p, info)
	if err != nil {
		l.errs = append(l.errs, &LoadError{Path: p, Err: err, Skipped: true})
		return
	}
	if winner, ok := l.byName[t.Name]; ok {
		l.errs = append(l.errs, &LoadError{Path: p, Err: fmt.Errorf("%w: /%s is already defined by %s", ErrCollision, t.Name, winner), Skipped: true})
		return
	}
	l.byName[t.Name] = p
	l.out = append(l.out, t)
}

func loadTemplate(p string, info SourceInfo) (Template, error) {
	b, err := regularfile.ReadFile(p)
	if err != nil {
		return Template{}, fmt.Errorf("reading prompt template: %w", err)
	}
	fm, body, err := parseFrontmatter(string(b))
	if err != nil {
		return Template{}, err
	}
	desc := fm.str("description")
	if desc == "" {
		for _, line := range strings.Split(body, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			if r := []rune(line); len(r) > descriptionFallbackLen {
				desc = string(r[:descriptionFallbackLen]) + "..."
			} else {
				desc = line
			}
			break
		}
	}
	return Template{
		Name:         strings.TrimSuffix(filepath.Base(p), ".md"),
		Description:  desc,
		ArgumentHint: fm.str("argument-hint"),
		Content:      body,
		Path:         p,
		Location:     info.location(),
		SourceInfo:   info,
	}, nil
}

// ExpandTemplate replaces "/name args" with the body of the template called
// name, arguments substituted (see [SubstituteArgs]). Text that does not
// start with "/" or names no template is returned unchanged.
func ExpandTemplate(text string, ts []Template) string {
	if !strings.HasPrefix(text, "/") {
		return text
	}
	name, args, _ := strings.Cut(text[1:], " ")
	for _, t := range ts {
		if t.Name == name {
			return SubstituteArgs(t.Content, ParseCommandArgs(args))
		}
	}
	return text
}

// TakesArguments reports whether the template's body has a place for
// arguments ($1, $@, $ARGUMENTS, ${@:N}).
func (t Template) TakesArguments() bool {
	for _, re := range []*regexp.Regexp{positionalRe(), sliceRe(), allArgsRe(), atRe()} {
		if re.MatchString(t.Content) {
			return true
		}
	}
	return false
}

// ParseCommandArgs splits s on spaces and tabs; single or double quotes
// group words and are dropped. An unclosed quote runs to the end.
func ParseCommandArgs(s string) []string {
	var args []string
	var cur strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		// Every delimiter is ASCII, so walking bytes keeps multi-byte
		// characters intact.
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ' ' || c == '\t':
			if cur.Len() > 0 {
				args = append(args, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteByte(c)
		}
	}
	if cur.Len() > 0 {
		args = append(args, cur.String())
	}
	return args
}

var (
	positionalRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$(\d+)`) })
	sliceRe      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{@:(\d+)(?::(\d+))?\}`) })
	allArgsRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$ARGUMENTS`) })
	atRe         = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$@`) })
)

// SubstituteArgs fills a template body with arguments, in pi's order and
// with pi's rules:
//
//   - $1, $2, … become the n-th argument ("" when missing);
//   - ${@:N} becomes the arguments from the N-th on, ${@:N:L} L of them
//     (N=0 counts as 1), joined by spaces;
//   - $ARGUMENTS and then $@ become all arguments joined by spaces.
//
// Each step runs over the result of the previous one. In the last two steps
// the joined arguments go through JavaScript's replacement patterns ("$$"
// becomes "$", "$&" the matched placeholder), as in pi.
func SubstituteArgs(content string, args []string) string {
	out := positionalRe().ReplaceAllStringFunc(content, func(m string) string {
		n, err := strconv.Atoi(m[1:])
		if err != nil || n < 1 || n > len(args) {
			return ""
		}
		return args[n-1]
	})
	out = sliceRe().ReplaceAllStringFunc(out, func(m string) string {
		sub := sliceRe().FindStringSubmatch(m)
		start := clampIndex(sub[1], len(args)) - 1
		if start < 0 {
			start = 0
		}
		end := len(args)
		if sub[2] != "" {
			end = min(start+clampIndex(sub[2], len(args)), len(args))
		}
		if start >= end {
			return ""
		}
		return strings.Join(args[start:end], " ")
	})
	all := strings.Join(args, " ")
	out = jsReplaceAll(out, allArgsRe(), all)
	out = jsReplaceAll(out, atRe(), all)
	return out
}

// clampIndex parses a decimal index, saturating at limit+1 so that huge
// numbers behave like "past the end".
func clampIndex(s string, limit int) int {
	n, err := strconv.Atoi(s)
	if err != nil || n > limit+1 {
		return limit + 1
	}
	return n
}

// jsReplaceAll replaces every match of re (a pattern without groups) the
// way JavaScript's String.replace does with a string replacement: "$$" is
// "$", "$&" the match, "$`" and "$'" the text before and after it; any
// other "$" is literal.
func jsReplaceAll(s string, re *regexp.Regexp, repl string) string {
	if !strings.Contains(repl, "$") {
		return re.ReplaceAllLiteralString(s, repl)
	}
	var b strings.Builder
	last := 0
	for _, loc := range re.FindAllStringIndex(s, -1) {
		b.WriteString(s[last:loc[0]])
		for i := 0; i < len(repl); i++ {
			if repl[i] != '$' || i+1 == len(repl) {
				b.WriteByte(repl[i])
				continue
			}
			switch repl[i+1] {
			case '$':
				b.WriteByte('$')
			case '&':
				b.WriteString(s[loc[0]:loc[1]])
			case '`':
				b.WriteString(s[:loc[0]])
			case '\'':
				b.WriteString(s[loc[1]:])
			default:
				b.WriteByte('$')
				continue
			}
			i++
		}
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String()
}
