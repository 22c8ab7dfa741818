package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/gopi-dev/gopi/core/host"
	"github.com/gopi-dev/gopi/core/mcp"
	"github.com/gopi-dev/gopi/core/models"
	"github.com/gopi-dev/gopi/core/resources"
	"github.com/gopi-dev/gopi/internal/regularfile"
)

const mcpUsage = `Usage:
  gopi mcp add NAME [options] -- COMMAND [ARGS...]
  gopi mcp add NAME [options] --url URL
  gopi mcp remove NAME [-l]
  gopi mcp list [--json]
  gopi mcp login NAME [-l] [--timeout SECONDS]
  gopi mcp logout NAME [-l]

Edit and check the MCP servers of mcp.json, and sign in to the ones that use
OAuth, without starting a session (docs/mcp.md). gopi reads the agent
directory's mcp.json and, in a trusted project, .pi/mcp.json; a project server
replaces the user's of that name.

Commands:
  add NAME        add a server, or replace the one of that name
  remove NAME     remove a server
  list            connect to every enabled server (each within its timeout)
                  and show its state, tools and error, with the entries that
                  are invalid; exit status 1 when an entry is invalid or an
                  enabled server did not connect (or needs sign-in)
  login NAME      sign in to an HTTP server with OAuth: gopi prints the
                  authorization URL (it opens no browser), waits on a loopback
                  redirect (127.0.0.1) for the browser's answer, and stores the
                  tokens in mcp-auth.json of the agent directory; sessions use
                  them and refresh them. A URL pasted from the browser's address
                  bar finishes it too, when the browser runs elsewhere.
  logout NAME     delete the server's stored OAuth credentials

add, remove, login and logout:
  -l, --local     add and remove: edit .pi/mcp.json of the current directory
                  instead of the agent directory's mcp.json; login and logout:
                  the server must be the project's

add, a stdio server (the words after -- are the command and its arguments,
not a shell string):
  --env KEY=VALUE               an environment variable (repeatable); values may
                                name variables (${TOKEN}) or be a !command
  --cwd DIR                     working directory (relative: the session's)
add, a streamable HTTP server:
  --url URL                     the server's endpoint (often ending in /mcp)
  --header KEY=VALUE            an HTTP header (repeatable), expanded like --env
  --bearer-token-env-var NAME   send "Authorization: Bearer ${NAME}"
  --oauth-client-id ID          a client registered with the authorization server
                                (else gopi registers one)
  --oauth-client-secret SECRET  its secret (may be ${NAME} or !command)
  --oauth-callback-port PORT    a fixed port for the redirect
                                (http://127.0.0.1:PORT/callback)
  --oauth-client-name NAME      the name to register as (default gopi)
  --oauth-client-registration auto|dcr|cimd
                                auto and dcr register; gopi has no Client ID
                                Metadata Document, so cimd is pi's only
add, either kind:
  --exposure MODE               codemode (pi's default), deferred, direct or hidden
  --description TEXT            what the server offers, in a sentence

list:
  --json          print the list as JSON

login:
  --timeout SECONDS   how long to wait for the sign-in (default 300); Ctrl-C
                      cancels it
`

// mcpHelpHint ends a usage error.
const mcpHelpHint = `Run "gopi mcp --help" for usage.`

// mcpOption is how an option of `gopi mcp` takes its value.
type mcpOption int

const (
	mcpFlag  mcpOption = iota + 1 // no value
	mcpValue                      // one value; the last one given counts
	mcpList                       // repeatable
)

// mcpArgs are the parsed words of one `gopi mcp` command.
type mcpArgs struct {
	positional []string
	values     map[string]string
	lists      map[string][]string
}

func (a mcpArgs) has(name string) bool {
	_, v := a.values[name]
	_, l := a.lists[name]
	return v || l
}

