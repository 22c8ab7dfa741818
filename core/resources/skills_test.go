package resources

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func skillMD(name, desc string) string {
	s := "---\n"
	if name != "" {
		s += "name: " + name + "\n"
	}
	if desc != "" {
		s += "description: " + desc + "\n"
	}
	return s + "---\n# " + name + "\n\nSteps.\n"
}

func skillsByName(ss []Skill) map[string]Skill {
	m := map[string]Skill{}
	for _, s := range ss {
		m[s.Name] = s
	}
	return m
}

func skillNames(ss []Skill) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

// skillEnv is a temp layout with its own HOME and a git root at cwd, so the
// .agents/skills walk stays inside the test directory.
func skillEnv(t *testing.T) (root, agentDir, cwd, home string) {
	t.Helper()
	root = t.TempDir()
	agentDir = filepath.Join(root, "agent")
	cwd = filepath.Join(root, "repo", "pkg")
	home = filepath.Join(root, "home")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "repo", ".git"), 0o755))
	require.NoError(t, os.MkdirAll(cwd, 0o755))
	require.NoError(t, os.MkdirAll(home, 0o755))
	t.Setenv("HOME", home)
	return root, agentDir, cwd, home
}

func TestLoadSkillsDiscovery(t *testing.T) {
	root, agentDir, cwd, home := skillEnv(t)
	user := filepath.Join(agentDir, "skills")
	proj := filepath.Join(cwd, ".pi", "skills")

	write(t, filepath.Join(user, "alpha", "SKILL.md"), skillMD("alpha", "user alpha"))
	write(t, filepath.Join(user, "alpha", "inner", "SKILL.md"), skillMD("inner", "inside a skill: not searched"))
	write(t, filepath.Join(user, "group", "beta", "SKILL.md"), skillMD("beta", "nested two levels"))
	write(t, filepath.Join(user, "group", "beta.md"), skillMD("", "loose file below the root: not a skill"))
	write(t, filepath.Join(user, "loose.md"), skillMD("loose", "a loose file at the root"))
	write(t, filepath.Join(user, "node_modules", "dep", "SKILL.md"), skillMD("dep", "skipped"))
	write(t, filepath.Join(user, ".cache", "hid", "SKILL.md"), skillMD("hid", "skipped"))
	write(t, filepath.Join(user, "flags", "SKILL.md"), "---\nname: flags\ndescription: hidden from the model\ndisable-model-invocation: true\n---\nbody")
	write(t, filepath.Join(user, ".gitignore"), "drafts/\n")
	write(t, filepath.Join(user, "drafts", "wip", "SKILL.md"), skillMD("wip", "ignored by .gitignore"))
	write(t, filepath.Join(user, "group", ".ignore"), "*.tmp\nold\n")
	write(t, filepath.Join(user, "group", "old", "SKILL.md"), skillMD("old", "ignored by nested .ignore"))

	write(t, filepath.Join(proj, "alpha", "SKILL.md"), skillMD("alpha", "project alpha"))
	write(t, filepath.Join(root, "repo", ".agents", "skills", "gamma", "SKILL.md"), skillMD("gamma", "from the repo root"))
	write(t, filepath.Join(root, "repo", ".agents", "skills", "root.md"), skillMD("root", "agents dirs take no loose files"))
	write(t, filepath.Join(root, ".agents", "skills", "outside", "SKILL.md"), skillMD("outside", "above the git root"))
	write(t, filepath.Join(home, ".agents", "skills", "delta", "SKILL.md"), skillMD("delta", "from ~/.agents"))

	extra := filepath.Join(root, "extra")
	write(t, filepath.Join(extra, "eps", "SKILL.md"), skillMD("eps", "explicit dir"))
	write(t, filepath.Join(extra, "zeta.md"), skillMD("zeta", "explicit loose file"))

	ss, errs := LoadSkills(agentDir, cwd, []string{extra, "nope", filepath.Join(root, "extra", "eps", "SKILL.md")}, true)

	assert.Equal(t, []string{"alpha", "gamma", "flags", "beta", "loose", "delta", "eps", "zeta"}, skillNames(ss))
	m := skillsByName(ss)

	a := m["alpha"]
	assert.Equal(t, "project alpha", a.Description)
	assert.Equal(t, LocationProject, a.Location)
	assert.Equal(t, filepath.Join(proj, "alpha", "SKILL.md"), a.Path)
	assert.Equal(t, filepath.Join(proj, "alpha"), a.BaseDir)
	assert.Equal(t, SourceInfo{Path: a.Path, Source: "auto", Scope: ScopeProject, Origin: OriginTopLevel, BaseDir: filepath.Join(cwd, ".pi")}, a.SourceInfo)

	assert.Equal(t, LocationProject, m["gamma"].Location)
	b := m["beta"]
	assert.Equal(t, LocationUser, b.Location)
	assert.Equal(t, SourceInfo{Path: b.Path, Source: "auto", Scope: ScopeUser, Origin: OriginTopLevel, BaseDir: agentDir}, b.SourceInfo)
	assert.Equal(t, LocationUser, m["delta"].Location)
	assert.Equal(t, agentDir, m["delta"].SourceInfo.BaseDir)
	assert.True(t, m["flags"].DisableModelInvocation)
	assert.False(t, b.DisableModelInvocation)

	e := m["eps"]
	assert.Equal(t, LocationPath, e.Location)
	assert.Equal(t, SourceInfo{Path: e.Path, Source: "local", Scope: ScopeTemporary, Origin: OriginTopLevel, BaseDir: filepath.Join(extra, "eps")}, e.SourceInfo)

	var msgs []string
	for _, err := range errs {
		msgs = append(msgs, err.Error())
	}
	joined := strings.Join(msgs, "\n")
	// loose.md and zeta.md sit in directories named otherwise.
	assert.Contains(t, joined, filepath.Join(user, "loose.md")+`: skill name "loose" differs from its directory "skills"`)
	assert.Contains(t, joined, filepath.Join(extra, "zeta.md")+`: skill name "zeta" differs from its directory "extra"`)
	assert.Contains(t, joined, filepath.Join(cwd, "nope")+": skill path does not exist")
	// The user alpha loses to the project one, reported last.
	last := errs[len(errs)-1]
	assert.ErrorIs(t, last, ErrCollision)
	assert.Contains(t, last.Error(), filepath.Join(user, "alpha", "SKILL.md"))
	assert.Len(t, errs, 4, joined)
}

