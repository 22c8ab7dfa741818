package resources

import (
	_ "embed"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"text/template"
	"time"
)

var (
	//go:embed prompts/system.md.tmpl
	systemTmplText string
	//go:embed prompts/context.md.tmpl
	contextTmplText string
	//go:embed prompts/mcp_servers.md.tmpl
	mcpServersTmplText string

	systemTmpl     = sync.OnceValue(func() *template.Template { return template.Must(template.New("system").Parse(systemTmplText)) })
	contextTmpl    = sync.OnceValue(func() *template.Template { return template.Must(template.New("context").Parse(contextTmplText)) })
	mcpServersTmpl = sync.OnceValue(func() *template.Template { return template.Must(template.New("mcp_servers").Parse(mcpServersTmplText)) })
)

// ToolLine is a tool's one-line summary for the system prompt.
type ToolLine struct {
	Name    string
	Summary string
}

// MCPServerLine is an MCP server the system prompt lists: one whose tools
// are reached through tool_search, with what it offers in a line.
type MCPServerLine struct {
	Name    string
	Summary string
}

// PromptOptions are the inputs of [BuildSystemSections].
type PromptOptions struct {
	// Custom replaces the default prompt body (--system-prompt); context
	// files, skills, date and cwd are still appended.
	Custom string
	// Append is added after the body (--append-system-prompt).
	Append string
	// Tools are the enabled tools, in order.
	Tools []ToolLine
	// Guidelines are extra bullets (from extensions), after ours.
	Guidelines []string
	// ContextFiles come from [LoadContextFiles].
	ContextFiles []ContextFile
	// MCPServers are listed in the mcp_servers section, when there are
	// any.
	MCPServers []MCPServerLine
	// Skills is the section from [FormatSkillsForPrompt], added only when
	// the read tool is among Tools, so the model can open the files.
	Skills string
	Cwd    string
	// MoreDirs are the project's directories besides Cwd (an ACP
	// session's additionalDirectories), named after it when there are
	// any.
	MoreDirs []string
	// Now is the date shown to the model; zero means time.Now().
	Now time.Time
	// Extra are sections extensions add (pi's systemPromptOptions
	// sections), each shown in tags named after it; one named like a
	// section of ours replaces it in place, the others follow ours in
	// order. Names are checked by [CheckSectionName].
	Extra []PromptSection
}

var sectionName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]*$`) })

// CheckSectionName refuses a name an extension section cannot have, as
// pi does: lower-case letters, digits, - and _, starting with a letter,
// and not "preamble".
func CheckSectionName(name string) error {
	if !sectionName().MatchString(name) || name == "preamble" {
		return fmt.Errorf("%w: %q", ErrSectionName, name)
	}
	return nil
}

// PromptSection is one named part of the system prompt. The names are
// pi 1.5's (preamble, addendum, project_context, skills, cwd), so a
// session's system messages patch the same sections whichever agent wrote
// them.
type PromptSection struct {
	Name string
	Text string
}

// BuildSystemSections assembles the system prompt as its named sections,
// in order; their texts, concatenated, are the prompt the model is given
// (each one begins with the separator it needs). Empty sections are left
// out.
func BuildSystemSections(o PromptOptions) []PromptSection {
	var out []PromptSection
	add := func(name, text string) {
		if text != "" {
			out = append(out, PromptSection{Name: name, Text: text})
		}
	}
	hasTool := func(name string) bool {
		for _, t := range o.Tools {
			if t.Name == name {
				return true
			}
		}
		return false
	}
	if o.Custom != "" {
		add("preamble", o.Custom)
	} else {
		var b strings.Builder
		_ = systemTmpl().Execute(&b, struct {
			Tools      []ToolLine
			Guidelines []string
		}{o.Tools, guidelines(o, hasTool)})
		// The template ends with a newline; keep the body tidy.
		add("preamble", strings.TrimRight(b.String(), "\n"))
	}
	if o.Append != "" {
		add("addendum", "\n\n"+o.Append)
	}
	if len(o.ContextFiles) > 0 {
		var b strings.Builder
		_ = contextTmpl().Execute(&b, o.ContextFiles)
		add("project_context", b.String())
	}
	// As in pi, the skills section needs the read tool, custom prompt or not
	// (pi always passes the session's tools, so its "no tool list" case
	// never arises).
	if o.Skills != "" && hasTool("read") {
		add("skills", o.Skills)
	}
	if len(o.MCPServers) > 0 {
		var b strings.Builder
		_ = mcpServersTmpl().Execute(&b, o.MCPServers)
		add("mcp_servers", strings.TrimRight(b.String(), "\n"))
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	cwd := "\nCurrent date: " + now.Format("2006-01-02") + "\nCurrent working directory: " + filepath.ToSlash(o.Cwd)
	if len(o.MoreDirs) > 0 {
		dirs := make([]string, len(o.MoreDirs))
		for i, d := range o.MoreDirs {
			dirs[i] = filepath.ToSlash(d)
		}
		cwd += "\nAlso part of the project (use absolute paths): " + strings.Join(dirs, ", ")
	}
	add("cwd", cwd)
	for _, x := range o.Extra {
		if x.Text == "" || CheckSectionName(x.Name) != nil {
			continue
		}
		text := "\n\n<" + x.Name + ">\n" + x.Text + "\n</" + x.Name + ">"
		if i := slices.IndexFunc(out, func(s PromptSection) bool { return s.Name == x.Name }); i >= 0 {
			out[i].Text = text
			continue
		}
		out = append(out, PromptSection{Name: x.Name, Text: text})
	}
	return out
}

func guidelines(o PromptOptions, hasTool func(string) bool) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	explore := hasTool("grep") || hasTool("find") || hasTool("ls")
	switch {
	case hasTool("bash") && !explore:
		add("Explore files with bash (ls, rg, find) when you need to look around.")
	case explore:
		add("Look around with grep, find and ls rather than bash: they are quicker and skip ignored files.")
	}
	if hasTool("read") && hasTool("edit") {
		add("Read a file before you edit it, and make each edit's old text long enough to be unique.")
	}
	for _, g := range o.Guidelines {
		add(g)
	}
	add("Keep answers short; say what you changed and where.")
	add("Name files by their paths so the user can find them.")
	return out
}
