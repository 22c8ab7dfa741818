package main

import (
	"fmt"
	"strings"

	"github.com/gopi-dev/gopi/core/sandbox"
	"github.com/gopi-dev/gopi/core/session"
	"github.com/gopi-dev/gopi/core/tools"
	"github.com/gopi-dev/gopi/lspbridge/acp"
)

// args are gopi's command-line options, pi-compatible. The parser is
// hand-written rather than the flag package because pi's conventions do not
// fit it: short aliases like -nt, "-p" with an optional value, bare words
// as prompt messages and @file arguments. Unknown long flags are kept for
// extensions to claim (registerFlag); one that no extension registers is
// an error once they have loaded.
type args struct {
	help, version  bool
	versionJSON    bool   // --json with --version
	mode           string // "", "text", "print", "json", "rpc", "jsonrpc", "acp"
	print          bool
	continue_      bool
	provider       string
	model          string
	apiKey         string
	systemPrompt   string
	appendSystem   []string
	noSession      bool
	session        string
	sessionDir     string
	models         []string
	noTools        bool
	tools          []string
	thinking       string
	approval       string
	sandbox        string
	listModels     bool
	listPattern    string
	noContextFiles bool
	fullUpdates    bool
	templatePaths  []string
	skillPaths     []string
	messages       []string
	fileArgs       []string
	extensions     []string
	noExtensions   bool
	noMCP          bool // --no-mcp: no MCP server connects
	// approve is --approve (true) or --no-approve (false): trust the
	// project's .pi resources or not, this time; nil when neither.
	approve *bool

	resume bool
	// name is --name's value, nameSet whether it was given.
	name    string
	nameSet bool
	// sessionID is --session-id's value, sessionIDSet whether given.
	sessionID    string
	sessionIDSet bool
	fork         string
	// openID is the exact id of a stored session of the cwd to continue
	// (ACP's session/load and session/resume); no flag sets it.
	openID string
	// forked is the copy an ACP session/fork made, the session to run;
	// no flag sets it.
	forked *session.Store
	// lent is what an ACP client lends one session (its file system,
	// terminals and MCP servers); no flag sets it.
	lent acp.SessionConfig
	// noBuiltinTools is -nbt: no built-in tool active by default.
	noBuiltinTools bool
	excludeTools   []string
	noSkills       bool
	noTemplates    bool
	// export is --export's session file; exportSet whether given.
	export    string
	exportSet bool
	offline   bool
	// extFlags are unknown long flags, in order, for extensions.
	extFlags []extFlag
	errors   []string
}

// extFlag is an unknown --name or --name=value; next is the word after a
// bare --name, taken as its value if the flag turns out to be a string
// flag, or given back as a message if it is a boolean one.
type extFlag struct {
	name     string
	value    string
	hasValue bool
	next     string
}

