package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host"
	"github.com/gopi-dev/gopi/core/mcp"
	"github.com/gopi-dev/gopi/core/models"
)

// extensions builds the manager of the pi extensions this run loads, or
// nil when there are none. The Node host starts in the background once
// the session runtime is built.
func (ap *app) extensions(a *args, settings host.Settings, cwd string, trusted bool) (*ext.Manager, error) {
	paths := ext.Discover(ext.DiscoverOptions{
		Cwd: cwd, AgentDir: ap.agentDir,
		Explicit: a.extensions, Configured: settings.Extensions, NoDiscovery: a.noExtensions,
		NoProject: !trusted,
	})
	if len(paths) == 0 {
		if len(a.extFlags) > 0 {
			return nil, flagError(a.extFlags[0])
		}
		return nil, nil
	}
	nh := ap.early
	ap.early = nil
	if nh == nil {
		nh = ap.nodeHost(settings, paths, cwd)
	}
	// The host project_trust started may have loaded some of these: it
	// loads the rest.
	nh.Paths = paths
	nh.HookTimeout = time.Duration(settings.ExtensionHost.HookTimeoutMs) * time.Millisecond
	nh.Untrusted = !trusted
	nh.FlagValues = map[string]any{}
	for _, f := range a.extFlags {
		switch {
		case f.hasValue:
			nh.FlagValues[f.name] = f.value
		case f.next != "":
			nh.FlagValues[f.name] = map[string]string{"next": f.next}
		default:
			nh.FlagValues[f.name] = true
		}
	}
	return ext.NewManager(nh), nil
}

// nodeHost is the extension host for paths, with settings' runtime.
func (ap *app) nodeHost(settings host.Settings, paths []string, cwd string) *ext.NodeHost {
	return &ext.NodeHost{
		Find: ext.RuntimeOptions{
			Node: settings.ExtensionHost.Node, PiPackage: settings.ExtensionHost.PiPackage,
			AgentDir: ap.agentDir, Getenv: os.Getenv,
		},
		Paths:       paths,
		Cwd:         cwd,
		HookTimeout: time.Duration(settings.ExtensionHost.HookTimeoutMs) * time.Millisecond,
		Log:         ap.stderr,
	}
}

// claimFlags waits for the extensions when the command line has flags
// gopi does not know, and fails on any no extension registered, as pi
// does. A word after a boolean flag is a message again.
func (ap *app) claimFlags(a *args, h *host.Host) error {
	if len(a.extFlags) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), ext.DefaultLoadTimeout+5*time.Second)
	defer cancel()
	if err := h.WaitExtensions(ctx); err != nil {
		return fmt.Errorf("waiting for the extensions to load: %w", err)
	}
	flags := h.ExtensionFlags()
	for _, f := range a.extFlags {
		i := slices.IndexFunc(flags, func(x ext.Flag) bool { return x.Name == f.name })
		if i < 0 {
			return flagError(f)
		}
		if flags[i].Type == "boolean" && f.next != "" {
			a.messages = append(a.messages, f.next)
		}
	}
	return nil
}

func flagError(f extFlag) error {
	return usageError(unknownFlag("--" + f.name))
}

// usageError is a command-line mistake found after parsing: gopi exits 2
// with a pointer to --help, as for those found while parsing.
type usageError string

func (e usageError) Error() string { return string(e) }

// piVersionForHost is the pi package `gopi extensions install` installs:
// the version gopi's extension host is tested with.
const piVersionForHost = "1.6.0"

// runExtensionsCommand is `gopi extensions install|list`.
func runExtensionsCommand(argv []string, stdout, stderr io.Writer) int {
	agentDir := models.AgentDir(os.Getenv)
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "gopi extensions: say install or list (gopi --help)")
		return 2
	}
	switch argv[0] {
	case "install":
		offline := slices.Contains(argv[1:], "--offline")
		return installHost(agentDir, offline, stdout, stderr)
	case "list":
		return listExtensions(agentDir, argv[1:], stdout)
	}
	fmt.Fprintf(stderr, "gopi extensions: unknown subcommand %q (install or list)\n", argv[0])
	return 2
}

// installHost installs pi's package and a Node for this platform into the
// agent dir with npm, where the extension host finds them.
func installHost(agentDir string, offline bool, stdout, stderr io.Writer) int {
	npm, err := exec.LookPath("npm")
	if err != nil {
		fmt.Fprintln(stderr, "gopi extensions install: npm is needed (it comes with Node.js); or point GOPI_PI_PACKAGE and GOPI_NODE at an existing pi installation")
		return 1
	}
	dir := ext.InstallDir(agentDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(stderr, "gopi extensions install:", err)
		return 1
	}
	manifest := filepath.Join(dir, "package.json")
	if _, err := os.Stat(manifest); err != nil {
		body := `{"name":"gopi-extension-host","private":true,"description":"Node dependencies of gopi's extension host (gopi extensions install)"}` + "\n"
		if err := os.WriteFile(manifest, []byte(body), 0o644); err != nil {
			fmt.Fprintln(stderr, "gopi extensions install:", err)
			return 1
		}
	}
	pkgs := []string{"@earendil-works/pi-coding-agent@" + piVersionForHost, ext.NodePackage() + "@22"}
	args := append([]string{"install", "--no-audit", "--no-fund", "--loglevel=error"}, pkgs...)
	if offline {
		args = append(args, "--offline")
	}
	fmt.Fprintf(stdout, "installing %s into %s\n", strings.Join(pkgs, " and "), dir)
	cmd := exec.Command(npm, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(stderr, "gopi extensions install: npm failed:", err)
		return 1
	}
	rt, err := ext.FindRuntime(context.Background(), ext.RuntimeOptions{AgentDir: agentDir, Getenv: func(string) string { return "" }})
	if err != nil {
		fmt.Fprintln(stderr, "gopi extensions install:", err)
		return 1
	}
	fmt.Fprintf(stdout, "extension host ready: node %s (%s), pi %s (%s)\n", rt.NodeVersion, rt.Node, rt.PiVersion, rt.PiPackage)
	return 0
}

