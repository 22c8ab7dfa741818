package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// piCLIDoc is pi 1.5.2's command-line reference (1.6.0, today's pi, did not change it),
// kept beside the repository (shared/spec), relative to this package.
var piCLIDoc = filepath.Join("..", "..", "..", "shared", "spec", "pi-1.5.2", "cli.md")

// piFlag is one option of pi's command line as its reference lists it.
type piFlag struct {
	name string
	// value is what the reference shows after the name: "" for none,
	// "<x>" for a required value, "[x]" for an optional one, or a fixed
	// word ("--mode text").
	value string
}

// piSessionFlags reads the options of pi's reference from the sections
// before "## Package commands" (invocation, models, sessions, tools,
// resources, prompts and process): table rows and list items that start
// with a `-flag` code span.
func piSessionFlags(t *testing.T) []piFlag {
	t.Helper()
	data, err := os.ReadFile(piCLIDoc)
	if os.IsNotExist(err) && os.Getenv("CI") == "" {
		t.Skipf("pi's cli.md is not beside the repository (%s); CI has it", piCLIDoc)
	}
	require.NoError(t, err, "pi 1.5.2's cli.md must sit beside the repository under shared/spec")
	doc, _, found := strings.Cut(string(data), "\n## Package commands")
	require.True(t, found, "cli.md has no Package commands section")
	// "| `-p`, `--print` | ..." and "- `-c`, `--continue`<br>".
	lead := regexp.MustCompile("^(?:\\| ((?:`-[^`]*`(?:, )?)+) \\||- ((?:`-[^`]*`(?:, )?)+)<br>$)")
	span := regexp.MustCompile("`(-[^`]*)`")
	var flags []piFlag
	seen := map[string]bool{}
	for _, line := range strings.Split(doc, "\n") {
		m := lead.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		spans := span.FindAllStringSubmatch(m[1]+m[2], -1)
		// The value is written once, after the last spelling.
		_, value, _ := strings.Cut(spans[len(spans)-1][1], " ")
		for _, s := range spans {
			name, _, _ := strings.Cut(s[1], " ")
			key := name + " " + value
			if !seen[key] {
				seen[key] = true
				flags = append(flags, piFlag{name: name, value: value})
			}
		}
	}
	return flags
}

// Issue 25: pi's clients start gopi as their pi with pi's flags (pi-acp
// always passes --no-themes, pi.nvim --no-skills); gopi exited 2 with
// "unknown option". Every option of pi 1.5.2's command line is accepted.
func TestEveryPiFlagIsAccepted(t *testing.T) {
	t.Parallel()
	flags := piSessionFlags(t)
	names := map[string]bool{}
	for _, f := range flags {
		names[f.name] = true
	}
	// The reading above found the document's options, not a few of them.
	for _, want := range []string{"--print", "--export", "--model", "--resume", "--session-id", "--fork",
		"--name", "-n", "--exclude-tools", "-xt", "-nbt", "--no-mcp", "--no-skills", "-ns", "-np",
		"--theme", "--use-theme", "--no-themes", "--no-context-files", "--tui-mode", "--verbose",
		"-a", "-na", "--offline", "--help", "-v", "--"} {
		assert.True(t, names[want], "%s not read from cli.md", want)
	}
	require.GreaterOrEqual(t, len(flags), 50)

	// Values that make sense for each placeholder.
	values := map[string]string{
		"--provider": "faux", "--model": "faux/faux-1", "--api-key": "key", "--thinking": "low",
		"--models": "faux/*", "--session-id": "cli-test", "--session-dir": "sessions",
		"--name": "cli test", "-n": "cli test", "--tools": "read,gr*", "-t": "read,gr*",
		"--exclude-tools": "bash", "-xt": "bash", "--extension": "ext.ts", "-e": "ext.ts",
		"--skill": "skills", "--prompt-template": "prompts", "--theme": "theme.json",
		"--use-theme": "dark", "--tui-mode": "regular", "--system-prompt": "Be brief.",
		"--append-system-prompt": "Be kind.", "--session": "new-session.jsonl",
		"--fork": "source.jsonl", "--export": "source.jsonl", "--list-models": "faux",
	}
	header := `{"type":"session","version":3,"id":"0195b2c1-aaaa-7bbb-8ccc-123456789abc","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/tmp"}` + "\n"
	for _, f := range flags {
		argv := []string{f.name}
		switch {
		case f.value == "":
		case strings.HasPrefix(f.value, "<") || strings.HasPrefix(f.value, "["):
			v, ok := values[f.name]
			require.True(t, ok, "no test value for %s %s", f.name, f.value)
			argv = append(argv, v)
		default:
			argv = append(argv, f.value) // --mode text
		}
		switch {
		case f.name == "--print" || f.name == "-p" || f.name == "--mode":
			argv = append(argv, "reply: ok")
		case f.name == "--export" || f.name == "--list-models" || f.name == "--help" || f.name == "-h" ||
			f.name == "--version" || f.name == "-v":
		default:
			argv = append([]string{"--mode", "rpc"}, argv...)
		}
		t.Run(strings.Join(argv, " "), func(t *testing.T) {
			// Mostly waiting for processes: in parallel.
			t.Parallel()
			cwd := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(cwd, "source.jsonl"), []byte(header), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(cwd, "ext.ts"), []byte("export default function () {}\n"), 0o644))
			cmd := exec.Command(gopiBinary(t), argv...)
			cmd.Dir = cwd
			// No extension runtime: -e ext.ts is then reported and
			// skipped, without starting Node.
			cmd.Env = append(binaryEnv(),
				"PI_CODING_AGENT_DIR="+t.TempDir(), "GOPI_PI_PACKAGE=", "GOPI_NODE=",
				"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "GEMINI_API_KEY=")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			raceFree(t, stderr.String())
			assert.NotContains(t, stderr.String(), "unknown option")
			assert.NoError(t, err, "gopi %s\n%s", strings.Join(argv, " "), stderr.String())
		})
	}
}