func parseArgs(argv []string) *args {
	a := &args{}
	next := func(i *int) (string, bool) {
		if *i+1 < len(argv) {
			*i++
			return argv[*i], true
		}
		a.errors = append(a.errors, fmt.Sprintf("%s needs a value", argv[*i]))
		return "", false
	}
	splitList := func(s string) []string {
		var out []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	for i := 0; i < len(argv); i++ {
		arg := argv[i]
		// Accept --flag=value for every flag that takes a value.
		if strings.HasPrefix(arg, "--") && strings.Contains(arg, "=") {
			k, v, _ := strings.Cut(arg, "=")
			if takesValue(k) {
				argv = append(argv[:i], append([]string{k, v}, argv[i+1:]...)...)
				arg = k
			}
		}
		if arg == "--" {
			// The rest are prompts and @files, even when they start
			// with "-".
			for _, rest := range argv[i+1:] {
				if strings.HasPrefix(rest, "@") {
					a.fileArgs = append(a.fileArgs, rest[1:])
				} else {
					a.messages = append(a.messages, rest)
				}
			}
			break
		}
		switch arg {
		case "--help", "-h":
			a.help = true
		case "--version", "-v":
			a.version = true
		case "--json":
			// Only with --version: gopi's other output has its own
			// modes (--mode json).
			a.versionJSON = true
		case "--mode":
			if v, ok := next(&i); ok {
				switch v {
				case "text", "print", "json", "rpc", "jsonrpc", "acp":
					a.mode = v
				default:
					a.errors = append(a.errors, fmt.Sprintf("unknown mode %q (want rpc, jsonrpc, acp, json, print or text)", v))
				}
			}
		case "--continue", "-c":
			a.continue_ = true
		case "--resume", "-r":
			a.resume = true
		case "--name", "-n":
			a.name, a.nameSet = next(&i)
		case "--session-id":
			a.sessionID, a.sessionIDSet = next(&i)
		case "--fork":
			a.fork, _ = next(&i)
		case "--provider":
			a.provider, _ = next(&i)
		case "--model":
			a.model, _ = next(&i)
		case "--api-key":
			a.apiKey, _ = next(&i)
		case "--system-prompt":
			a.systemPrompt, _ = next(&i)
		case "--append-system-prompt":
			if v, ok := next(&i); ok {
				a.appendSystem = append(a.appendSystem, v)
			}
		case "--no-session":
			a.noSession = true
		case "--session":
			a.session, _ = next(&i)
		case "--session-dir":
			a.sessionDir, _ = next(&i)
		case "--models":
			if v, ok := next(&i); ok {
				a.models = splitList(v)
			}
		case "--no-tools", "-nt":
			a.noTools = true
		case "--no-builtin-tools", "-nbt":
			a.noBuiltinTools = true
		case "--exclude-tools", "-xt":
			if v, ok := next(&i); ok {
				a.excludeTools = append(a.excludeTools, splitList(v)...)
			}
		case "--tools", "-t":
			if v, ok := next(&i); ok {
				a.tools = splitList(v)
				if a.tools == nil {
					a.tools = []string{} // an empty allowlist: no tool
				}
				if err := tools.CheckSelection(a.tools); err != nil {
					a.errors = append(a.errors, fmt.Sprintf("%s: %v", arg, err))
				}
			}
		case "--thinking":
			a.thinking, _ = next(&i)
		case "--approval":
			a.approval, _ = next(&i)
		case "--sandbox":
			if v, ok := next(&i); ok {
				if _, err := sandbox.ParseMode(v); err != nil {
					a.errors = append(a.errors, fmt.Sprintf("--sandbox: %v", err))
				}
				a.sandbox = v
			}
		case "--print", "-p":
			a.print = true
			if i+1 < len(argv) {
				n := argv[i+1]
				if !strings.HasPrefix(n, "@") && (!strings.HasPrefix(n, "-") || strings.HasPrefix(n, "---")) {
					a.messages = append(a.messages, n)
					i++
				}
			}
		case "--list-models":
			a.listModels = true
			if i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") && !strings.HasPrefix(argv[i+1], "@") {
				i++
				a.listPattern = argv[i]
			}
		case "--no-context-files", "-nc":
			a.noContextFiles = true
		case "--full-updates":
			a.fullUpdates = true
		case "--prompt-template":
			if v, ok := next(&i); ok {
				a.templatePaths = append(a.templatePaths, v)
			}
		case "--skill":
			if v, ok := next(&i); ok {
				a.skillPaths = append(a.skillPaths, v)
			}
		case "--extension", "-e":
			if v, ok := next(&i); ok {
				a.extensions = append(a.extensions, v)
			}
		case "--no-extensions", "-ne":
			a.noExtensions = true
		case "--no-skills", "-ns":
			a.noSkills = true
		case "--no-prompt-templates", "-np":
			a.noTemplates = true
		case "--no-mcp":
			a.noMCP = true
		case "--export":
			a.export, a.exportSet = next(&i)
		case "--offline":
			a.offline = true
		case "--approve", "-a", "--no-approve", "-na":
			v := arg == "--approve" || arg == "-a"
			a.approve = &v
		// pi's terminal UI options: accepted so that pi's clients can
		// start gopi unchanged, and ignored (gopi has no terminal UI).
		case "--theme":
			next(&i)
		case "--use-theme":
			if i+1 >= len(argv) || strings.HasPrefix(argv[i+1], "-") {
				a.errors = append(a.errors, "--use-theme needs a theme name")
			} else {
				i++
			}
		case "--tui-mode":
			if v, ok := next(&i); ok && v != "regular" && v != "fullscreen" {
				a.errors = append(a.errors, fmt.Sprintf("unknown --tui-mode %q (want regular or fullscreen)", v))
			}
		case "--no-themes", "--verbose":
		case "--stdio":
			// vscode-languageclient appends it; stdio is the only transport.
		default:
			switch {
			case strings.HasPrefix(arg, "@"):
				a.fileArgs = append(a.fileArgs, arg[1:])
			case strings.HasPrefix(arg, "--") && len(arg) > 2:
				f := extFlag{name: strings.TrimPrefix(arg, "--")}
				if k, v, ok := strings.Cut(f.name, "="); ok {
					f.name, f.value, f.hasValue = k, v, true
				} else if i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") && !strings.HasPrefix(argv[i+1], "@") {
					i++
					f.next = argv[i]
				}
				a.extFlags = append(a.extFlags, f)
			case strings.HasPrefix(arg, "-") && arg != "-":
				a.errors = append(a.errors, unknownFlag(arg))
			default:
				a.messages = append(a.messages, arg)
			}
		}
	}
	a.checkCombinations()
	return a
}

