package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gopi-dev/gopi/core/host"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/models"
	"github.com/gopi-dev/gopi/core/sandbox"
	"github.com/gopi-dev/gopi/core/tools"
)

// resolved is what one invocation runs with, decided once from the
// command line and the settings before anything is built. A flag beats
// the setting it overrides; the settings are the user's settings.json
// with a trusted project's .pi/settings.json merged over it (see
// [loadSettings]).
type resolved struct {
	// opts are the host's options as far as the flags and settings decide
	// them (Settings, model, thinking level, scope, tool selection,
	// approval, prompt inputs, trust); buildHost adds what it builds from
	// them: tools, session, context files, extensions, callbacks.
	opts host.Options
	// shell are the options every built-in tool is built with, so the
	// bash tool runs commands as the user's bash command does (shellPath,
	// shellCommandPrefix).
	shell []tools.Option
	// sessionDir is where sessions go; "" means the agent dir's default.
	sessionDir string
	// sandbox is the sandbox mode asked for: --sandbox, else the user's
	// settings', else the dialect's default (a project's settings may
	// only tighten it, see sandbox.Resolve).
	sandbox sandbox.Mode
	// sandboxDefault says the mode is the dialect's default
	// (defaultSandbox): neither --sandbox nor the user's settings chose
	// one.
	sandboxDefault bool
}

// defaultApproval is the approval mode when neither --approval nor the
// settings name one: escapes over ACP (its session mode "auto": nothing
// asked before a call, a command the sandbox stopped put to the user),
// off elsewhere, as pi has it (gopi's editors pass --approval).
func defaultApproval(mode string) string {
	if mode == "acp" {
		return string(host.ApprovalEscapes)
	}
	return string(host.ApprovalOff)
}

// defaultSandbox is the sandbox mode when neither --sandbox nor the
// user's settings name one: off for pi's clients (--mode rpc, and the
// print, json and text modes: pi has no sandbox), workspace-write for
// gopi's editors (--mode jsonrpc) and over ACP (--mode acp). On a system
// gopi has no sandbox for yet (sandbox.Supported: not Linux) it is off
// in every mode; an explicit mode there still refuses every command.
func defaultSandbox(mode string) sandbox.Mode {
	if (mode == "jsonrpc" || mode == "acp") && sandbox.ByDefault() {
		return sandbox.WorkspaceWrite
	}
	return sandbox.Off
}

// loadSettings reads the user's settings and, when the project in cwd is
// trusted, the project's over them; an untrusted project's are not read.
func loadSettings(agentDir, cwd string, trusted bool) (host.Settings, []error) {
	projectDir := cwd
	if !trusted {
		projectDir = ""
	}
	return host.LoadSettings(agentDir, projectDir)
}

// resolve decides the host's options for the project in cwd from the
// flags in a and the settings. Settings files that cannot be read and
// patterns that match nothing are warnings on ap.stderr; a flag or
// setting that cannot be honoured (an unknown approval mode, model,
// provider or thinking level) is the error that stops gopi. With
// --api-key it sets the key for the chosen model's provider in the
// registry before the scope, which counts only models with keys, is
// resolved.
func (ap *app) resolve(a *args, cwd string, trusted bool) (resolved, error) {
	settings, problems := loadSettings(ap.agentDir, cwd, trusted)
	for _, p := range problems {
		ap.warn(p)
	}
	approval, err := host.ParseApproval(cmp.Or(a.approval, settings.Approval, defaultApproval(a.mode)))
	if err != nil {
		return resolved{}, err
	}
	if settings.SandboxErr != nil {
		return resolved{}, settings.SandboxErr
	}
	choice, implicit := sandbox.Mode(a.sandbox), false
	if choice == "" && settings.Sandbox != nil {
		choice = sandbox.Mode(settings.Sandbox.Mode)
	}
	if choice == "" {
		choice = defaultSandbox(a.mode)
		implicit = choice != sandbox.Off
	}
	model, thinking, err := ap.resolveModel(a)
	if err != nil {
		return resolved{}, err
	}
	patterns := a.models
	if len(patterns) == 0 {
		patterns = settings.EnabledModels
	}
	var scope []models.ScopedModel
	if len(patterns) > 0 {
		var warns []string
		scope, warns = ap.registry.Scope(patterns)
		for _, w := range warns {
			ap.warn(w)
		}
	}
	return resolved{
		opts: host.Options{
			Cwd:                cwd,
			AgentDir:           ap.agentDir,
			Registry:           ap.registry,
			ToolSelection:      toolSelection(a, settings),
			Model:              model,
			Thinking:           thinking,
			Settings:           settings,
			Scope:              scope,
			Approval:           approval,
			TemplatePaths:      a.templatePaths,
			SkillPaths:         a.skillPaths,
			NoSkills:           a.noSkills,
			NoPromptTemplates:  a.noTemplates,
			UntrustedProject:   !trusted,
			SystemPrompt:       a.systemPrompt,
			AppendSystemPrompt: strings.Join(a.appendSystem, "\n\n"),
		},
		shell:          settings.ShellToolOptions(),
		sessionDir:     sessionDirOf(a, settings, cwd),
		sandbox:        choice,
		sandboxDefault: implicit,
	}, nil
}

