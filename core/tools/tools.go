package tools

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// Tool names, as the model sees them.
const (
	NameRead  = "read"
	NameBash  = "bash"
	NameEdit  = "edit"
	NameWrite = "write"
	NameGrep  = "grep"
	NameFind  = "find"
	NameLs    = "ls"
)

// AllNames lists every built-in tool in pi's order.
var AllNames = []string{NameRead, NameBash, NameEdit, NameWrite, NameGrep, NameFind, NameLs}

// DefaultNames are the tools pi enables unless told otherwise.
var DefaultNames = []string{NameRead, NameBash, NameEdit, NameWrite}

// ReadOnlyNames are the tools that cannot change anything.
var ReadOnlyNames = []string{NameRead, NameGrep, NameFind, NameLs}

// Option configures the tools a constructor builds.
type Option func(*config)

type config struct {
	fs    FS
	shell Shell
	// local is the last LocalShell given (WithShell), what a sandbox
	// confines when shell runs elsewhere on this machine (OnLocalMachine).
	local LocalShell
	// sandbox is the sandbox in force now (WithSandboxOf); nil: none.
	sandbox       func() Sandbox
	commandPrefix string
	tempDir       string
	noExternal    bool
	noImageResize bool
}

// WithFS makes the file tools use fsys instead of the local disk. grep and
// find then walk fsys instead of running rg or fd.
func WithFS(fsys FS) Option { return func(c *config) { c.fs = fsys } }

// WithShell makes bash run commands with sh.
func WithShell(sh Shell) Option {
	return func(c *config) {
		c.shell = sh
		if l, ok := sh.(LocalShell); ok {
			c.local = l
		}
	}
}

// OnLocalMachine is implemented by a Shell whose commands run on this
// machine where gopi cannot confine them (an editor's terminal): while a
// sandbox confines the tools, bash runs their commands itself, confined,
// with the [LocalShell] given before it (the default one if none).
type OnLocalMachine interface {
	Shell
	OnLocalMachine() bool
}

// Sandbox confines what the model's tools change (core/sandbox's
// Sandbox): the bash tool's commands are started by Start, and the write
// and edit tools write only where CheckWrite allows.
type Sandbox interface {
	// Enabled reports whether there is anything to confine (the mode is
	// not off).
	Enabled() bool
	// Start starts cmd (built, not yet started) confined; an error means
	// it did not start.
	Start(cmd *exec.Cmd) error
	// CheckWrite says whether the file at real (absolute, every link
	// followed) may be written.
	CheckWrite(real string) error
	// Describe tells the model what a confined command may do.
	Describe() string
}

// WithSandbox confines the bash, write and edit tools with sb. bash then
// runs commands with [LocalShell] only (a shell that is [OnLocalMachine]
// gives way to it): a command the sandbox cannot confine (another
// [Shell]'s) is refused, never run.
func WithSandbox(sb Sandbox) Option { return WithSandboxOf(func() Sandbox { return sb }) }

// WithSandboxOf confines the tools as [WithSandbox] does, with the
// sandbox current returns when each call starts: one whose mode changes
// while gopi runs (core/sandbox's Switch). A call keeps the sandbox it
// started with.
func WithSandboxOf(current func() Sandbox) Option { return func(c *config) { c.sandbox = current } }

// confined is the sandbox in force when it confines anything, else nil.
func (c *config) confined() Sandbox {
	if c.sandbox == nil {
		return nil
	}
	sb := c.sandbox()
	if sb == nil || !sb.Enabled() {
		return nil
	}
	return sb
}

// checkWrite refuses a write to abs that the sandbox does not allow,
// judged on where abs leads with every link followed.
func (c *config) checkWrite(abs string) error {
	sb := c.confined()
	if sb == nil {
		return nil
	}
	real, err := RealPath(abs)
	if err != nil {
		return err
	}
	return sb.CheckWrite(real)
}

// WithCommandPrefix puts prefix on its own line before every bash command
// (shell setup such as `shopt -s expand_aliases`).
func WithCommandPrefix(prefix string) Option { return func(c *config) { c.commandPrefix = prefix } }

// WithTempDir makes bash save full outputs of truncated commands in dir.
func WithTempDir(dir string) Option { return func(c *config) { c.tempDir = dir } }

// WithoutExternalSearch makes grep and find always use their built-in Go
// search, even when rg or fd is installed.
func WithoutExternalSearch() Option { return func(c *config) { c.noExternal = true } }

// WithoutImageResize makes read return images as they are on disk instead
// of scaling big ones down.
func WithoutImageResize() Option { return func(c *config) { c.noImageResize = true } }