// Issue 25: a flag pi does not have stays an error, long or short.
func TestFlagsPiDoesNotHaveAreErrors(t *testing.T) {
	t.Parallel()
	for _, argv := range [][]string{{"--no-such-flag-xyz"}, {"-zz"}, {"-nx"}} {
		code, stderr := runBinary(t, t.TempDir(), t.TempDir(), append([]string{"--mode", "rpc"}, argv...)...)
		assert.Equal(t, 2, code, "%v", argv)
		assert.Contains(t, stderr, "unknown option: "+argv[0])
	}
}

// Issue 25: pi's subcommands are not gopi's; they are refused instead
// of being sent to the model as a prompt, which -- still allows.
func TestPiSubcommandsAreRefused(t *testing.T) {
	t.Parallel()
	for _, argv := range [][]string{{"install", "npm:x"}, {"update"}, {"auth", "check"}, {"config"}, {"list"}} {
		code, stderr := runBinary(t, t.TempDir(), t.TempDir(), argv...)
		assert.Equal(t, 2, code, "%v", argv)
		assert.Contains(t, stderr, "is a pi command", "%v", argv)
	}
	code, out, stderr := runBinaryOut(t, t.TempDir(), t.TempDir(), "--no-session", "-p", "--", "list")
	assert.Equal(t, 0, code, stderr)
	assert.NotEmpty(t, out)
}

// Issue 25: the terminal-only options are accepted and --help says they
// are ignored.
func TestHelpNamesIgnoredTerminalFlags(t *testing.T) {
	t.Parallel()
	code, out, _ := runBinaryOut(t, t.TempDir(), t.TempDir(), "--help")
	require.Equal(t, 0, code)
	_, ignored, found := strings.Cut(out, "Accepted and ignored")
	require.True(t, found, out)
	ignored, _, _ = strings.Cut(ignored, "\n\n")
	for _, f := range []string{"--theme", "--use-theme", "--no-themes", "--tui-mode", "--verbose"} {
		assert.Contains(t, ignored, f)
	}
	for _, f := range []string{"--no-skills", "--no-prompt-templates", "--no-builtin-tools", "--exclude-tools",
		"--session-id", "--fork", "--resume", "--name", "--export", "--offline", "--no-mcp", "-na"} {
		assert.Contains(t, out, f)
	}
}

// requestTools names the tools a model request declared.
func requestTools(r llmtest.Request) []string {
	var out []string
	ts, _ := r.JSON()["tools"].([]any)
	for _, t := range ts {
		out = append(out, t.(map[string]any)["name"].(string))
	}
	return out
}