// resolveModel is the command line's model and thinking level:
// --provider and --model (a provider alone takes its first model), a
// :level suffix, then --thinking; nil and "" leave the choice to the
// session and the settings (see host.Options). --api-key goes to the
// chosen model's provider, else --provider's, else the default model's.
func (ap *app) resolveModel(a *args) (*llm.Model, llm.ThinkingLevel, error) {
	var model *llm.Model
	var thinking llm.ThinkingLevel
	if a.model != "" || a.provider != "" {
		pattern := a.model
		if pattern == "" {
			m, ok := firstOfProvider(ap.registry, a.provider)
			if !ok {
				return nil, "", fmt.Errorf("no models known for provider %q", a.provider)
			}
			pattern = m.Provider + "/" + m.ID
		}
		res, err := ap.registry.ResolveCLI(a.provider, pattern)
		if err != nil {
			return nil, "", err
		}
		if res.Warning != "" {
			ap.warn(res.Warning)
		}
		model = &res.Model
		thinking = res.Thinking
	}
	if a.apiKey != "" {
		target := a.provider
		if model != nil {
			target = model.Provider
		} else if m, ok := ap.registry.Default(); ok {
			target = m.Provider
		}
		ap.registry.SetAPIKeyOverride(target, a.apiKey)
	}
	if a.thinking != "" {
		l, err := llm.ParseThinkingLevel(a.thinking)
		if err != nil {
			return nil, "", err
		}
		thinking = l
	}
	return model, thinking, nil
}

// warn writes a problem gopi goes on despite to stderr.
func (ap *app) warn(v any) { fmt.Fprintln(ap.stderr, "gopi: warning:", v) }

func firstOfProvider(reg *models.Registry, provider string) (llm.Model, bool) {
	if m, ok := reg.Default(); ok && m.Provider == provider {
		return m, true
	}
	for _, m := range reg.All() {
		if m.Provider == provider {
			return m, true
		}
	}
	return llm.Model{}, false
}

// sessionDirOf is where sessions go, as pi decides it: --session-dir,
// then $PI_CODING_AGENT_SESSION_DIR, then settings.json's sessionDir
// (relative to the cwd); "" means the agent dir's default.
func sessionDirOf(a *args, s host.Settings, cwd string) string {
	dir := a.sessionDir
	if dir == "" {
		dir = os.Getenv("PI_CODING_AGENT_SESSION_DIR")
	}
	if dir == "" {
		dir = s.SessionDir
	}
	if dir != "" && !filepath.IsAbs(dir) {
		dir = filepath.Join(cwd, dir)
	}
	return dir
}

// toolSelection is pi's choice of tools from --tools, --no-tools,
// --no-builtin-tools, --exclude-tools and the defaultTools setting.
func toolSelection(a *args, settings host.Settings) tools.Selection {
	o := tools.SelectOptions{
		Tools:     a.tools,
		NoTools:   a.noTools,
		NoBuiltin: a.noBuiltinTools,
		Exclude:   a.excludeTools,
	}
	if settings.DefaultTools != nil {
		o.Defaults = *settings.DefaultTools
		if o.Defaults == nil {
			o.Defaults = []string{}
		}
	}
	return tools.Select(o)
}
