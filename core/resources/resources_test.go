package resources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadContextFilesOrder(t *testing.T) {
	root := t.TempDir()
	agentDir := filepath.Join(root, "agent")
	proj := filepath.Join(root, "work", "proj")
	sub := filepath.Join(proj, "sub")
	require.NoError(t, os.MkdirAll(agentDir, 0o755))
	require.NoError(t, os.MkdirAll(sub, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(agentDir, "AGENTS.md"), []byte("global"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "work", "CLAUDE.md"), []byte("work"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(proj, "AGENTS.md"), []byte("proj"), 0o644))
	// AGENTS.md wins over CLAUDE.md in the same directory.
	require.NoError(t, os.WriteFile(filepath.Join(proj, "CLAUDE.md"), []byte("ignored"), 0o644))

	files, warns := LoadContextFiles(agentDir, sub)
	require.Empty(t, warns)
	var got []string
	for _, f := range files {
		got = append(got, f.Content)
	}
	assert.Equal(t, []string{"global", "work", "proj"}, got)
}

// systemPrompt is the prompt's text as the host makes it: the sections'
// texts, concatenated.
func systemPrompt(o PromptOptions) string {
	var b strings.Builder
	for _, s := range BuildSystemSections(o) {
		b.WriteString(s.Text)
	}
	return b.String()
}

func TestSystemPrompt(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	p := systemPrompt(PromptOptions{
		Tools:        []ToolLine{{"read", "read files"}, {"bash", "run commands"}, {"edit", "edit"}},
		Append:       "EXTRA",
		ContextFiles: []ContextFile{{Path: "/p/AGENTS.md", Content: "be nice"}},
		Cwd:          "/p",
		Now:          now,
	})
	assert.Contains(t, p, "- read: read files")
	assert.Contains(t, p, "Explore files with bash")
	assert.Contains(t, p, "EXTRA")
	assert.Contains(t, p, "## /p/AGENTS.md\n\nbe nice")
	assert.True(t, strings.HasSuffix(p, "Current date: 2026-11-21\nCurrent working directory: /p"), p)
	assert.Less(t, strings.Index(p, "EXTRA"), strings.Index(p, "# Project Context"))

	more := systemPrompt(PromptOptions{Cwd: "/p", MoreDirs: []string{"/lib", "/docs"}, Now: now})
	assert.True(t, strings.HasSuffix(more, "Current working directory: /p\nAlso part of the project (use absolute paths): /lib, /docs"), more)

	custom := systemPrompt(PromptOptions{Custom: "You are a cat.", Tools: []ToolLine{{"read", "read files"}}, Cwd: "/p", Now: now, Skills: "\n<skills/>"})
	assert.True(t, strings.HasPrefix(custom, "You are a cat."))
	assert.NotContains(t, custom, "Tools you can call")
	assert.Contains(t, custom, "<skills/>")

	none := systemPrompt(PromptOptions{Cwd: "/p", Now: now})
	assert.Contains(t, none, "no tools are enabled")
	assert.NotContains(t, none, "Explore files")
}

// Extensions' sections follow ours in tags, in order; one named like ours
// replaces it where it stands; empty or badly named ones are left out.
func TestBuildSystemSectionsExtra(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	secs := BuildSystemSections(PromptOptions{Cwd: "/p", Now: now, Append: "more", Extra: []PromptSection{
		{Name: "tool_guidance", Text: "- read first"},
		{Name: "addendum", Text: "replaced"},
		{Name: "Bad Name", Text: "x"},
		{Name: "preamble", Text: "x"},
		{Name: "empty"},
	}})
	var names []string
	for _, s := range secs {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"preamble", "addendum", "cwd", "tool_guidance"}, names)
	assert.Equal(t, "\n\n<addendum>\nreplaced\n</addendum>", secs[1].Text)
	assert.Equal(t, "\n\n<tool_guidance>\n- read first\n</tool_guidance>", secs[3].Text)
	assert.NoError(t, CheckSectionName("a-b_1"))
	assert.Error(t, CheckSectionName("preamble"))
	assert.Error(t, CheckSectionName("1st"))
}