// checkCombinations rejects the session flags pi does not allow
// together, an invalid --session-id and an empty --name.
func (a *args) checkCombinations() {
	conflicts := func(flag string, withNoSession bool) {
		var with []string
		for _, c := range []struct {
			set  bool
			name string
		}{{a.session != "", "--session"}, {a.continue_, "--continue"}, {a.resume, "--resume"}, {withNoSession && a.noSession, "--no-session"}} {
			if c.set {
				with = append(with, c.name)
			}
		}
		if len(with) > 0 {
			a.errors = append(a.errors, fmt.Sprintf("%s cannot be combined with %s", flag, strings.Join(with, ", ")))
		}
	}
	if a.fork != "" {
		conflicts("--fork", true)
	}
	if a.sessionIDSet {
		conflicts("--session-id", false)
		if err := session.CheckID(a.sessionID); err != nil {
			a.errors = append(a.errors, fmt.Sprintf("--session-id: %v", err))
		}
	}
	if a.nameSet && strings.TrimSpace(a.name) == "" {
		a.errors = append(a.errors, "--name needs a non-empty name")
	}
	if a.versionJSON && !a.version {
		a.errors = append(a.errors, "--json goes with --version (for the event stream as JSON, use --mode json)")
	}
}

func takesValue(flag string) bool {
	switch flag {
	case "--mode", "--provider", "--model", "--api-key", "--system-prompt", "--append-system-prompt",
		"--session", "--session-dir", "--models", "--tools", "--thinking", "--approval",
		"--sandbox", "--prompt-template", "--skill", "--extension", "--name", "--session-id", "--fork",
		"--exclude-tools", "--export", "--theme", "--use-theme", "--tui-mode":
		return true
	}
	return false
}

// knownFlags are the long flags the parser accepts, for suggestions.
var knownFlags = []string{
	"--help", "--version", "--mode", "--continue", "--provider", "--model", "--api-key",
	"--system-prompt", "--append-system-prompt", "--no-session", "--session", "--session-dir",
	"--models", "--no-tools", "--tools", "--thinking", "--approval", "--sandbox", "--print", "--list-models",
	"--no-context-files", "--prompt-template", "--skill", "--extension", "--stdio", "--full-updates",
	"--no-extensions", "--approve", "--no-approve", "--resume", "--name", "--session-id", "--fork",
	"--no-builtin-tools", "--exclude-tools", "--no-skills", "--no-prompt-templates", "--no-mcp",
	"--export", "--json", "--offline", "--theme", "--use-theme", "--no-themes", "--verbose", "--tui-mode",
}