func TestLoadSkillsValidation(t *testing.T) {
	_, agentDir, cwd, _ := skillEnv(t)
	user := filepath.Join(agentDir, "skills")
	write(t, filepath.Join(user, "nodesc", "SKILL.md"), skillMD("nodesc", ""))
	write(t, filepath.Join(user, "blankdesc", "SKILL.md"), "---\ndescription: '   '\n---\n")
	write(t, filepath.Join(user, "Bad_Name", "SKILL.md"), skillMD("", "name falls back to the directory"))
	write(t, filepath.Join(user, "long", "SKILL.md"), skillMD("long", strings.Repeat("x", 1025)))
	write(t, filepath.Join(user, "broken", "SKILL.md"), "---\nname: broken\ndescription: [unclosed\n---\n")
	write(t, filepath.Join(user, "numeric", "SKILL.md"), "---\nname: 42\ndescription: numbers are not names\n---\n")
	write(t, filepath.Join(user, "ok", "SKILL.md"), "---\r\nname: ok\r\ndescription: windows line ends\r\n---\r\nbody\r\n")

	ss, errs := LoadSkills(agentDir, cwd, nil, true)
	m := skillsByName(ss)
	assert.ElementsMatch(t, []string{"Bad_Name", "long", "ok"}, skillNames(ss))
	assert.Equal(t, "windows line ends", m["ok"].Description)

	byFile := map[string][]*LoadError{}
	for _, err := range errs {
		var le *LoadError
		require.ErrorAs(t, err, &le)
		byFile[filepath.Base(filepath.Dir(le.Path))] = append(byFile[filepath.Base(filepath.Dir(le.Path))], le)
	}
	require.Len(t, byFile["nodesc"], 1)
	assert.True(t, byFile["nodesc"][0].Skipped)
	assert.Contains(t, byFile["nodesc"][0].Error(), "no description")
	require.Len(t, byFile["blankdesc"], 1)
	assert.True(t, byFile["blankdesc"][0].Skipped)
	require.Len(t, byFile["Bad_Name"], 1)
	assert.False(t, byFile["Bad_Name"][0].Skipped, "a bad name is only a warning")
	assert.Contains(t, byFile["Bad_Name"][0].Error(), "lowercase")
	require.Len(t, byFile["long"], 1)
	assert.Contains(t, byFile["long"][0].Error(), "1025")
	require.Len(t, byFile["broken"], 1, "bad YAML is reported once")
	assert.True(t, byFile["broken"][0].Skipped)
	assert.Contains(t, byFile["broken"][0].Error(), filepath.Join(user, "broken", "SKILL.md"))
	require.Len(t, byFile["numeric"], 1)
	assert.True(t, byFile["numeric"][0].Skipped)
	assert.Empty(t, byFile["ok"])
}

