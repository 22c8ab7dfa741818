package host

import (
	"encoding/json"
	"strings"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/resources"
)

// promptOptions are the inputs gopi builds its system prompt from, in the
// shape pi gives extensions as before_agent_start's systemPromptOptions:
// handlers change them in place and gopi builds the run's prompt from
// what they leave (the text is gopi's own; the inputs are the same).
type promptOptions struct {
	CustomPrompt       string              `json:"customPrompt,omitempty"`
	ForceSystemPrompt  *string             `json:"forceSystemPrompt,omitempty"`
	SelectedTools      []string            `json:"selectedTools"`
	ToolSnippets       map[string]string   `json:"toolSnippets"`
	ToolGuidelines     map[string][]string `json:"toolGuidelines"`
	PromptGuidelines   []string            `json:"promptGuidelines"`
	AppendSystemPrompt string              `json:"appendSystemPrompt"`
	// Sections are the extensions' own, by name in order (a JSON
	// object whose key order counts); null texts are none.
	Sections     llm.Sections            `json:"sections"`
	Cwd          string                  `json:"cwd"`
	ContextFiles []resources.ContextFile `json:"contextFiles"`
	Skills       []promptSkill           `json:"skills"`
}

type promptSkill struct {
	Name                   string `json:"name"`
	Description            string `json:"description"`
	FilePath               string `json:"filePath"`
	BaseDir                string `json:"baseDir"`
	DisableModelInvocation bool   `json:"disableModelInvocation"`
}

// promptOptions are the inputs of the system prompt now.
func (h *Host) promptOptions() promptOptions {
	lines, guides := h.toolset.promptTools()
	o := promptOptions{
		CustomPrompt:       h.opts.SystemPrompt,
		SelectedTools:      []string{},
		ToolSnippets:       map[string]string{},
		ToolGuidelines:     guides,
		PromptGuidelines:   []string{},
		AppendSystemPrompt: h.opts.AppendSystemPrompt,
		Sections:           llm.Sections{},
		Cwd:                h.opts.Cwd,
		ContextFiles:       append([]resources.ContextFile{}, h.opts.ContextFiles...),
		Skills:             []promptSkill{},
	}
	for _, l := range lines {
		o.SelectedTools = append(o.SelectedTools, l.Name)
		if l.Summary != "" {
			o.ToolSnippets[l.Name] = l.Summary
		}
	}
	for _, s := range h.skills {
		o.Skills = append(o.Skills, promptSkill{Name: s.Name, Description: s.Description, FilePath: s.Path, BaseDir: s.BaseDir, DisableModelInvocation: s.DisableModelInvocation})
	}
	return o
}

// applyPromptOptions makes o the system prompt: its sections (which the
// transcript's system messages record) and its text. Extension sections
// are checked by whoever takes them from an extension (startWithOptions).
func (h *Host) applyPromptOptions(o promptOptions) {
	var extra []resources.PromptSection
	for _, x := range o.Sections {
		if x.Text != nil {
			extra = append(extra, resources.PromptSection{Name: x.Name, Text: *x.Text})
		}
	}
	var lines []resources.ToolLine
	var guidelines []string
	for _, name := range o.SelectedTools {
		lines = append(lines, resources.ToolLine{Name: name, Summary: o.ToolSnippets[name]})
		guidelines = append(guidelines, o.ToolGuidelines[name]...)
	}
	guidelines = append(guidelines, o.PromptGuidelines...)
	skills := make([]resources.Skill, 0, len(o.Skills))
	for _, s := range o.Skills {
		skills = append(skills, resources.Skill{Name: s.Name, Description: s.Description, Path: s.FilePath, BaseDir: s.BaseDir, DisableModelInvocation: s.DisableModelInvocation})
	}
	secs := resources.BuildSystemSections(resources.PromptOptions{
		Custom:       o.CustomPrompt,
		Append:       o.AppendSystemPrompt,
		Tools:        lines,
		Guidelines:   guidelines,
		ContextFiles: o.ContextFiles,
		Skills:       resources.FormatSkillsForPrompt(skills),
		MCPServers:   h.mcp.ServerLines(),
		Cwd:          o.Cwd,
		MoreDirs:     h.roots.get(),
		Extra:        extra,
	})
	var prompt strings.Builder
	sections := make(llm.Sections, len(secs))
	for i, s := range secs {
		prompt.WriteString(s.Text)
		text := s.Text
		sections[i] = llm.Section{Name: s.Name, Text: &text}
	}
	h.mu.Lock()
	h.sections = sections
	h.mu.Unlock()
	h.agent.SetSystemPrompt(prompt.String())
}

// refreshSystemPrompt builds gopi's own system prompt and returns what it
// was built from, as a value and, with extensions, as the JSON they are
// shown (nil without).
func (h *Host) refreshSystemPrompt() (promptOptions, json.RawMessage) {
	o := h.promptOptions()
	h.applyPromptOptions(o)
	if h.exts().Empty() {
		return o, nil
	}
	inputs, _ := json.Marshal(o)
	h.mu.Lock()
	h.promptInputs = inputs
	h.mu.Unlock()
	return o, inputs
}
