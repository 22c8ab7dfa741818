package resources

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"text/template"
	"unicode/utf16"

	"github.com/gopi-dev/gopi/internal/regularfile"
)

var (
	//go:embed prompts/skills.md
	skillsIntro string
	//go:embed prompts/skill-block.md.tmpl
	skillBlockText string

	skillBlockTmpl = sync.OnceValue(func() *template.Template { return template.Must(template.New("skill-block").Parse(skillBlockText)) })
)

// Skill is a SKILL.md (or a loose .md in a skills directory root): named
// instructions the model can read on demand, or the user can inject with
// "/skill:name".
type Skill struct {
	Name        string
	Description string
	Path        string // absolute path of the skill file
	BaseDir     string // directory holding the skill file
	Location    Location
	SourceInfo  SourceInfo
	// DisableModelInvocation hides the skill from the system prompt; it can
	// still be invoked with /skill:name.
	DisableModelInvocation bool
}

// Limits of the Agent Skills format, as pi enforces them (warnings only).
const (
	maxSkillNameLen        = 64
	maxSkillDescriptionLen = 1024
)

var skillNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9-]+$`) })

// LoadSkills finds skills, first of a name wins, in this order:
//
//   - project: <cwd>/.pi/skills, then .agents/skills in cwd and each parent
//     up to the git repository root (or the filesystem root outside a repo);
//   - user: <agentDir>/skills, then ~/.agents/skills;
//   - the extra paths (directories or .md files, relative to cwd).
//
// In a skills directory, a directory holding SKILL.md is one skill and is not
// searched further; other directories are searched recursively; .md files
// directly in a .pi/skills, agentDir/skills or extra root are skills too.
// Dot entries, node_modules and paths excluded by .gitignore, .ignore or
// .fdignore files are skipped. Name and description problems are reported as
// warnings; a skill without a description is left out. The same file reached
// twice (symlinks) loads once.
//
// withProject false leaves out the project's skills (an untrusted project:
// see [ResolveTrust]); extra paths still load.
func LoadSkills(agentDir, cwd string, extra []string, withProject bool) ([]Skill, []error) {
	d := DiscoverAll
	if !withProject {
		d = DiscoverUser
	}
	return LoadSkillsFrom(agentDir, cwd, extra, d)
}

// LoadSkillsFrom is [LoadSkills] searching the default folders d names.
func LoadSkillsFrom(agentDir, cwd string, extra []string, d Discovery) ([]Skill, []error) {
	cwd = absDir(cwd)
	agentDir = absDir(agentDir)
	l := skillLoader{
		projectDir: filepath.Join(cwd, configDirName, "skills"),
		seenPath:   map[string]bool{},
		byName:     map[string]string{},
	}
	if agentDir != "" {
		l.userDir = filepath.Join(agentDir, "skills")
	}
	home, _ := os.UserHomeDir()
	userAgents := ""
	if home != "" {
		userAgents = filepath.Join(home, ".agents", "skills")
	}

	project := SourceInfo{Source: SourceAuto, Scope: ScopeProject, Origin: OriginTopLevel, BaseDir: filepath.Join(cwd, configDirName)}
	if d == DiscoverAll {
		l.root(l.projectDir, true, project)
		for _, d := range ancestorAgentsSkillDirs(cwd) {
			if d != userAgents {
				l.root(d, false, project)
			}
		}
	}
	user := SourceInfo{Source: SourceAuto, Scope: ScopeUser, Origin: OriginTopLevel, BaseDir: agentDir}
	if l.userDir != "" && d != DiscoverNone {
		l.root(l.userDir, true, user)
	}
	if userAgents != "" && d != DiscoverNone {
		l.root(userAgents, false, user)
	}
	for _, raw := range extra {
		l.explicit(resolvePath(raw, cwd))
	}
	return l.out, append(l.errs, l.collisions...)
}

// ancestorAgentsSkillDirs lists .agents/skills of cwd and its parents, up to
// the enclosing git repository's root, or to / when there is none.
func ancestorAgentsSkillDirs(cwd string) []string {
	stop := ""
	for d := cwd; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			stop = d
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	var dirs []string
	for d := cwd; ; {
		dirs = append(dirs, filepath.Join(d, ".agents", "skills"))
		parent := filepath.Dir(d)
		if d == stop || parent == d {
			break
		}
		d = parent
	}
	return dirs
}

type skillLoader struct {
	userDir, projectDir string
	out                 []Skill
	errs                []error
	collisions          []error
	seenPath            map[string]bool   // canonical paths of files already read
	byName              map[string]string // name -> path of the winner
}

// root walks one skills directory; rootFiles says whether loose .md files
// directly inside it count as skills.
func (l *skillLoader) root(dir string, rootFiles bool, info SourceInfo) {
	if _, err := os.Stat(dir); err != nil {
		if !regularfile.Missing(err) {
			l.errs = append(l.errs, &LoadError{Path: dir, Err: fmt.Errorf("reading skills directory: %w", err), Skipped: true})
		}
		return
	}
	w := skillWalk{l: l, root: dir, info: info, visited: map[string]bool{}}
	w.dir(dir, rootFiles)
}

type skillWalk struct {
	l       *skillLoader
	root    string
	info    SourceInfo
	ig      ignorer
	visited map[string]bool // canonical directories, against symlink loops
}

func (w *skillWalk) dir(dir string, rootFiles bool) {
	key := canonical(dir)
	if w.visited[key] {
		return
	}
	w.visited[key] = true
	rel, _ := filepath.Rel(w.root, dir)
	if rel == "." {
		rel = ""
	}
	w.ig.addDir(dir, rel)
	entries, err := os.ReadDir(dir)
	if err != nil {
		w.l.errs = append(w.l.errs, &LoadError{Path: dir, Err: fmt.Errorf("reading skills directory: %w", err), Skipped: true})
		return
	}
	relOf := func(name string) string { return filepath.Join(rel, name) }

	for _, e := range entries {
		if e.Name() != "SKILL.md" {
			continue
		}
		full := filepath.Join(dir, e.Name())
		if _, isFile, ok := statFollow(full); ok && isFile && !w.ig.ignored(relOf(e.Name()), false) {
			w.l.file(full, w.info)
			return
		}
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == "node_modules" {
			continue
		}
		full := filepath.Join(dir, name)
		isDir, isFile, ok := statFollow(full)
		if !ok || w.ig.ignored(relOf(name), isDir) {
			continue
		}
		switch {
		case isDir:
			w.dir(full, false)
		case isFile && rootFiles && strings.HasSuffix(name, ".md"):
			w.l.file(full, w.info)
		}
	}
}

// explicit loads a path given by the user: a directory walked like a
// skills root, or one .md file.
func (l *skillLoader) explicit(p string) {
	isDir, isFile, ok := statFollow(p)
	if !ok {
		l.errs = append(l.errs, &LoadError{Path: p, Err: errNoSkillPath, Skipped: true})
		return
	}
	info := SourceInfo{Source: SourceLocal, Scope: ScopeTemporary, Origin: OriginTopLevel}
	switch {
	case l.userDir != "" && isUnder(p, l.userDir):
		info.Scope = ScopeUser
	case isUnder(p, l.projectDir):
		info.Scope = ScopeProject
	}
	switch {
	case isDir:
		w := skillWalk{l: l, root: p, info: info, visited: map[string]bool{}}
		w.dir(p, true)
	case isFile && strings.HasSuffix(p, ".md"):
		l.file(p, info)
	default:
		l.errs = append(l.errs, &LoadError{Path: p, Err: errSkillNotMD, Skipped: true})
	}
}

// file loads one skill file and records it unless its name is taken.
// Auto-discovered skills keep the root's BaseDir in SourceInfo; explicit ones
// (Source "local") use the skill's own directory, as pi does.
func (l *skillLoader) file(p string, info SourceInfo) {
	info.Path = p
	if info.Source == SourceLocal {
		info.BaseDir = filepath.Dir(p)
	}
	key := canonical(p)
	if l.seenPath[key] {
		return // the same file through another path (symlink)
	}
	l.seenPath[key] = true
	s, warnings := loadSkill(p, info)
	l.errs = append(l.errs, warnings...)
	if s == nil {
		return
	}
	if winner, ok := l.byName[s.Name]; ok {
		l.collisions = append(l.collisions, &LoadError{Path: p, Err: fmt.Errorf("%w: skill %q is already defined by %s", ErrCollision, s.Name, winner), Skipped: true})
		return
	}
	l.byName[s.Name] = p
	l.out = append(l.out, *s)
}

// fmText reads a frontmatter field the way pi's JavaScript does: missing or
// falsy values (null, false, 0, "") are "", other non-strings are invalid.
func fmText(fm frontmatter, key string) (string, bool) {
	switch v := fm[key].(type) {
	case nil:
		return "", true
	case string:
		return v, true
	case bool:
		return "", !v
	case int:
		return "", v == 0
	case float64:
		return "", v == 0
	default:
		return "", false
	}
}

// loadSkill reads and validates one skill file. It returns nil when the
// skill is left out; warnings may accompany a loaded skill.
func loadSkill(p string, info SourceInfo) (*Skill, []error) {
	warn := func(skipped bool, format string, a ...any) error {
		return &LoadError{Path: p, Err: fmt.Errorf(format, a...), Skipped: skipped}
	}
	b, err := regularfile.ReadFile(p)
	if err != nil {
		return nil, []error{warn(true, "reading skill: %w", err)}
	}
	fm, _, err := parseFrontmatter(string(b))
	if err != nil {
		return nil, []error{&LoadError{Path: p, Err: err, Skipped: true}}
	}
	desc, okDesc := fmText(fm, "description")
	name, okName := fmText(fm, "name")
	if !okDesc {
		return nil, []error{warn(true, "%w", errDescNotText)}
	}
	if !okName {
		return nil, []error{warn(true, "%w", errNameNotText)}
	}
	dir := filepath.Dir(p)
	parent := filepath.Base(dir)
	if name == "" {
		name = parent
	}
	// Problems are collected first and marked skipped at the end if the
	// skill cannot load (no description).
	var problems []string
	missingDesc := strings.TrimSpace(desc) == ""
	if missingDesc {
		problems = append(problems, "skill has no description")
	} else if n := utf16Len(desc); n > maxSkillDescriptionLen {
		problems = append(problems, fmt.Sprintf("skill description is %d characters long; the limit is %d", n, maxSkillDescriptionLen))
	}
	problems = append(problems, validateSkillName(name, parent)...)
	var errs []error
	for _, msg := range problems {
		errs = append(errs, &LoadError{Path: p, Err: errors.New(msg), Skipped: missingDesc})
	}
	if missingDesc {
		return nil, errs
	}
	return &Skill{
		Name:                   name,
		Description:            desc,
		Path:                   p,
		BaseDir:                dir,
		Location:               info.location(),
		SourceInfo:             info,
		DisableModelInvocation: fm["disable-model-invocation"] == true,
	}, errs
}

// validateSkillName applies the Agent Skills naming rules; each broken rule
// is one message.
func validateSkillName(name, parent string) []string {
	var out []string
	if name != parent {
		out = append(out, fmt.Sprintf("skill name %q differs from its directory %q", name, parent))
	}
	if n := utf16Len(name); n > maxSkillNameLen {
		out = append(out, fmt.Sprintf("skill name is %d characters long; the limit is %d", n, maxSkillNameLen))
	}
	if !skillNameRe().MatchString(name) {
		out = append(out, "skill name may only use lowercase letters a-z, digits and hyphens")
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		out = append(out, "skill name may not begin or end with a hyphen")
	}
	if strings.Contains(name, "--") {
		out = append(out, "skill name may not contain two hyphens in a row")
	}
	return out
}

// utf16Len counts like JavaScript's String.length, which pi's limits use.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// ExpandSkill replaces "/skill:name args" with the named skill's body in a
// <skill name=… location=…> block (saying what relative paths are relative
// to), followed by the arguments after a blank line when there are any.
// Text that is not a skill command or names no known skill is returned
// unchanged; so is the text when the skill file cannot be read, with the
// error.
func ExpandSkill(text string, skills []Skill) (string, error) {
	rest, ok := strings.CutPrefix(text, "/skill:")
	if !ok {
		return text, nil
	}
	name, args, _ := strings.Cut(rest, " ")
	args = strings.TrimSpace(args)
	for _, s := range skills {
		if s.Name != name {
			continue
		}
		b, err := regularfile.ReadFile(s.Path)
		if err != nil {
			return text, fmt.Errorf("expanding skill %s: %w", s.Name, err)
		}
		var out strings.Builder
		err = skillBlockTmpl().Execute(&out, struct {
			Name, Path, BaseDir, Body string
		}{s.Name, s.Path, s.BaseDir, strings.TrimSpace(stripFrontmatter(string(b)))})
		if err != nil {
			return text, fmt.Errorf("expanding skill %s: %w", s.Name, err)
		}
		block := strings.TrimSuffix(out.String(), "\n")
		if args != "" {
			block += "\n\n" + args
		}
		return block, nil
	}
	return text, nil
}

// FormatSkillsForPrompt renders the system-prompt section that lists the
// skills the model may open with the read tool: name, description and file
// of each, as <available_skills> XML. Skills with DisableModelInvocation are
// left out; with none left the section is "". Pass the result as
// [PromptOptions.Skills].
func FormatSkillsForPrompt(skills []Skill) string {
	var b strings.Builder
	for _, s := range skills {
		if s.DisableModelInvocation {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n\n")
			b.WriteString(strings.TrimRight(skillsIntro, "\n"))
			b.WriteString("\n\n<available_skills>")
		}
		b.WriteString("\n  <skill>\n    <name>")
		b.WriteString(escapeXML(s.Name))
		b.WriteString("</name>\n    <description>")
		b.WriteString(escapeXML(s.Description))
		b.WriteString("</description>\n    <location>")
		b.WriteString(escapeXML(s.Path))
		b.WriteString("</location>\n  </skill>")
	}
	if b.Len() == 0 {
		return ""
	}
	b.WriteString("\n</available_skills>")
	return b.String()
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func escapeXML(s string) string { return xmlEscaper.Replace(s) }