func TestValidateSkillName(t *testing.T) {
	cases := []struct {
		name, parent string
		want         []string // substrings, one per expected message
	}{
		{"pdf-tools", "pdf-tools", nil},
		{"a1", "a1", nil},
		{"pdf", "other", []string{"differs"}},
		{"PDF", "PDF", []string{"lowercase"}},
		{"-pdf", "-pdf", []string{"begin or end"}},
		{"pdf-", "pdf-", []string{"begin or end"}},
		{"pdf--x", "pdf--x", []string{"two hyphens"}},
		{"a_b", "a_b", []string{"lowercase"}},
		{strings.Repeat("a", 64), strings.Repeat("a", 64), nil},
		{strings.Repeat("a", 65), strings.Repeat("a", 65), []string{"65 characters"}},
		{"--", "x", []string{"differs", "begin or end", "two hyphens"}},
	}
	for _, c := range cases {
		got := validateSkillName(c.name, c.parent)
		require.Len(t, got, len(c.want), "%q: %v", c.name, got)
		for i, w := range c.want {
			assert.Contains(t, got[i], w, c.name)
		}
	}
}

func TestLoadSkillsSymlinkLoadsOnce(t *testing.T) {
	root, agentDir, cwd, _ := skillEnv(t)
	target := filepath.Join(agentDir, "skills", "real")
	write(t, filepath.Join(target, "SKILL.md"), skillMD("real", "one file"))
	links := filepath.Join(root, "links")
	require.NoError(t, os.MkdirAll(links, 0o755))
	require.NoError(t, os.Symlink(target, filepath.Join(links, "real")))
	// Loops must not hang the walk (two of them would branch exponentially
	// until the kernel's symlink depth limit without the visited set).
	require.NoError(t, os.Symlink(links, filepath.Join(links, "loop")))
	require.NoError(t, os.Symlink(links, filepath.Join(links, "loop2")))
	require.NoError(t, os.Symlink(filepath.Join(root, "gone"), filepath.Join(links, "broken")))

	ss, errs := LoadSkills(agentDir, cwd, []string{links}, true)
	assert.Empty(t, errs)
	require.Len(t, ss, 1)
	assert.Equal(t, LocationUser, ss[0].Location)
}

