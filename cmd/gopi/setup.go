package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/gopi-dev/gopi/core/codemode"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host"
	"github.com/gopi-dev/gopi/core/llm/faux"
	"github.com/gopi-dev/gopi/core/models"
	"github.com/gopi-dev/gopi/core/resources"
	"github.com/gopi-dev/gopi/core/sandbox"
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
	// sessionsOff keeps the warning that sessions cannot be saved to one
	// per process.
	sessionsOff sync.Once
	// toldMu guards told, the lines sayOnce has written.
	toldMu sync.Mutex
	told   map[string]bool
	// shutdown closes when an extension asks gopi to exit.
	shutdown     chan struct{}
	shutdownOnce sync.Once
	// drain, once the mode serves, returns when every command read so
	// far has been answered (the connection's scheduler).
	drain atomic.Pointer[func()]
}

// requestShutdown is an extension's ctx.shutdown(): the mode stops
// serving once the command in progress has answered (pi exits after the
// command that asked for it).
func (ap *app) requestShutdown() {
	ap.shutdownOnce.Do(func() {
		go func() {
			// Let the command that asked answer, and a run in
			// progress finish, first.
			if drain := ap.drain.Load(); drain != nil {
				(*drain)()
			}
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
	ap := &app{cwd: cwd, agentDir: agentDir, stderr: stderr, shutdown: make(chan struct{})}
	ap.checkAgentDir()
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
	ap.registry = reg
	if a.listModels {
		return ap, nil
	}
	if a.mode == "acp" {
		// ACP serves no session of the process's own: each session/new
		// builds the host it needs (acpHost). One built here would only
		// start a second copy of every MCP server and extension. A model
		// or approval flag that cannot be honoured still stops gopi
		// before it serves.
		if _, _, err := ap.resolveModel(a); err != nil {
			return nil, err
		}
		if a.approval != "" {
			if _, err := host.ParseApproval(a.approval); err != nil {
				return nil, err
			}
		}
		return ap, nil
	}
	h, err := ap.buildHost(a, cwd)
	if err != nil {
		return nil, err
	}
	ap.host = h
	return ap, nil
}

// buildHost wires the session runtime for cwd from the flags in a: it
// settles project trust, resolves flags and settings into the host's
// options once (resolve.go), and builds what those options name.
func (ap *app) buildHost(a *args, cwd string) (*host.Host, error) {
	trusted := projectTrusted(ap.agentDir, a, cwd, ap.stderr, func() (bool, bool, string) { return ap.askExtensions(a, cwd) })
	// A host project_trust started and nothing took over stops here.
	defer func() {
		if ap.early != nil {
			_ = ap.early.Close()
			ap.early = nil
		}
	}()
	r, err := ap.resolve(a, cwd, trusted)
	if err != nil {
		return nil, err
	}
	o := r.opts
	if a.lent.FS != nil {
		r.shell = append(r.shell, tools.WithFS(a.lent.FS))
	}
	sw, notes, err := sandbox.NewSwitch(r.sandbox, sandbox.SwitchConfig{User: o.Settings.Sandbox, Project: o.Settings.ProjectSandbox, Cwd: cwd})
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	for _, n := range notes {
		ap.warn(n)
	}
	// The tools confine themselves with the sandbox in force at each
	// call (the host may switch it: an ACP session's mode). While it is
	// on, bash runs commands itself, confined, rather than in a client's
	// terminal, which cannot be confined (tools.OnLocalMachine).
	r.shell = append(r.shell, tools.WithSandboxOf(func() tools.Sandbox { return sw.Current() }))
	if a.lent.Shell != nil {
		r.shell = append(r.shell, tools.WithShell(a.lent.Shell))
	}
	if sb := sw.Current(); sb.Problem() != nil {
		line := fmt.Sprintf("gopi: sandbox %s: %v", sb.Mode(), sb.Problem())
		if r.sandboxDefault {
			line += fmt.Sprintf(" (--mode %s's default sandbox is %s; --sandbox off, or \"sandbox\": {\"mode\": \"off\"} in settings.json, runs commands without one)", a.mode, defaultSandbox(a.mode))
		}
		ap.sayOnce(line)
	}
	o.Sandbox = sw
	o.ToolOptions = r.shell
	o.ToolStarting = a.lent.ToolStarting
	o.AdditionalDirs = a.lent.AdditionalDirs
	if o.Tools, err = tools.ByName(cwd, o.ToolSelection.ActiveBuiltins(), r.shell...); err != nil {
		return nil, err
	}
	o.AllTools = allTools(cwd, o.Tools, o.ToolSelection, r.shell)
	o.Codemode = codemodeOptions(o.ToolSelection, o.Settings)
	if o.Store, err = openSession(a, r.sessionDir, ap.agentDir, cwd, ap.stderr, &ap.sessionsOff); err != nil {
		return nil, err
	}
	if !a.noContextFiles {
		o.ContextFiles = ap.contextFiles(cwd)
	}
	if o.Extensions, err = ap.extensions(a, o.Settings, cwd, trusted); err != nil {
		return nil, err
	}
	if o.Extensions.Empty() {
		ap.warnUnknownTools(a)
	}
	if o.NoMCP = a.noMCP; !o.NoMCP {
		cfg := ap.mcpServers(cwd, trusted)
		autoEnableCodemode(o.Codemode, cfg)
		o.MCPServers = ap.withLentServers(cfg.Servers, a.lent.MCPServers)
	}
	o.Version = version
	o.Report = func(err error) { fmt.Fprintln(ap.stderr, "gopi: problem:", err) }
	o.Shutdown = ap.requestShutdown
	h, err := host.New(o)
	if err != nil {
		_ = o.Extensions.Close()
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

// sayOnce writes line to stderr unless it was written already: what
// each ACP session would repeat.
func (ap *app) sayOnce(line string) {
	ap.toldMu.Lock()
	defer ap.toldMu.Unlock()
	if ap.told[line] {
		return
	}
	if ap.told == nil {
		ap.told = map[string]bool{}
	}
	ap.told[line] = true
	fmt.Fprintln(ap.stderr, line)
}

// contextFiles are the AGENTS.md and CLAUDE.md files for cwd; those that
// cannot be read are warnings.
func (ap *app) contextFiles(cwd string) []resources.ContextFile {
	files, warns := resources.LoadContextFiles(ap.agentDir, cwd)
	for _, w := range warns {
		ap.warn(w)
	}
	return files
}

// codemodeOptions offer the codemode tool when the tool selection lets
// it exist: active when --tools or defaultTools name it (+codemode), as
// settings.json's "codemode" object says.
func codemodeOptions(sel tools.Selection, s host.Settings) *host.CodemodeOptions {
	if !sel.Allowed(codemode.Name) {
		return nil
	}
	o := &host.CodemodeOptions{
		Active:       slices.Contains(sel.Active, codemode.Name) || sel.Allow != nil && sel.Allow(codemode.Name),
		Mode:         s.Codemode.Mode,
		InlineBudget: s.Codemode.InlineBudget,
	}
	if dir, err := os.UserCacheDir(); err == nil {
		o.CacheDir = filepath.Join(dir, "gopi", "codemode")
	}
	return o
}

// warnUnknownTools says which --tools and --exclude-tools names are no
// built-in tool: without extensions to register them they are typos
// (pi ignores such names silently).
func (ap *app) warnUnknownTools(a *args) {
	known := append(slices.Clone(tools.AllNames), codemode.Name)
	for _, n := range append(slices.Clone(a.tools), a.excludeTools...) {
		n = strings.TrimLeft(n, "+-")
		if !strings.Contains(n, "*") && !slices.Contains(known, n) {
			fmt.Fprintf(ap.stderr, "gopi: warning: no tool is called %q (built-in tools: %s)\n", n, strings.Join(tools.AllNames, ", "))
		}
	}
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

// checkAgentDir says once, at start, when the agent directory cannot be
// used: a file lies where it or a folder above it should be. gopi then
// reads nothing from it (its readers take such a path as missing) and
// keeps sessions it would store there in memory, and serves as usual.
// A directory that does not exist yet is fine: it is made when needed.
func (ap *app) checkAgentDir() {
	info, err := os.Stat(ap.agentDir)
	switch {
	case err == nil && info.IsDir(), errors.Is(err, fs.ErrNotExist):
		return
	case err == nil:
		err = errAgentDirNotDir
	}
	ap.sessionsOff.Do(func() {
		fmt.Fprintf(ap.stderr, "gopi: warning: the agent directory %s cannot be used (%v): "+
			"no settings, models, keys, extensions or MCP servers are read from it, and sessions are not saved there\n", ap.agentDir, err)
	})
}
