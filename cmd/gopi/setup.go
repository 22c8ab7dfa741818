package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/faux"
	"github.com/gopi-dev/gopi/core/models"
	"github.com/gopi-dev/gopi/core/resources"
	"github.com/gopi-dev/gopi/core/tools"
)

// app is the wired-up runtime for one invocation.
type app struct {
	cwd      string
	agentDir string
	registry *models.Registry
	host     *host.Host
	stderr   io.Writer
	// exitCode is what the process returns when the mode ends without
	// error (a JSON-RPC exit without shutdown sets 1).
	exitCode int
	// early is the extension host project_trust started, until the
	// session's extensions take it over.
	early *ext.NodeHost
	// shutdown closes when an extension asks gopi to exit.
	shutdown     chan struct{}
	shutdownOnce sync.Once
}

// requestShutdown is an extension's ctx.shutdown(): the mode stops
// serving once the command in progress has answered (pi exits after the
// command that asked for it).
func (ap *app) requestShutdown() {
	ap.shutdownOnce.Do(func() {
		go func() {
			// Let the command that asked answer, and a run in
			// progress finish, first.
			time.Sleep(100 * time.Millisecond)
			if h := ap.host; h != nil {
				h.WaitIdle(context.Background())
			}
			close(ap.shutdown)
		}()
	})
}

func setup(ctx context.Context, a *args, stderr io.Writer) (*app, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("finding the working directory: %w", err)
	}
	agentDir := models.AgentDir(os.Getenv)
	overrides := map[string]string{}
	reg, loadErr := models.Load(models.Options{
		AgentDir:        agentDir,
		Getenv:          os.Getenv,
		Builtin:         faux.Models(),
		APIKeyOverrides: overrides,
	})
	if reg == nil {
		return nil, fmt.Errorf("loading models: %w", loadErr)
	}
	if loadErr != nil {
		fmt.Fprintln(stderr, "gopi: warning:", loadErr)
	}
	ap := &app{cwd: cwd, agentDir: agentDir, registry: reg, stderr: stderr, shutdown: make(chan struct{})}
	if a.listModels {
		return ap, nil
	}
	h, err := ap.buildHost(a, cwd)
	if err != nil {
		return nil, err
	}
	ap.host = h
	return ap, nil
}

// buildHost wires the session runtime for cwd from the flags in a.
func (ap *app) buildHost(a *args, cwd string) (*host.Host, error) {
	trusted := projectTrusted(ap.agentDir, a, cwd, ap.stderr, func() (bool, bool, string) { return ap.askExtensions(a, cwd) })
	// A host project_trust started and nothing took over stops here.
	defer func() {
		if ap.early != nil {
			_ = ap.early.Close()
			ap.early = nil
		}
	}()
	projectDir := cwd
	if !trusted {
		projectDir = ""
	}
	settings, problems := host.LoadSettings(ap.agentDir, projectDir)
	for _, p := range problems {
		fmt.Fprintln(ap.stderr, "gopi: warning:", p)
	}
	approvalFlag := a.approval
	if approvalFlag == "" {
		approvalFlag = settings.Approval
	}
	approval, err := host.ParseApproval(approvalFlag)
	if err != nil {
		return nil, err
	}

	var model *llm.Model
	var thinking llm.ThinkingLevel
	if a.model != "" || a.provider != "" {
		pattern := a.model
		if pattern == "" {
			m, ok := firstOfProvider(ap.registry, a.provider)
			if !ok {
				return nil, fmt.Errorf("no models known for provider %q", a.provider)
			}
			pattern = m.Provider + "/" + m.ID
		}
		res, err := ap.registry.ResolveCLI(a.provider, pattern)
		if err != nil {
			return nil, err
		}
		if res.Warning != "" {
			fmt.Fprintln(ap.stderr, "gopi: warning:", res.Warning)
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
			return nil, err
		}
		thinking = l
	}
	scopePatterns := a.models
	if len(scopePatterns) == 0 {
		scopePatterns = settings.EnabledModels
	}
	var scope []models.ScopedModel
	if len(scopePatterns) > 0 {
		var warns []string
		scope, warns = ap.registry.Scope(scopePatterns)
		for _, w := range warns {
			fmt.Fprintln(ap.stderr, "gopi: warning:", w)
		}
	}

	sel := toolSelection(a, settings)
	// The bash tool runs commands with the shell settings, as the user's
	// bash command does (the host has them in Settings).
	toolOpts := settings.ShellToolOptions()
	ts, err := tools.ByName(cwd, sel.ActiveBuiltins(), toolOpts...)
	if err != nil {
		return nil, err
	}

	store, err := openSession(a, sessionDirOf(a, settings, cwd), ap.agentDir, cwd, ap.stderr)
	if err != nil {
		return nil, err
	}
	var ctxFiles []resources.ContextFile
	if !a.noContextFiles {
		var warns []error
		ctxFiles, warns = resources.LoadContextFiles(ap.agentDir, cwd)
		for _, w := range warns {
			fmt.Fprintln(ap.stderr, "gopi: warning:", w)
		}
	}
	exts, err := ap.extensions(a, settings, cwd, trusted)
	if err != nil {
		return nil, err
	}
	if exts.Empty() {
		// Without extensions a name that is not a built-in tool is a
		// typo (pi ignores such names silently).
		for _, n := range append(slices.Clone(a.tools), a.excludeTools...) {
			n = strings.TrimLeft(n, "+-")
			if !strings.Contains(n, "*") && !slices.Contains(tools.AllNames, n) {
				fmt.Fprintf(ap.stderr, "gopi: warning: no tool is called %q (built-in tools: %s)\n", n, strings.Join(tools.AllNames, ", "))
			}
		}
	}
	h, err := host.New(host.Options{
		Cwd:                cwd,
		AgentDir:           ap.agentDir,
		Registry:           ap.registry,
		Tools:              ts,
		AllTools:           allTools(cwd, ts, sel, toolOpts),
		ToolSelection:      sel,
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
		Store:              store,
		SystemPrompt:       a.systemPrompt,
		AppendSystemPrompt: strings.Join(a.appendSystem, "\n\n"),
		ContextFiles:       ctxFiles,
		Report:             func(err error) { fmt.Fprintln(ap.stderr, "gopi: problem:", err) },
		Extensions:         exts,
		Shutdown:           ap.requestShutdown,
	})
	if err != nil {
		_ = exts.Close()
		return nil, err
	}
	if err := ap.claimFlags(a, h); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Close(ctx)
		return nil, err
	}
	return h, nil
}

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

func (ap *app) close() {
	if ap.host == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = ap.host.Close(ctx)
	// A session write that failed (a full disk) is tried once more; if the
	// file still lacks entries, gopi says so and exits non-zero.
	if err := ap.host.SaveSession(); err != nil {
		fmt.Fprintln(ap.stderr, "gopi:", err)
		if ap.exitCode == 0 {
			ap.exitCode = 1
		}
	}
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

// allTools is every built-in tool for extensions to switch on: the
// enabled ones as built, then the others the selection allows.
func allTools(cwd string, enabled []agent.Tool, sel tools.Selection, opts []tools.Option) []agent.Tool {
	out := slices.Clone(enabled)
	for _, t := range tools.All(cwd, opts...) {
		name := t.Spec().Name
		if sel.Allowed(name) && !slices.ContainsFunc(enabled, func(e agent.Tool) bool { return e.Spec().Name == name }) {
			out = append(out, t)
		}
	}
	return out
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