// Issue 25: pi's tool selection flags: --tools with patterns and the
// +name/-name form, -xt after everything else, -nbt, -nt with --tools,
// and the defaultTools setting's +name entries.
func TestToolSelectionFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args     []string
		settings string
		want     []string
	}{
		{nil, "", []string{"read", "bash", "edit", "write"}},
		// Names first, then the tools patterns match (pi's order).
		{[]string{"--tools", "gr*,ls"}, "", []string{"ls", "grep"}},
		{[]string{"-t", "+grep,-write"}, "", []string{"read", "bash", "edit", "grep"}},
		{[]string{"--exclude-tools", "b*,edit"}, "", []string{"read", "write"}},
		{[]string{"--tools", "*", "-xt", "*e*"}, "", []string{"bash", "find", "ls"}},
		{[]string{"-nbt"}, "", nil},
		{[]string{"--no-builtin-tools", "--tools", "+ls"}, "", []string{"ls"}},
		{[]string{"-nt", "-t", "+find"}, "", []string{"find"}},
		{nil, `{"defaultTools":["+find","-bash"]}`, []string{"read", "edit", "write", "find"}},
		{[]string{"--tools", "+ls"}, `{"defaultTools":["read"]}`, []string{"read", "ls"}},
	} {
		t.Run(strings.Join(tc.args, " ")+tc.settings, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, llmtest.Text("ok"))
			if tc.settings != "" {
				require.NoError(t, os.WriteFile(filepath.Join(w.agentDir, "settings.json"), []byte(tc.settings), 0o644))
			}
			p := w.start(append([]string{"--no-session"}, tc.args...)...)
			p.ok("1", map[string]any{"type": "prompt", "message": "hi"})
			p.idle()
			reqs := w.srv.Requests()
			require.Len(t, reqs, 1, p.transcript())
			assert.Equal(t, tc.want, requestTools(reqs[0]))
			assert.Equal(t, 0, p.exit())
		})
	}
}

// Issue 25: --tools entries are either plain names and patterns or only
// +name/-name entries, and those name one tool each.
func TestToolListErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ list, want string }{
		{"read,+write", "--tools: plain tool names cannot be mixed with +name or -name entries"},
		{"+gr*", "--tools: +name and -name entries name one tool each, not a pattern: +gr*"},
	} {
		code, stderr := runBinary(t, t.TempDir(), t.TempDir(), "--mode", "rpc", "--tools", tc.list)
		assert.Equal(t, 2, code, tc.list)
		assert.Contains(t, stderr, tc.want)
	}
	// A name no tool has is left out, as in pi, and without extensions
	// (which could have it) gopi says so.
	code, stderr := runBinary(t, t.TempDir(), t.TempDir(), "--mode", "rpc", "--tools", "read,grpe")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, `warning: no tool is called "grpe"`)
}