// parseMCPArgs reads --name [value] options as pi's mcp command does: -l
// is --local, "--" ends the options, and so does the maxPositional-th
// positional word (the command of `add NAME COMMAND --its-flag` keeps its
// own flags). --name=value is accepted too.
func parseMCPArgs(argv []string, known map[string]mcpOption, maxPositional int) (mcpArgs, error) {
	a := mcpArgs{values: map[string]string{}, lists: map[string][]string{}}
	for i := 0; i < len(argv); i++ {
		arg := argv[i]
		if arg == "--" || len(a.positional) >= maxPositional {
			if arg == "--" {
				i++
			}
			a.positional = append(a.positional, argv[i:]...)
			break
		}
		if arg == "-l" {
			arg = "--local"
		}
		if !strings.HasPrefix(arg, "--") {
			a.positional = append(a.positional, arg)
			continue
		}
		name, value, inline := strings.Cut(arg[2:], "=")
		kind := known[name]
		switch {
		case kind == 0:
			return a, fmt.Errorf("unknown option %s", argv[i])
		case kind == mcpFlag && inline:
			return a, fmt.Errorf("--%s takes no value", name)
		case kind == mcpFlag:
			a.values[name] = ""
			continue
		case !inline:
			if i+1 >= len(argv) {
				return a, fmt.Errorf("--%s needs a value", name)
			}
			i++
			value = argv[i]
		}
		if kind == mcpList {
			a.lists[name] = append(a.lists[name], value)
		} else {
			a.values[name] = value
		}
	}
	return a, nil
}

// runMCPCommand is `gopi mcp add|remove|list`: pi's shell commands for
// mcp.json, which work without a session. Like pi's, every failure exits
// with status 1.
func runMCPCommand(argv []string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "gopi mcp: "+format+"\n", a...)
		return 1
	}
	if len(argv) == 0 || argv[0] == "help" || slices.Contains(argv, "--help") || slices.Contains(argv, "-h") {
		fmt.Fprint(stdout, mcpUsage)
		return 0
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fail("%v", err)
	}
	c := mcpCommand{agentDir: models.AgentDir(os.Getenv), cwd: cwd, stdout: stdout, stderr: stderr}
	switch argv[0] {
	case "add":
		return c.add(argv[1:])
	case "remove":
		return c.remove(argv[1:])
	case "list":
		return c.list(argv[1:])
	case "login":
		return c.login(argv[1:], false)
	case "logout":
		return c.login(argv[1:], true)
	}
	return fail("unknown command %q (add, remove, list, login or logout). %s", argv[0], mcpHelpHint)
}

type mcpCommand struct {
	agentDir, cwd  string
	stdout, stderr io.Writer
}

func (c mcpCommand) fail(format string, a ...any) int {
	fmt.Fprintf(c.stderr, "gopi mcp: "+format+"\n", a...)
	return 1
}

// trusted decides project trust as a session would without --approve:
// the saved decisions in trust.json, then defaultProjectTrust.
func (c mcpCommand) trusted() bool {
	global, _ := host.LoadSettings(c.agentDir, "")
	home, _ := os.UserHomeDir()
	d, err := resources.ResolveTrust(resources.TrustOptions{
		Cwd: c.cwd, Home: home, AgentDir: c.agentDir, Default: global.DefaultProjectTrust,
	})
	if err != nil {
		fmt.Fprintln(c.stderr, "gopi mcp: warning:", err)
	}
	return d.Trusted
}

// untrustedNote says why the project's file is left out.
func (c mcpCommand) untrustedNote() string {
	return fmt.Sprintf("%s is ignored because the project is not trusted: add it to %s or set defaultProjectTrust to \"always\" (docs/rpc.md, project trust).",
		mcp.ProjectFile(c.cwd), filepath.Join(c.agentDir, "trust.json"))
}

// file is the mcp.json add and remove edit, and its scope.
func (c mcpCommand) file(local bool) (string, mcp.Scope) {
	if local {
		return mcp.ProjectFile(c.cwd), mcp.ScopeProject
	}
	return mcp.GlobalFile(c.agentDir), mcp.ScopeGlobal
}

// httpOnly and stdioOnly are the add options of one kind of server.
var (
	mcpHTTPOnly = []string{"header", "bearer-token-env-var", "oauth-client-id", "oauth-client-secret",
		"oauth-callback-port", "oauth-client-name", "oauth-client-registration"}
	mcpStdioOnly = []string{"env", "cwd"}
)