// listExtensions prints what would load in the current directory and the
// runtime the host would use; with a runtime, it loads the extensions and
// prints what they registered (tools, commands, flags, shortcuts, the
// events they handle) and what failed to load.
func listExtensions(agentDir string, argv []string, stdout io.Writer) int {
	cwd, _ := os.Getwd()
	a := parseArgs(argv)
	trusted := projectTrusted(agentDir, a, cwd, stdout, nil)
	settings, _ := loadSettings(agentDir, cwd, trusted)
	paths := ext.Discover(ext.DiscoverOptions{
		Cwd: cwd, AgentDir: agentDir, Explicit: a.extensions, Configured: settings.Extensions, NoDiscovery: a.noExtensions,
		NoProject: !trusted,
	})
	if len(paths) == 0 {
		fmt.Fprintln(stdout, "extensions: none")
	} else {
		fmt.Fprintln(stdout, "extensions:")
		for _, p := range paths {
			fmt.Fprintln(stdout, "  "+p)
		}
	}
	rt, err := ext.FindRuntime(context.Background(), ext.RuntimeOptions{
		Node: settings.ExtensionHost.Node, PiPackage: settings.ExtensionHost.PiPackage, AgentDir: agentDir, Getenv: os.Getenv,
	})
	if err != nil {
		fmt.Fprintln(stdout, "host: not available:", err)
		return 1
	}
	fmt.Fprintf(stdout, "host: node %s (%s), pi %s (%s)\n", rt.NodeVersion, rt.Node, rt.PiVersion, rt.PiPackage)
	if len(paths) == 0 {
		return 0
	}
	nh := &ext.NodeHost{Runtime: rt, Paths: paths, Cwd: cwd, Log: io.Discard}
	defer func() { _ = nh.Close() }()
	regs, err := nh.Start(context.Background(), listingPeer{})
	if err != nil {
		fmt.Fprintln(stdout, "loading:", err)
		return 1
	}
	printRegistrations(stdout, regs)
	if len(regs.Errors) > 0 {
		return 1
	}
	return 0
}

// printRegistrations lists what extensions registered, one kind a block.
func printRegistrations(w io.Writer, regs ext.Registrations) {
	block := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintln(w, title+":")
		for _, l := range lines {
			fmt.Fprintln(w, "  "+l)
		}
	}
	described := func(name, desc string) string {
		if desc = strings.TrimSpace(strings.SplitN(desc, "\n", 2)[0]); desc != "" {
			return name + " - " + desc
		}
		return name
	}
	var lines []string
	for _, t := range regs.Tools {
		lines = append(lines, described(t.Name, t.Description))
	}
	block("tools", lines)
	lines = nil
	for _, c := range regs.Commands {
		lines = append(lines, described("/"+c.Name, c.Description))
	}
	block("commands", lines)
	lines = nil
	for _, f := range regs.Flags {
		lines = append(lines, described(fmt.Sprintf("--%s (%s)", f.Name, f.Type), f.Description))
	}
	block("flags", lines)
	lines = nil
	for _, s := range regs.Shortcuts {
		lines = append(lines, described(s.Shortcut, s.Description)+" (no keyboard in gopi: not bound)")
	}
	block("shortcuts", lines)
	if len(regs.Handlers) > 0 {
		block("events", []string{strings.Join(regs.Handlers, ", ")})
	}
	lines = nil
	for _, s := range regs.MCPServers {
		transport := ""
		if srv, err := mcp.ValidateServer(s.Name, s.Config); err == nil {
			transport = srv.Transport()
		}
		lines = append(lines, described(s.Name, transport))
	}
	block("mcp servers", lines)
	lines = nil
	for _, e := range regs.Errors {
		lines = append(lines, e.Path+": "+e.Error)
	}
	block("failed to load", lines)
}

// listingPeer is gopi while it only lists extensions: nothing runs, so
// an extension asking for anything while loading is told so.
type listingPeer struct{}

func (listingPeer) Request(context.Context, ext.Method, json.RawMessage) (any, error) {
	return nil, errListingOnly
}

func (listingPeer) Notification(ext.Method, json.RawMessage) {}
