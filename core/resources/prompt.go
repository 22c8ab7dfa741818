package resources

import (
	_ "embed"
	"path/filepath"
	"strings"
	"text/template"
	"time"
)

var (
	//go:embed prompts/system.md.tmpl
	systemTmplText string
	//go:embed prompts/context.md.tmpl
	contextTmplText string

	systemTmpl  = template.Must(template.New("system").Parse(systemTmplText))
	contextTmpl = template.Must(template.New("context").Parse(contextTmplText))
)

// ToolLine is a tool's one-line summary for the system prompt.
type ToolLine struct {
	Name    string
	Summary string
}

// PromptOptions are the inputs of [BuildSystemPrompt].
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
	// Skills is the section from [FormatSkillsForPrompt], added only when
	// the read tool is among Tools, so the model can open the files.
	Skills string
	Cwd    string
	// Now is the date shown to the model; zero means time.Now().
	Now time.Time
}

// BuildSystemPrompt assembles the system prompt.
func BuildSystemPrompt(o PromptOptions) string {
	var b strings.Builder
	hasTool := func(name string) bool {
		for _, t := range o.Tools {
			if t.Name == name {
				return true
			}
		}
		return false
	}
	if o.Custom != "" {
		b.WriteString(o.Custom)
	} else {
		_ = systemTmpl.Execute(&b, struct {
			Tools      []ToolLine
			Guidelines []string
		}{o.Tools, guidelines(o, hasTool)})
		// The template ends with a newline; keep the body tidy.
		s := strings.TrimRight(b.String(), "\n")
		b.Reset()
		b.WriteString(s)
	}
	if o.Append != "" {
		b.WriteString("\n\n")
		b.WriteString(o.Append)
	}
	if len(o.ContextFiles) > 0 {
		_ = contextTmpl.Execute(&b, o.ContextFiles)
	}
	// As in pi, the skills section needs the read tool, custom prompt or not
	// (pi always passes the session's tools, so its "no tool list" case
	// never arises).
	if o.Skills != "" && hasTool("read") {
		b.WriteString(o.Skills)
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	b.WriteString("\nCurrent date: ")
	b.WriteString(now.Format("2006-01-02"))
	b.WriteString("\nCurrent working directory: ")
	b.WriteString(filepath.ToSlash(o.Cwd))
	return b.String()
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