func (c mcpCommand) add(argv []string) int {
	a, err := parseMCPArgs(argv, map[string]mcpOption{
		"local": mcpFlag, "url": mcpValue, "env": mcpList, "cwd": mcpValue, "header": mcpList,
		"bearer-token-env-var": mcpValue, "oauth-client-id": mcpValue, "oauth-client-secret": mcpValue,
		"oauth-callback-port": mcpValue, "oauth-client-name": mcpValue, "oauth-client-registration": mcpValue,
		"exposure": mcpValue, "description": mcpValue,
	}, 2)
	if err != nil {
		return c.fail("%v. %s", err, mcpHelpHint)
	}
	url, isHTTP := a.values["url"]
	if len(a.positional) == 0 || isHTTP == (len(a.positional) > 1) {
		return c.fail("add needs a server name and either --url URL or -- COMMAND [ARGS...]. %s", mcpHelpHint)
	}
	name := a.positional[0]
	misplaced, kind := mcpHTTPOnly, "HTTP servers (--url)"
	if isHTTP {
		misplaced, kind = mcpStdioOnly, "stdio servers"
	}
	for _, o := range misplaced {
		if a.has(o) {
			return c.fail("--%s only applies to %s", o, kind)
		}
	}
	var s mcp.Server
	if isHTTP {
		s.URL = url
		if s.Headers, err = pairs("header", a.lists["header"]); err != nil {
			return c.fail("%v", err)
		}
		if v, ok := a.values["bearer-token-env-var"]; ok {
			if s.Headers == nil {
				s.Headers = map[string]string{}
			}
			s.Headers["Authorization"] = "Bearer ${" + v + "}"
		}
		var o mcp.OAuth
		o.ClientID = a.values["oauth-client-id"]
		o.ClientSecret = a.values["oauth-client-secret"]
		o.ClientName = a.values["oauth-client-name"]
		o.ClientRegistration = a.values["oauth-client-registration"]
		if p, ok := a.values["oauth-callback-port"]; ok {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				return c.fail("server %q: oauth.callbackPort must be a port number", name)
			}
			o.CallbackPort = n
		}
		if o != (mcp.OAuth{}) {
			s.OAuth = &o
		}
	} else {
		s.Command, s.Args = a.positional[1], a.positional[2:]
		if s.Env, err = pairs("env", a.lists["env"]); err != nil {
			return c.fail("%v", err)
		}
		s.Cwd = a.values["cwd"]
	}
	s.Exposure = mcp.Exposure(a.values["exposure"])
	s.Description = a.values["description"]
	raw, err := json.Marshal(s)
	if err != nil {
		return c.fail("%v", err)
	}
	// What is written is what a session would read: pi's checks now,
	// rather than an error at the next start.
	s, err = mcp.ValidateServer(name, raw) // aliases resolved, as pi writes them
	if err != nil {
		return c.fail("%v", err)
	}
	_, local := a.values["local"]
	path, scope := c.file(local)
	if clash := sameServer(path, name); clash != "" {
		return c.fail("server %q conflicts with %q in %s: names that differ only in - and _ are one server; remove it first", name, clash, path)
	}
	replaced, err := mcp.AddServer(path, name, s)
	if err != nil {
		return c.fail("could not update %s: %v", path, err)
	}
	verb := "Added"
	if replaced {
		verb = "Replaced"
	}
	fmt.Fprintf(c.stdout, "%s %s MCP server %q in %s.\n", verb, scope, name, path)
	if local && !c.trusted() {
		fmt.Fprintln(c.stdout, c.untrustedNote())
	}
	hint := ""
	if s.UsesOAuth() {
		hint = ". If it requires sign-in: gopi mcp login " + name
	}
	fmt.Fprintln(c.stdout, "Check it with: gopi mcp list"+hint)
	return 0
}

// sameServer is a server of the file at path whose name differs from
// name only in "-" and "_" (not name itself), "" when none.
func sameServer(path, name string) string {
	data, err := regularfile.ReadFile(path)
	if err != nil {
		return ""
	}
	var f struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	if json.Unmarshal(data, &f) != nil {
		return ""
	}
	for other := range f.Servers {
		if other != name && mcp.Namespace(other) == mcp.Namespace(name) {
			return other
		}
	}
	return ""
}

// pairs reads the KEY=VALUE words of a repeatable option; nil for none.
func pairs(option string, words []string) (map[string]string, error) {
	if len(words) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--%s expects KEY=VALUE, got %q", option, w)
		}
		m[k] = v
	}
	return m, nil
}

