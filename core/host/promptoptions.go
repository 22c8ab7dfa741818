package host

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gopi-dev/gopi/core/api"
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

// promptRoom is what the model is told beside the conversation: the
// system prompt and the options it was built from, and the skills and
// prompt templates a prompt may invoke (with the paths they are read
// from, which extensions may add to). It owns them under its own lock and
// is given what it reads.
type promptRoom struct {
	promptConfig

	mu sync.Mutex // guards the fields below
	// skillPaths and templatePaths are the explicit paths, then those
	// extensions offered (resources_discover); base* count gopi's own.
	skillPaths, templatePaths []string
	baseSkills, baseTemplates int
	templates                 []resources.Template
	skills                    []resources.Skill
	// sections are the system prompt's named parts, which system
	// messages record (see systemRecord.with).
	sections llm.Sections
	// inputs are the options gopi's own prompt is built from (not what
	// a run's before_agent_start made of them), as JSON, for extensions'
	// ctx.getSystemPromptOptions(); nil without extensions.
	inputs json.RawMessage
}

// promptConfig is what the prompt room is given.
type promptConfig struct {
	cwd, agentDir                    string
	custom, appended                 string
	contextFiles                     []resources.ContextFile
	untrusted, noSkills, noTemplates bool
	// keepInputs: extensions run, and read the inputs as JSON.
	keepInputs bool
	// tools are the active tools' lines and guidelines (the tool set's).
	tools func() ([]resources.ToolLine, map[string][]string)
	// servers are the MCP servers the prompt names; roots the project's
	// directories besides cwd.
	servers func() []resources.MCPServerLine
	roots   func() []string
	// setPrompt gives the agent the prompt's text.
	setPrompt func(string)
	report    func(error)
	emit      func(api.Event)
}

func newPromptRoom(c promptConfig, skillPaths, templatePaths []string) *promptRoom {
	return &promptRoom{promptConfig: c,
		skillPaths: slices.Clone(skillPaths), templatePaths: slices.Clone(templatePaths),
		baseSkills: len(skillPaths), baseTemplates: len(templatePaths)}
}

// load reads prompt templates and skills (user and project folders,
// unless --no-skills or --no-prompt-templates, and the paths); problems
// with single files are reported once and the files skipped.
func (p *promptRoom) load() {
	discover := func(off bool) resources.Discovery {
		switch {
		case off:
			return resources.DiscoverNone
		case p.untrusted:
			return resources.DiscoverUser
		}
		return resources.DiscoverAll
	}
	p.mu.Lock()
	skillPaths, templatePaths := slices.Clone(p.skillPaths), slices.Clone(p.templatePaths)
	p.mu.Unlock()
	templates, problems := resources.LoadTemplatesFrom(p.agentDir, p.cwd, templatePaths, discover(p.noTemplates))
	for _, e := range problems {
		p.report(fmt.Errorf("prompt template: %w", e))
	}
	skills, problems := resources.LoadSkillsFrom(p.agentDir, p.cwd, skillPaths, discover(p.noSkills))
	for _, e := range problems {
		p.report(fmt.Errorf("skill: %w", e))
	}
	p.mu.Lock()
	p.templates, p.skills = templates, skills
	p.mu.Unlock()
}

// addPaths adds the skills and prompt templates extensions offer; false
// when they offer none.
func (p *promptRoom) addPaths(skills, templates []string) bool {
	if len(skills)+len(templates) == 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.skillPaths = append(p.skillPaths, skills...)
	p.templatePaths = append(p.templatePaths, templates...)
	return true
}

// resetPaths forgets the paths extensions offered (a reload asks them
// again).
func (p *promptRoom) resetPaths() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.skillPaths = p.skillPaths[:p.baseSkills]
	p.templatePaths = p.templatePaths[:p.baseTemplates]
}

// invocable are the prompt templates and skills loaded now.
func (p *promptRoom) invocable() ([]resources.Template, []resources.Skill) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.templates, p.skills
}

// expand turns "/skill:name args" and "/template args" into the text the
// model sees; other input passes through unchanged.
func (p *promptRoom) expand(text string) string {
	if !strings.HasPrefix(text, "/") {
		return text
	}
	templates, skills := p.invocable()
	if expanded, err := resources.ExpandSkill(text, skills); err != nil {
		p.emit(api.ExtensionError{ExtensionPath: skillPath(skills, text), Event: "skill_expansion", Error: err.Error()})
	} else {
		text = expanded
	}
	return resources.ExpandTemplate(text, templates)
}

// currentSections are the system prompt's sections now.
func (p *promptRoom) currentSections() llm.Sections {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sections
}

// currentInputs are the options gopi's own prompt was last built from, as
// extensions read them.
func (p *promptRoom) currentInputs() json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inputs
}

// options are the inputs of the system prompt now.
func (p *promptRoom) options() promptOptions {
	lines, guides := p.tools()
	o := promptOptions{
		CustomPrompt:       p.custom,
		SelectedTools:      []string{},
		ToolSnippets:       map[string]string{},
		ToolGuidelines:     guides,
		PromptGuidelines:   []string{},
		AppendSystemPrompt: p.appended,
		Sections:           llm.Sections{},
		Cwd:                p.cwd,
		ContextFiles:       append([]resources.ContextFile{}, p.contextFiles...),
		Skills:             []promptSkill{},
	}
	for _, l := range lines {
		o.SelectedTools = append(o.SelectedTools, l.Name)
		if l.Summary != "" {
			o.ToolSnippets[l.Name] = l.Summary
		}
	}
	_, skills := p.invocable()
	for _, s := range skills {
		o.Skills = append(o.Skills, promptSkill{Name: s.Name, Description: s.Description, FilePath: s.Path, BaseDir: s.BaseDir, DisableModelInvocation: s.DisableModelInvocation})
	}
	return o
}

// apply makes o the system prompt: its sections (which the
// transcript's system messages record) and its text. Extension sections
// are checked by whoever takes them from an extension (startWithOptions).
func (p *promptRoom) apply(o promptOptions) {
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
		MCPServers:   p.servers(),
		Cwd:          o.Cwd,
		MoreDirs:     p.roots(),
		Extra:        extra,
	})
	var prompt strings.Builder
	sections := make(llm.Sections, len(secs))
	for i, s := range secs {
		prompt.WriteString(s.Text)
		text := s.Text
		sections[i] = llm.Section{Name: s.Name, Text: &text}
	}
	p.mu.Lock()
	p.sections = sections
	p.mu.Unlock()
	p.setPrompt(prompt.String())
}

// refresh builds gopi's own system prompt and returns what it
// was built from, as a value and, with extensions, as the JSON they are
// shown (nil without).
func (p *promptRoom) refresh() (promptOptions, json.RawMessage) {
	o := p.options()
	p.apply(o)
	if !p.keepInputs {
		return o, nil
	}
	inputs, _ := json.Marshal(o)
	p.mu.Lock()
	p.inputs = inputs
	p.mu.Unlock()
	return o, inputs
}

// skillPath is the file of the skill text invokes ("/skill:name ..."), or
// text when no skill has that name.
func skillPath(skills []resources.Skill, text string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(text, "/skill:"), " ")
	for _, s := range skills {
		if s.Name == name {
			return s.Path
		}
	}
	return text
}