// Issue 25: -ns and -np leave out the skills and prompt templates of the
// user's and the project's folders; --skill and --prompt-template still
// load.
func TestNoSkillsAndNoPromptTemplates(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.trustProject()
	write := func(path, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	skill := func(name string) string {
		return "---\nname: " + name + "\ndescription: The " + name + " skill\n---\nDo it."
	}
	write(filepath.Join(w.agentDir, "prompts", "user-tpl.md"), "user template")
	write(filepath.Join(w.agentDir, "skills", "user-skill", "SKILL.md"), skill("user-skill"))
	write(filepath.Join(w.cwd, ".pi", "prompts", "project-tpl.md"), "project template")
	write(filepath.Join(w.cwd, ".pi", "skills", "project-skill", "SKILL.md"), skill("project-skill"))
	extra := t.TempDir()
	write(filepath.Join(extra, "cli-tpl.md"), "cli template")
	write(filepath.Join(extra, "cli-skill", "SKILL.md"), skill("cli-skill"))

	commands := func(args ...string) []string {
		p := w.start(append([]string{"--no-session", "--prompt-template", filepath.Join(extra, "cli-tpl.md"),
			"--skill", filepath.Join(extra, "cli-skill")}, args...)...)
		var names []string
		for _, c := range p.ok("1", map[string]any{"type": "get_commands"}).(map[string]any)["commands"].([]any) {
			names = append(names, c.(map[string]any)["name"].(string))
		}
		assert.Equal(t, 0, p.exit())
		return names
	}
	// "mcp" is the built-in /mcp command, listed as pi 1.6.0 lists it.
	assert.ElementsMatch(t, []string{"mcp", "project-tpl", "user-tpl", "cli-tpl", "skill:project-skill", "skill:user-skill", "skill:cli-skill"}, commands())
	assert.ElementsMatch(t, []string{"mcp", "project-tpl", "user-tpl", "cli-tpl", "skill:cli-skill"}, commands("-ns"))
	assert.ElementsMatch(t, []string{"mcp", "cli-tpl", "skill:project-skill", "skill:user-skill", "skill:cli-skill"}, commands("--no-prompt-templates"))
	assert.ElementsMatch(t, []string{"mcp", "cli-tpl", "skill:cli-skill"}, commands("--no-skills", "-np"))
	assert.ElementsMatch(t, []string{"cli-tpl", "skill:cli-skill"}, commands("--no-skills", "-np", "--no-mcp"))
}

// Issue 25: --name sets the session's display name (a session_info
// entry, on one line); --session-id opens the cwd's session with that id
// or starts it; --session takes an id or its beginning; --fork copies a
// session into a new one here, --session-id choosing its id.
func TestSessionFlags(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("first reply"), llmtest.Text("second reply"))

	p := w.start("--session-id", "my-id.1", "--name", "  Nightly\nrun ")
	st := p.state("1")
	assert.Equal(t, "my-id.1", st["sessionId"])
	assert.Equal(t, "Nightly run", st["sessionName"])
	file := st["sessionFile"].(string)
	assert.True(t, strings.HasSuffix(file, "_my-id.1.jsonl"), file)
	assert.Equal(t, filepath.Join(w.agentDir, "sessions"), filepath.Dir(filepath.Dir(file)))
	p.ok("2", map[string]any{"type": "prompt", "message": "one"})
	p.idle()
	assert.Equal(t, 0, p.exit())
	assert.Contains(t, p.stderr.String(), `no session of this directory has id "my-id.1"`)
	saved := loadSession(t, file)
	assert.Equal(t, "Nightly run", saved.Name())
	assert.Equal(t, "session_info", string(saved.Entries()[0].Type()), "named before the model is recorded, as pi does")

	// The same id again: that session, not a new one.
	p = w.start("--session-id", "my-id.1")
	st = p.state("1")
	assert.Equal(t, file, st["sessionFile"])
	assert.Len(t, p.messages("2"), 2)
	assert.Equal(t, 0, p.exit())
	assert.NotContains(t, p.stderr.String(), "no session of this directory")

	// --session with the beginning of the id.
	p = w.start("--session", "my-id")
	assert.Equal(t, file, p.state("1")["sessionFile"])
	assert.Equal(t, 0, p.exit())

	// --fork by id, into a new session whose id --session-id picks.
	p = w.start("--fork", "my-id.1", "--session-id", "fork-2", "--name", "Forked")
	st = p.state("1")
	assert.Equal(t, "fork-2", st["sessionId"])
	assert.Equal(t, "Forked", st["sessionName"])
	forked := st["sessionFile"].(string)
	assert.NotEqual(t, file, forked)
	msgs := p.messages("2")
	require.Len(t, msgs, 2)
	assert.Equal(t, "first reply", messageText(msgs[1]))
	p.ok("3", map[string]any{"type": "prompt", "message": "two"})
	p.idle()
	assert.Equal(t, 0, p.exit())
	fs := loadSession(t, forked)
	assert.Equal(t, file, fs.Header().ParentSession)
	assert.Len(t, conversation(fs.Context().Messages), 4)
	assert.Len(t, conversation(loadSession(t, file).Context().Messages), 2, "the source is untouched")

	// A fork into an id that exists, and ids nobody has, are errors.
	code, stderr := runBinary(t, w.cwd, w.agentDir, "--mode", "rpc", "--fork", "my-id.1", "--session-id", "fork-2")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `a session with id "fork-2" already exists`)
	for _, flag := range []string{"--session", "--fork"} {
		code, stderr = runBinary(t, w.cwd, w.agentDir, "--mode", "rpc", flag, "no-such-id")
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, `no session found matching "no-such-id"`)
	}

	// Another directory's session by id: --session says to fork it,
	// --fork does.
	other := t.TempDir()
	code, stderr = runBinary(t, other, w.agentDir, "--mode", "rpc", "--session", "fork-2")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "belongs to "+w.cwd)
	assert.Contains(t, stderr, "--fork fork-2")
	p = startProc(t, other, w.agentDir, "--mode", "rpc", "--model", "scripted/scripted-1", "--fork", "fork-2")
	st = p.state("1")
	assert.Len(t, p.messages("2"), 4)
	assert.Equal(t, 0, p.exit())
	assert.Equal(t, other, loadSession(t, st["sessionFile"].(string)).Cwd())
}