func newConfig(opts []Option) *config {
	c := &config{fs: LocalFS{}, shell: LocalShell{}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// localFS reports whether the tools work on this machine's disk, so rg and
// fd see the same files: [LocalFS], or an FS that says its files are the
// local disk's ([OnLocalDisk]).
func (c *config) localFS() bool {
	if d, ok := c.fs.(OnLocalDisk); ok {
		return d.OnLocalDisk()
	}
	_, ok := c.fs.(LocalFS)
	return ok
}

// OnLocalDisk is implemented by an FS whose files are this machine's
// disk seen through an overlay (an editor's unsaved buffers): grep and
// find may then search the disk with rg and fd.
type OnLocalDisk interface {
	FS
	OnLocalDisk() bool
}

// New builds one built-in tool by name.
func New(name, cwd string, opts ...Option) (agent.Tool, error) {
	return newTool(name, cwd, newConfig(opts))
}

func newTool(name, cwd string, c *config) (agent.Tool, error) {
	switch name {
	case NameRead:
		return &readTool{prompter: NameRead, cwd: cwd, c: c}, nil
	case NameBash:
		return &bashTool{prompter: NameBash, cwd: cwd, c: c}, nil
	case NameEdit:
		return &editTool{prompter: NameEdit, cwd: cwd, c: c}, nil
	case NameWrite:
		return &writeTool{prompter: NameWrite, cwd: cwd, c: c}, nil
	case NameGrep:
		return &grepTool{prompter: NameGrep, cwd: cwd, c: c}, nil
	case NameFind:
		return &findTool{prompter: NameFind, cwd: cwd, c: c}, nil
	case NameLs:
		return &lsTool{prompter: NameLs, cwd: cwd, c: c}, nil
	}
	return nil, fmt.Errorf("%w %q (have %s)", ErrUnknownTool, name, strings.Join(AllNames, ", "))
}

// ByName builds the named tools, in the order given.
func ByName(cwd string, names []string, opts ...Option) ([]agent.Tool, error) {
	c := newConfig(opts)
	out := make([]agent.Tool, 0, len(names))
	for _, n := range names {
		t, err := newTool(n, cwd, c)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func mustByName(cwd string, names []string, opts []Option) []agent.Tool {
	ts, err := ByName(cwd, names, opts...)
	if err != nil {
		panic(err) // the name lists are ours
	}
	return ts
}

// All builds all seven built-in tools.
func All(cwd string, opts ...Option) []agent.Tool { return mustByName(cwd, AllNames, opts) }

// Default builds the tools pi enables by default: read, bash, edit, write.
func Default(cwd string, opts ...Option) []agent.Tool {
	return mustByName(cwd, DefaultNames, opts)
}

// ReadOnly builds read, grep, find and ls.
func ReadOnly(cwd string, opts ...Option) []agent.Tool {
	return mustByName(cwd, ReadOnlyNames, opts)
}

// Prompter is implemented by the built-in tools for the system prompt: a
// one-line summary for the tool list and guideline bullets to add.
type Prompter interface {
	PromptSnippet() string
	PromptGuidelines() []string
}

//go:embed descriptions
var descriptionFiles embed.FS

type promptInfo struct {
	Snippet    string   `json:"snippet"`
	Guidelines []string `json:"guidelines"`
}

var loadPrompts = sync.OnceValue(func() map[string]promptInfo {
	data, err := descriptionFiles.ReadFile("descriptions/prompts.json")
	if err != nil {
		panic(fmt.Sprintf("tools: embedded prompts.json: %v", err))
	}
	var m map[string]promptInfo
	if err := json.Unmarshal(data, &m); err != nil {
		panic(fmt.Sprintf("tools: embedded prompts.json: %v", err))
	}
	return m
})

// description returns the embedded description of a tool.
func description(name string) string {
	data, err := descriptionFiles.ReadFile("descriptions/" + name + ".md")
	if err != nil {
		panic(fmt.Sprintf("tools: embedded description of %s: %v", name, err))
	}
	return strings.TrimSpace(string(data))
}

// spec builds a tool's spec from its embedded description and a schema.
func spec(name, schema string) llm.ToolSpec {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(schema)); err != nil {
		panic(fmt.Sprintf("tools: schema of %s: %v", name, err))
	}
	return llm.ToolSpec{Name: name, Description: description(name), Parameters: json.RawMessage(buf.Bytes())}
}

// prompter gives every tool its prompt info by name.
type prompter string

func (p prompter) PromptSnippet() string      { return loadPrompts()[string(p)].Snippet }
func (p prompter) PromptGuidelines() []string { return loadPrompts()[string(p)].Guidelines }

// decodeArgs reads a call's arguments; a failure is for the model to fix.
func decodeArgs(call agent.Call, v any) (agent.Result, bool) {
	args := call.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return agent.ErrorResult("Invalid arguments for %s: %v", call.Name, err), false
	}
	return agent.Result{}, true
}

// intArg turns an optional JSON number into an int.
func intArg(f *float64) (int, bool) {
	if f == nil {
		return 0, false
	}
	return int(*f), true
}

// withNotices appends pi-style bracketed notices to text.
func withNotices(text string, notices []string) string {
	if len(notices) == 0 {
		return text
	}
	return text + "\n\n[" + strings.Join(notices, ". ") + "]"
}

// fileLocks serialises mutations of one file across tools and calls (pi's
// file mutation queue); different files proceed in parallel.
var fileLocks = struct {
	mu    sync.Mutex // guards locks
	locks map[string]*fileLock
}{locks: map[string]*fileLock{}}

type fileLock struct {
	mu   sync.Mutex
	refs int
}

// lockFile locks path and returns the unlock function.
func lockFile(path string) func() {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	fileLocks.mu.Lock()
	l := fileLocks.locks[path]
	if l == nil {
		l = &fileLock{}
		fileLocks.locks[path] = l
	}
	l.refs++
	fileLocks.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		fileLocks.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(fileLocks.locks, path)
		}
		fileLocks.mu.Unlock()
	}
}