func (c mcpCommand) remove(argv []string) int {
	a, err := parseMCPArgs(argv, map[string]mcpOption{"local": mcpFlag}, 1<<30)
	if err != nil {
		return c.fail("%v. %s", err, mcpHelpHint)
	}
	if len(a.positional) != 1 {
		return c.fail("remove needs one server name: gopi mcp remove NAME [-l]. %s", mcpHelpHint)
	}
	name := a.positional[0]
	_, local := a.values["local"]
	path, scope := c.file(local)
	removed, err := mcp.RemoveServer(path, name)
	if err != nil {
		return c.fail("could not update %s: %v", path, err)
	}
	if removed {
		fmt.Fprintf(c.stdout, "Removed %s MCP server %q from %s.\n", scope, name, path)
		return 0
	}
	msg := fmt.Sprintf("no %s MCP server named %q in %s.", scope, name, path)
	cfg, _ := mcp.Load(c.agentDir, c.cwd, true)
	for _, e := range cfg.Servers {
		if e.Name == name && e.Scope != scope {
			hint := "omit --local"
			if e.Scope == mcp.ScopeProject {
				hint = "use --local"
			}
			msg += fmt.Sprintf(" It is defined in %s; %s.", e.Source, hint)
		}
	}
	return c.fail("%s", msg)
}

// mcpListed is one server as `gopi mcp list --json` prints it: pi's
// report.
type mcpListed struct {
	Name   string    `json:"name"`
	Scope  mcp.Scope `json:"scope"`
	Source string    `json:"source"`
	// Override is the project file that changed a global server.
	Override  string       `json:"override,omitempty"`
	Enabled   bool         `json:"enabled"`
	Exposure  mcp.Exposure `json:"exposure"`
	Transport string       `json:"transport"` // the command line or the URL
	// State is the connection's: connected, failed, needs-auth (pi's
	// value; the text says "needs sign-in") or disabled.
	State mcp.State `json:"state"`
	// Tools are the server's names of its tools; ToolExposure the ones
	// whose exposure is not the server's.
	Tools        []string                `json:"tools"`
	ToolExposure map[string]mcp.Exposure `json:"toolExposure,omitempty"`
	Resources    bool                    `json:"resources,omitempty"`
	Error        string                  `json:"error,omitempty"`
}

// connectAll connects every enabled server at once, each bounded by its
// timeout, and reports what became of it; the servers are stopped before
// it returns.
func (c mcpCommand) connectAll(entries []mcp.Entry) []mcpListed {
	m := mcp.NewManager(mcp.Options{Servers: entries, Cwd: c.cwd, Version: version, Auth: mcp.NewAuthStore(c.agentDir),
		Log: mcp.NewServerLog(filepath.Join(c.agentDir, mcp.LogFile))})
	m.Start()
	_ = m.Wait(context.Background(), nil)
	statuses := m.Statuses()
	tools := m.Tools()
	if err := m.Close(); err != nil {
		fmt.Fprintln(c.stderr, "gopi mcp:", err)
	}
	listed := make([]mcpListed, len(entries))
	for i, e := range entries {
		l := mcpListed{
			Name: e.Name, Scope: e.Scope, Source: e.Source, Override: e.Override,
			Enabled: e.Server.IsEnabled(), Exposure: e.Server.ServerExposure(),
			Transport: e.Server.Transport(), State: mcp.StateDisabled, Tools: []string{},
		}
		for _, st := range statuses {
			if st.Name != e.Name {
				continue
			}
			l.State, l.Resources = st.State, st.Resources
			if st.State != mcp.StateConnected && st.State != mcp.StateNeedsAuth && st.Err != nil {
				// The name is the entry's heading already.
				l.Error = strings.TrimPrefix(st.Err.Error(), fmt.Sprintf("mcp server %q: ", e.Name))
			}
		}
		for _, t := range tools {
			if t.Server() != e.Name {
				continue
			}
			l.Tools = append(l.Tools, t.RemoteName())
			if t.Exposure() != l.Exposure {
				if l.ToolExposure == nil {
					l.ToolExposure = map[string]mcp.Exposure{}
				}
				l.ToolExposure[t.RemoteName()] = t.Exposure()
			}
		}
		listed[i] = l
	}
	return listed
}