func TestExpandSkill(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pdf", "SKILL.md")
	write(t, p, "---\r\nname: pdf\r\ndescription: PDFs\r\n---\r\n\r\nRun scripts/x.sh\r\n\r\n")
	skills := []Skill{{Name: "pdf", Path: p, BaseDir: filepath.Dir(p)}}

	block := `<skill name="pdf" location="` + p + `">` + "\n" +
		"Relative paths in this skill resolve against " + filepath.Dir(p) + ".\n\n" +
		"Run scripts/x.sh\n</skill>"

	got, err := ExpandSkill("/skill:pdf", skills)
	require.NoError(t, err)
	assert.Equal(t, block, got)

	got, err = ExpandSkill("/skill:pdf   merge a.pdf and b.pdf  ", skills)
	require.NoError(t, err)
	assert.Equal(t, block+"\n\nmerge a.pdf and b.pdf", got)

	got, err = ExpandSkill("/skill:pdf ", skills)
	require.NoError(t, err)
	assert.Equal(t, block, got, "blank args add nothing")

	for _, text := range []string{"/skill:other x", "/pdf", "skill:pdf", "/skill:"} {
		got, err = ExpandSkill(text, skills)
		require.NoError(t, err)
		assert.Equal(t, text, got)
	}

	require.NoError(t, os.Remove(p))
	got, err = ExpandSkill("/skill:pdf go", skills)
	require.Error(t, err)
	assert.True(t, errors.Is(err, os.ErrNotExist))
	assert.Equal(t, "/skill:pdf go", got)
}

func TestFormatSkillsForPrompt(t *testing.T) {
	assert.Empty(t, FormatSkillsForPrompt(nil))
	assert.Empty(t, FormatSkillsForPrompt([]Skill{{Name: "x", Description: "d", Path: "/x", DisableModelInvocation: true}}))

	got := FormatSkillsForPrompt([]Skill{
		{Name: "a", Description: `Use for <tags> & "quotes" 'too'`, Path: "/s/a/SKILL.md"},
		{Name: "hidden", Description: "not listed", Path: "/s/hidden/SKILL.md", DisableModelInvocation: true},
		{Name: "b", Description: "second", Path: "/s/b/SKILL.md"},
	})
	assert.True(t, strings.HasPrefix(got, "\n\n"), "the section starts after a blank line")
	assert.Contains(t, got, "read tool")
	want := "\n\n<available_skills>\n" +
		"  <skill>\n    <name>a</name>\n    <description>Use for &lt;tags&gt; &amp; &quot;quotes&quot; &apos;too&apos;</description>\n    <location>/s/a/SKILL.md</location>\n  </skill>\n" +
		"  <skill>\n    <name>b</name>\n    <description>second</description>\n    <location>/s/b/SKILL.md</location>\n  </skill>\n" +
		"</available_skills>"
	assert.True(t, strings.HasSuffix(got, want), got)
	assert.NotContains(t, got, "hidden")
}

func TestSystemPromptSkillsNeedRead(t *testing.T) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	section := FormatSkillsForPrompt([]Skill{{Name: "a", Description: "d", Path: "/s/a/SKILL.md"}})
	read := []ToolLine{{"bash", "run"}, {"read", "read files"}}

	with := systemPrompt(PromptOptions{Tools: read, Skills: section, Cwd: "/p", Now: now,
		ContextFiles: []ContextFile{{Path: "/p/AGENTS.md", Content: "ctx"}}})
	assert.Contains(t, with, section+"\nCurrent date: 2026-01-02")
	assert.Less(t, strings.Index(with, "ctx"), strings.Index(with, "<available_skills>"))

	noRead := systemPrompt(PromptOptions{Tools: []ToolLine{{"bash", "run"}}, Skills: section, Cwd: "/p", Now: now})
	assert.NotContains(t, noRead, "<available_skills>")

	custom := systemPrompt(PromptOptions{Custom: "Custom.", Tools: read, Skills: section, Cwd: "/p", Now: now})
	assert.Equal(t, "Custom."+section+"\nCurrent date: 2026-01-02\nCurrent working directory: /p", custom)

	customNoTools := systemPrompt(PromptOptions{Custom: "Custom.", Skills: section, Cwd: "/p", Now: now})
	assert.NotContains(t, customNoTools, "<available_skills>")
}
