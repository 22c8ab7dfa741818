package main

import (
	"fmt"
	"strings"
)

// args are gopi's command-line options, pi-compatible. The parser is
// hand-written rather than the flag package because pi's conventions do not
// fit it: short aliases like -nt, "-p" with an optional value, bare words
// as prompt messages and @file arguments. Unknown long flags are kept for
// extensions to claim (registerFlag); one that no extension registers is
// an error once they have loaded.
type args struct {
	help, version  bool
	mode           string // "", "text", "print", "json", "rpc", "jsonrpc"
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
	// approve is --approve (true) or --no-approve (false): trust the
	// project's .pi resources or not, this time; nil when neither.
	approve *bool
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
		switch arg {
		case "--help", "-h":
			a.help = true
		case "--version", "-v":
			a.version = true
		case "--mode":
			if v, ok := next(&i); ok {
				switch v {
				case "text", "print", "json", "rpc", "jsonrpc":
					a.mode = v
				default:
					a.errors = append(a.errors, fmt.Sprintf("unknown mode %q (want rpc, jsonrpc, json, print or text)", v))
				}
			}
		case "--continue", "-c":
			a.continue_ = true
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
		case "--tools", "-t":
			if v, ok := next(&i); ok {
				a.tools = splitList(v)
			}
		case "--thinking":
			a.thinking, _ = next(&i)
		case "--approval":
			a.approval, _ = next(&i)
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
		case "--approve", "--no-approve":
			v := arg == "--approve"
			a.approve = &v
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
	return a
}

func takesValue(flag string) bool {
	switch flag {
	case "--mode", "--provider", "--model", "--api-key", "--system-prompt", "--append-system-prompt",
		"--session", "--session-dir", "--models", "--tools", "--thinking", "--approval",
		"--prompt-template", "--skill", "--extension":
		return true
	}
	return false
}

// knownFlags are the long flags the parser accepts, for suggestions.
var knownFlags = []string{
	"--help", "--version", "--mode", "--continue", "--provider", "--model", "--api-key",
	"--system-prompt", "--append-system-prompt", "--no-session", "--session", "--session-dir",
	"--models", "--no-tools", "--tools", "--thinking", "--approval", "--print", "--list-models",
	"--no-context-files", "--prompt-template", "--skill", "--extension", "--stdio", "--full-updates",
	"--no-extensions", "--approve", "--no-approve",
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
  gopi [options] [messages...]
  gopi --mode rpc [options]          serve pi's JSONL protocol on stdin/stdout
  gopi --mode jsonrpc [options]      serve JSON-RPC 2.0 for editors (docs/jsonrpc.md)
  gopi -p "prompt"                   run one prompt and print the final reply

Modes:
  --full-updates                     rpc: whole message in every message_update, as the
                                     older protocol (pi 0.73) sent it; default is pi 1.5's
                                     delta-only updates
  --mode rpc|jsonrpc|json|print      rpc: pi's protocol (JSON-RPC 2.0 detected too);
                                     jsonrpc: JSON-RPC 2.0 only, Content-Length or lines;
                                     json: the event stream of one prompt as JSONL;
                                     print (-p): the final reply as text
Model:
  --provider NAME                    provider of --model (anthropic, openai, google, faux, ...)
  --model PATTERN                    provider/id, an id or part of a name; ":high" sets thinking
  --models P1,P2                     models cycle_model moves through (globs allowed)
  --thinking LEVEL                   off, minimal, low, medium, high, xhigh
  --api-key KEY                      key for the chosen provider (overrides env and auth.json)
  --list-models [PATTERN]            list models and whether they have credentials
Session:
  --no-session                       keep nothing on disk
  --session PATH                     open (or continue) this session file
  --session-dir DIR                  where session files live
  --continue, -c                     continue the most recent session of this directory
Tools and prompt:
  --tools a,b,c                      enable these built-in tools (read,bash,edit,write,grep,find,ls)
  --no-tools                         enable no tools
  --approval off|writes|all          ask the client before tools run (default off)
  --system-prompt TEXT               replace the system prompt
  --append-system-prompt TEXT        add to the system prompt
  --no-context-files                 ignore AGENTS.md / CLAUDE.md
  --prompt-template PATH             load prompt templates from a file or folder (repeatable)
  --skill PATH                       load a skill (SKILL.md or its folder; repeatable)
Extensions (pi's, run by a Node extension host; docs/extensions.md):
  --extension, -e PATH               load a pi extension: file, folder or package (repeatable)
  --no-extensions, -ne               skip discovered and configured extensions (-e still loads)
  --approve / --no-approve           trust this folder's .pi settings, extensions, skills and
                                     prompts this time, or do not (see docs/rpc.md, project trust)
  --NAME [VALUE]                     a flag an extension registered
  gopi extensions install            install the host's Node dependencies into the agent dir
  gopi extensions list               show what would load, and the runtime found
Other:
  --version, --help

Environment: PI_CODING_AGENT_DIR (default ~/.pi/agent), ANTHROPIC_API_KEY,
OPENAI_API_KEY, GEMINI_API_KEY, GOPI_NODE and GOPI_PI_PACKAGE (the extension host). With no credentials gopi uses the offline
"faux" model; send it "help" to see what it can do.
`