// list is pi's `mcp list`: it connects to every enabled server and prints
// its state, tools and error; the status is 1 when an entry is invalid or
// an enabled server did not connect.
func (c mcpCommand) list(argv []string) int {
	a, err := parseMCPArgs(argv, map[string]mcpOption{"json": mcpFlag}, 1<<30)
	if err != nil {
		return c.fail("%v. %s", err, mcpHelpHint)
	}
	if len(a.positional) > 0 {
		return c.fail("list takes no server name: gopi mcp list [--json]. %s", mcpHelpHint)
	}
	trusted := c.trusted()
	cfg, errs := mcp.Load(c.agentDir, c.cwd, trusted)
	note := ""
	if _, err := os.Stat(mcp.ProjectFile(c.cwd)); err == nil && !trusted {
		note = c.untrustedNote()
	}
	codemode := slices.ContainsFunc(cfg.Servers, func(e mcp.Entry) bool {
		return e.Server.IsEnabled() && e.Server.MayExpose(mcp.ExposureCodemode)
	})
	if codemode {
		fmt.Fprintln(c.stderr, "gopi mcp: note: a session reaches tools with codemode exposure (pi's default) from codemode scripts when codemode is on (--tools +codemode), and through tool_search (docs/mcp.md)")
	}
	listed := c.connectAll(cfg.Servers)
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	code := 0
	if len(errs) > 0 {
		code = 1
	}
	for _, l := range listed {
		if l.Enabled && l.State != mcp.StateConnected {
			code = 1
		}
	}
	if _, ok := a.values["json"]; ok {
		out := struct {
			Servers []mcpListed `json:"servers"`
			Errors  []string    `json:"errors"`
			Note    string      `json:"note,omitempty"`
		}{listed, msgs, note}
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(c.stdout, string(b))
		return code
	}
	if len(listed) == 0 && len(errs) == 0 {
		fmt.Fprintf(c.stdout, "No MCP servers configured. Add one with gopi mcp add, or write %s or .pi/mcp.json.\n", mcp.GlobalFile(c.agentDir))
	}
	for _, l := range listed {
		state := string(l.State)
		switch l.State {
		case mcp.StateConnected:
			state = fmt.Sprintf("connected, %d tool%s", len(l.Tools), plural(len(l.Tools)))
		case mcp.StateNeedsAuth:
			state = "needs sign-in"
		}
		fmt.Fprintf(c.stdout, "%s: %s (%s, %s)\n", l.Name, state, l.Exposure, l.Scope)
		fmt.Fprintf(c.stdout, "  %s\n", l.Transport)
		if l.Override != "" {
			fmt.Fprintf(c.stdout, "  project override: %s\n", l.Override)
		}
		if l.State == mcp.StateNeedsAuth {
			fmt.Fprintf(c.stdout, "  sign in with: gopi mcp login %s\n", l.Name)
		}
		if len(l.Tools) > 0 {
			names := make([]string, len(l.Tools))
			for i, t := range l.Tools {
				names[i] = t
				if x, ok := l.ToolExposure[t]; ok {
					names[i] = fmt.Sprintf("%s [%s]", t, x)
				}
			}
			fmt.Fprintf(c.stdout, "  tools: %s\n", strings.Join(names, ", "))
		}
		if l.Resources {
			fmt.Fprintln(c.stdout, "  offers resources")
		}
		if l.Error != "" {
			fmt.Fprintf(c.stdout, "  %s\n", strings.ReplaceAll(l.Error, "\n", "\n  "))
		}
	}
	for _, e := range msgs {
		fmt.Fprintln(c.stdout, "config error:", e)
	}
	if note != "" {
		fmt.Fprintln(c.stdout, note)
	}
	return code
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// defaultLoginTimeout bounds a sign-in (pi's 300 s).
const defaultLoginTimeout = 300 * time.Second

// login is pi's `mcp login` (and, with logout, its `mcp logout`): it
// signs in to a server that uses OAuth, or deletes what a sign-in stored.
func (c mcpCommand) login(argv []string, logout bool) int {
	verb := "login"
	known := map[string]mcpOption{"local": mcpFlag}
	if logout {
		verb = "logout"
	} else {
		known["timeout"] = mcpValue
	}
	a, err := parseMCPArgs(argv, known, 1<<30)
	if err != nil {
		return c.fail("%v. %s", err, mcpHelpHint)
	}
	if len(a.positional) != 1 {
		return c.fail("%s needs one server name: gopi mcp %s NAME [-l]. %s", verb, verb, mcpHelpHint)
	}
	name := a.positional[0]
	trusted := c.trusted()
	cfg, _ := mcp.Load(c.agentDir, c.cwd, trusted)
	i := slices.IndexFunc(cfg.Servers, func(e mcp.Entry) bool { return e.Name == name })
	if i < 0 {
		names := make([]string, len(cfg.Servers))
		for i, e := range cfg.Servers {
			names[i] = e.Name
		}
		configured := strings.Join(names, ", ")
		if configured == "" {
			configured = "none"
		}
		note := ""
		if _, err := os.Stat(mcp.ProjectFile(c.cwd)); err == nil && !trusted {
			note = " " + c.untrustedNote()
		}
		return c.fail("no MCP server named %q.%s Configured: %s.", name, note, configured)
	}
	e := cfg.Servers[i]
	if _, local := a.values["local"]; local && e.Scope != mcp.ScopeProject {
		return c.fail("MCP server %q is defined in %s, not in the project; omit --local.", name, e.Source)
	}
	if e.Server.Auth != nil {
		return c.fail("MCP server %q sends the credentials of provider %q (auth), not an OAuth sign-in of its own.", name, e.Server.Auth.Provider)
	}
	if !e.Server.UsesOAuth() {
		return c.fail("MCP server %q does not use OAuth. Only HTTP servers without an Authorization header do.", name)
	}
	store := mcp.NewAuthStore(c.agentDir)
	if logout {
		removed, err := store.Remove(name, e.Server.URL)
		if err != nil {
			return c.fail("%v", err)
		}
		if removed {
			fmt.Fprintf(c.stdout, "Signed out of MCP server %q.\n", name)
		} else {
			fmt.Fprintf(c.stdout, "No stored credentials for MCP server %q.\n", name)
		}
		return 0
	}
	timeout := defaultLoginTimeout
	if v, ok := a.values["timeout"]; ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0) || f > 1e6 {
			return c.fail("--timeout must be a positive number of seconds")
		}
		timeout = time.Duration(f * float64(time.Second))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	// Connecting first says whether a sign-in is needed (a stored token
	// that works, or one that refreshes, needs none).
	e.Server.Enabled = nil
	m := mcp.NewManager(mcp.Options{Servers: []mcp.Entry{e}, Cwd: c.cwd, Version: version, Auth: store})
	m.Start()
	_ = m.Wait(ctx, nil)
	st := m.Statuses()[0]
	tools := len(m.Tools())
	if err := m.Close(); err != nil {
		fmt.Fprintln(c.stderr, "gopi mcp:", err)
	}
	switch {
	case ctx.Err() != nil:
		return c.fail("sign-in to MCP server %q was cancelled or not completed within %s.", name, timeout)
	case st.State == mcp.StateConnected:
		fmt.Fprintf(c.stdout, "Already signed in to MCP server %q (%d tool%s).\n", name, tools, plural(tools))
		return 0
	case st.State != mcp.StateNeedsAuth:
		msg := "unknown error"
		if st.Err != nil {
			msg = strings.TrimPrefix(st.Err.Error(), fmt.Sprintf("mcp server %q: ", name))
		}
		return c.fail("MCP server %q failed to connect: %s", name, msg)
	}

	// A URL pasted into a terminal finishes the sign-in too, for a
	// browser on another machine (over SSH).
	var pasted chan string
	interactive := false
	if term.IsTerminal(int(os.Stdin.Fd())) {
		interactive = true
		pasted = make(chan string)
		go func() {
			sc := bufio.NewScanner(os.Stdin)
			for sc.Scan() {
				select {
				case pasted <- sc.Text():
				case <-ctx.Done():
					return
				}
			}
			close(pasted)
		}()
	}
	n, err := mcp.SignIn(ctx, mcp.SignInOptions{
		Name: name, Server: e.Server, Store: store, Version: version,
		Pasted: pasted,
		Prompt: func(authURL, redirect string) {
			fmt.Fprintf(c.stdout, "Sign in to MCP server %q in your browser:\n%s\n", name, authURL)
			fmt.Fprintf(c.stderr, "gopi mcp: waiting for the browser to come back to %s (at most %s; Ctrl-C cancels)\n", redirect, timeout)
			if interactive {
				fmt.Fprint(c.stderr, "If the browser cannot reach this machine, paste the URL it was redirected to: ")
			}
		},
		Problem: func(err error) {
			fmt.Fprintf(c.stderr, "gopi mcp: %v; paste the whole URL from the address bar: ", err)
		},
	})
	if interactive {
		fmt.Fprintln(c.stderr)
	}
	if err != nil {
		if ctx.Err() != nil {
			return c.fail("sign-in to MCP server %q was cancelled or not completed within %s.", name, timeout)
		}
		return c.fail("sign-in to MCP server %q failed: %v", name, err)
	}
	fmt.Fprintf(c.stdout, "Signed in to MCP server %q (%d tool%s).\n", name, n, plural(n))
	return 0
}