// Issue 25: --resume (pi's terminal picker, which in pi's RPC mode draws
// on stdout and reads stdin as keys) resumes the cwd's most recent
// session, as --continue does.
func TestResumeFlag(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("a reply"))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "hello"})
	p.idle()
	file := p.state("2")["sessionFile"].(string)
	assert.Equal(t, 0, p.exit())
	for _, flag := range []string{"--resume", "-r"} {
		p = w.start(flag)
		assert.Equal(t, file, p.state("1")["sessionFile"], flag)
		assert.Len(t, p.messages("2"), 2)
		assert.Equal(t, 0, p.exit())
	}
}

// Issue 25: the session flags pi refuses together, an invalid
// --session-id and an empty --name are usage errors (exit 2).
func TestSessionFlagConstraints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fork", "x", "--session", "y"}, "--fork cannot be combined with --session"},
		{[]string{"--fork", "x", "-c", "-r"}, "--fork cannot be combined with --continue, --resume"},
		{[]string{"--fork", "x", "--no-session"}, "--fork cannot be combined with --no-session"},
		{[]string{"--session-id", "abc", "--session", "y"}, "--session-id cannot be combined with --session"},
		{[]string{"--session-id", "abc", "--continue"}, "--session-id cannot be combined with --continue"},
		{[]string{"--session-id", "abc", "--resume"}, "--session-id cannot be combined with --resume"},
		{[]string{"--session-id", "-abc"}, `session id "-abc"`},
		{[]string{"--session-id", "a/b"}, `session id "a/b"`},
		{[]string{"--session-id", "abc."}, `session id "abc."`},
		{[]string{"--name", "  "}, "--name needs a non-empty name"},
	} {
		code, stderr := runBinary(t, t.TempDir(), t.TempDir(), append([]string{"--mode", "rpc"}, tc.args...)...)
		assert.Equal(t, 2, code, "%v", tc.args)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
	}
	// --session-id with --no-session: an in-memory session with that id.
	p := startProc(t, t.TempDir(), t.TempDir(), "--mode", "rpc", "--no-session", "--session-id", "mem.1")
	st := p.state("1")
	assert.Equal(t, "mem.1", st["sessionId"])
	assert.Nil(t, st["sessionFile"])
	assert.Equal(t, 0, p.exit())
}

// Issue 25: --export writes a session file as an HTML page and exits,
// named as pi names it unless an output is given.
func TestExportFlag(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("exported reply"))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "export me"})
	p.idle()
	file := p.state("2")["sessionFile"].(string)
	assert.Equal(t, 0, p.exit())

	dir := t.TempDir()
	code, out, stderr := runBinaryOut(t, dir, w.agentDir, "--export", file)
	require.Equal(t, 0, code, stderr)
	name := "pi-session-" + strings.TrimSuffix(filepath.Base(file), ".jsonl") + ".html"
	assert.Equal(t, "Exported to: "+name+"\n", out)
	page, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	assert.Contains(t, string(page), "exported reply")
	assert.Contains(t, string(page), "export me")

	code, out, stderr = runBinaryOut(t, dir, w.agentDir, "--export", file, "out/page.html")
	require.Equal(t, 1, code, "a missing folder is an error")
	assert.Empty(t, out)
	assert.NotEmpty(t, stderr)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "out"), 0o755))
	code, out, stderr = runBinaryOut(t, dir, w.agentDir, "--export", file, "out/page.html")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "Exported to: out/page.html\n", out)
	assert.FileExists(t, filepath.Join(dir, "out", "page.html"))

	code, _, stderr = runBinaryOut(t, dir, w.agentDir, "--export", "missing.jsonl")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "missing.jsonl")
}

// Issue 25: --offline is pi's PI_OFFLINE=1 for what gopi starts (pi's
// bash commands see PI_OFFLINE=1 and PI_SKIP_VERSION_CHECK=1).
func TestOfflineFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--offline"}, "offline=1 skip=1\n"},
		{nil, "offline= skip=\n"},
	} {
		p := launchArgv(t, t.TempDir(), t.TempDir(), 0, []string{"PI_OFFLINE=", "PI_SKIP_VERSION_CHECK="},
			append([]string{gopiBinary(t), "--mode", "rpc", "--no-session"}, tc.args...)...)
		res := p.ok("1", map[string]any{"type": "bash", "command": "echo offline=$PI_OFFLINE skip=$PI_SKIP_VERSION_CHECK"}).(map[string]any)
		assert.Equal(t, tc.want, res["output"], "%v", tc.args)
		assert.Equal(t, 0, p.exit())
	}
}