// unknownFlag is the error for a flag gopi does not know, with the
// closest known flag when one is near enough to be a typo.
func unknownFlag(arg string) string {
	name, _, _ := strings.Cut(arg, "=")
	msg := fmt.Sprintf("unknown option: %s", name)
	best, bestDist := "", 3
	for _, k := range knownFlags {
		if d := editDistance(strings.TrimLeft(name, "-"), strings.TrimPrefix(k, "--")); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", best)
	}
	return msg
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

const usage = `gopi — a headless coding agent that speaks pi's RPC protocol

Usage:
  gopi [options] [--] [@files...] [messages...]
  gopi --mode rpc [options]          serve pi's JSONL protocol on stdin/stdout
  gopi --mode jsonrpc [options]      serve JSON-RPC 2.0 for editors (docs/jsonrpc.md)
  gopi --mode acp [options]          serve the Agent Client Protocol (docs/acp.md)
  gopi -p "prompt"                   run one prompt and print the final reply
  gopi --export FILE [OUTPUT]        write a session file as an HTML page and exit

Modes:
  --mode rpc|jsonrpc|acp|json|print|text
                                     rpc: pi's protocol (JSON-RPC 2.0 detected too);
                                     jsonrpc: JSON-RPC 2.0 only, Content-Length or lines;
                                     acp: the Agent Client Protocol v1 (ACP), one
                                     message per line, a session per session/new;
                                     json: the event stream of one prompt as JSONL;
                                     print, text (-p, --print): the final reply as text
  --full-updates                     rpc: whole message in every message_update, as the
                                     older protocol (pi 0.73) sent it; default is pi 1.5's
                                     delta-only updates
  --                                 the rest are messages and @files, even with a leading -
Model:
  --provider NAME                    provider of --model (anthropic, openai, google, faux, ...)
  --model PATTERN                    provider/id, an id or part of a name; ":high" sets thinking
  --models P1,P2                     models cycle_model moves through (globs allowed)
  --thinking LEVEL                   off, minimal, low, medium, high, xhigh
  --api-key KEY                      key for the chosen provider (overrides env and auth.json)
  --list-models [PATTERN]            list models and whether they have credentials
Session:
  --no-session                       keep nothing on disk
  --session PATH|ID                  open (or start) this session file, or the session with
                                     this id or id prefix
  --session-id ID                    the session of this directory with this id, created when
                                     there is none (letters, digits, . _ -)
  --fork PATH|ID                     continue a copy of that session in a new session here
                                     (--session-id picks the new id)
  --continue, -c                     continue the most recent session of this directory
  --resume, -r                       the same as --continue (pi's terminal picker; nobody
                                     can pick here)
  --name, -n NAME                    set the session's display name
  --session-dir DIR                  where session files live
Tools and prompt:
  --tools, -t LIST                   allow only these tools (names or * patterns, built-in or
                                     an extension's); a list of only +name/-name entries
                                     adds to or removes from the default tools instead
  --exclude-tools, -xt LIST          remove these tools (names or * patterns), after the rest
  --no-builtin-tools, -nbt           no built-in tool by default; extension tools stay
  --no-tools, -nt                    no tool at all, built-in or extension (--tools still adds)
  --approval off|escapes|writes|all  ask the client before tools run (default off; escapes over ACP)
  --sandbox off|read-only|workspace-write
                                     confine the bash tool's commands (Linux): write only in
                                     the project and $TMPDIR, or only $TMPDIR; no network
                                     unless settings say so (default off; workspace-write in
                                     --mode jsonrpc and acp; docs/security.md)
  --system-prompt TEXT               replace the system prompt
  --append-system-prompt TEXT        add to the system prompt
  --no-context-files, -nc            ignore AGENTS.md / CLAUDE.md
  --prompt-template PATH             load prompt templates from a file or folder (repeatable)
  --no-prompt-templates, -np         skip the templates of the user's and project's folders
                                     (--prompt-template still loads)
  --skill PATH                       load a skill (SKILL.md or its folder; repeatable)
  --no-skills, -ns                   skip the skills of the user's and project's folders
                                     (--skill still loads)
Extensions (pi's, run by a Node extension host; docs/extensions.md):
  --extension, -e PATH               load a pi extension: file, folder or package (repeatable)
  --no-extensions, -ne               skip discovered and configured extensions (-e still loads)
  --approve, -a / --no-approve, -na  trust this folder's .pi settings, extensions, skills and
                                     prompts this time, or do not (see docs/rpc.md, project trust)
  --NAME [VALUE]                     a flag an extension registered
  gopi extensions install            install the host's Node dependencies into the agent dir
  gopi extensions list               show what would load, and the runtime found
MCP servers (docs/mcp.md):
  gopi mcp add NAME [options] -- COMMAND [ARGS...]   add a stdio server to mcp.json
  gopi mcp add NAME [options] --url URL              add a streamable HTTP server
  gopi mcp remove NAME, gopi mcp list                (-l: the project's .pi/mcp.json;
                                                     gopi mcp --help for the options)
  gopi mcp login NAME, gopi mcp logout NAME          sign in to a server with OAuth, or out
Other:
  --offline                          set PI_OFFLINE=1 for what gopi starts (gopi itself only
                                     goes online to call the model)
  --no-mcp                           connect no MCP server (mcp.json) this run
  --version, -v [--json]            the version, commit and build date (--json: as an object)
  --help, -h
  pi's commands (install, remove, update, list, config, auth) are not gopi's: refused
Accepted and ignored (pi's terminal UI; gopi has none):
  --theme PATH, --use-theme NAME, --no-themes, --tui-mode regular|fullscreen, --verbose

Environment: PI_CODING_AGENT_DIR (default ~/.pi/agent), PI_CODING_AGENT_SESSION_DIR,
PI_OFFLINE, ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, GOPI_NODE and
GOPI_PI_PACKAGE (the extension host). With no credentials gopi uses the offline
"faux" model; send it "help" to see what it can do.
`
