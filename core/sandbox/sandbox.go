// Package sandbox confines the commands the model runs: where they may
// write and whether they reach the network (issue 39, docs/security.md).
//
// gopi itself stays unconfined. On Linux a confined command is started
// from an OS thread of its own that gopi confines first, with Landlock
// for the file system and TCP and a seccomp filter that closes every
// other kind of socket; the command inherits the thread's confinement,
// and the thread ends with the start (start_linux.go). Where that cannot
// serve, the command starts as gopi again, as a small launcher (the
// binary's first argument is [LauncherArg]) that confines itself and then
// executes the command. Either way the restriction is the command's and
// every child's, and none of them can lift it. A binary that imports
// this package serves as the launcher (package core/sandbox/launch).
//
// On macOS a command starts under sandbox-exec with a Seatbelt profile
// gopi writes from the policy (seatbelt.go; its text is tested on every
// OS, its effect only on a Mac).
package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/gopi-dev/gopi/core/sandbox/launch"
)

// LauncherArg, as a binary's first argument, makes it the launcher
// (package core/sandbox/launch, which every binary that imports this
// package includes).
const LauncherArg = launch.Arg

// TestABIEnv is a test hook: a number in it caps the Landlock ABI gopi
// believes the kernel has (0: no Landlock). It can only make gopi refuse
// more, never confine less than the kernel allows.
const TestABIEnv = launch.TestABIEnv

// Mode is how much a confined command may change.
type Mode string

const (
	// Off runs commands as they are, unconfined: pi's behaviour.
	Off Mode = "off"
	// WorkspaceWrite lets commands write in the project, the temp dir
	// and the writable roots.
	WorkspaceWrite Mode = "workspace-write"
	// ReadOnly lets commands write in the temp dir only.
	ReadOnly Mode = "read-only"
)

// Modes lists the modes, loosest first.
var Modes = []Mode{Off, WorkspaceWrite, ReadOnly}

// ParseMode reads a mode's name; "" is [Off].
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return Off, nil
	}
	m := Mode(s)
	if !slices.Contains(Modes, m) {
		return "", fmt.Errorf("%w %q (want off, read-only or workspace-write)", ErrUnknownMode, s)
	}
	return m, nil
}

// strictness orders the modes: a higher one allows less.
func (m Mode) strictness() int { return slices.Index(Modes, m) }

// Policy is what a confined command may do.
type Policy struct {
	Mode Mode
	// Network lets commands open sockets of every kind; without it they
	// have Unix sockets only.
	Network bool
	// WritableRoots are the directories commands may write in besides
	// the temp dir and the devices every shell needs (/dev/null, ...):
	// in workspace-write the project and the settings' writableRoots,
	// in read-only none.
	WritableRoots []string
	// TempDir is the commands' $TMPDIR, writable in every mode; "" has
	// [New] make one (0700, removed by [RemoveTempDirs]).
	TempDir string
}

// Settings is settings.json's "sandbox" object.
type Settings struct {
	Mode          string   `json:"mode,omitempty"`
	Network       *bool    `json:"network,omitempty"`
	WritableRoots []string `json:"writableRoots,omitempty"`
}

// Resolve decides the policy for the project in cwd: the user's choice
// (flag, a mode name, over the agent dir's settings) tightened by the
// project's settings, which may ask for a stricter mode, no network or
// fewer writable roots and never for more. What the project asked for
// and did not get is returned as notes. Relative roots are the cwd's.
func Resolve(flag string, user, project *Settings, cwd string) (Policy, []string, error) {
	if user == nil {
		user = &Settings{}
	}
	name := user.Mode
	if flag != "" {
		name = flag
	}
	mode, err := ParseMode(name)
	if err != nil {
		return Policy{}, nil, err
	}
	p := Policy{Mode: mode, Network: user.Network != nil && *user.Network}
	roots := absRoots(user.WritableRoots, cwd)
	var notes []string
	if project != nil {
		pm, err := ParseMode(project.Mode)
		if err != nil {
			return Policy{}, nil, fmt.Errorf("the project's settings: %w", err)
		}
		switch {
		case project.Mode == "":
		case pm.strictness() > mode.strictness():
			p.Mode = pm
		case pm.strictness() < mode.strictness():
			notes = append(notes, fmt.Sprintf("the project's sandbox mode %q is looser than %q and is ignored", pm, mode))
		}
		if project.Network != nil {
			if !*project.Network {
				p.Network = false
			} else if !p.Network {
				notes = append(notes, "the project's sandbox network: true is ignored (a project may only turn the network off)")
			}
		}
		if project.WritableRoots != nil {
			asked := absRoots(project.WritableRoots, cwd)
			var kept []string
			for _, r := range asked {
				if slices.Contains(roots, r) {
					kept = append(kept, r)
				} else {
					notes = append(notes, fmt.Sprintf("the project's writable root %s is ignored: the user's settings do not list it", r))
				}
			}
			roots = kept
		}
	}
	if p.Mode == WorkspaceWrite {
		p.WritableRoots = append([]string{filepath.Clean(cwd)}, roots...)
	}
	return p, notes, nil
}

func absRoots(roots []string, cwd string) []string {
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		if r == "" {
			continue
		}
		if !filepath.IsAbs(r) {
			r = filepath.Join(cwd, r)
		}
		out = append(out, filepath.Clean(r))
	}
	return out
}

// Layers name what enforces a policy, as get_state reports them.
const (
	LayerLandlockFS  = "landlock-fs"
	LayerLandlockNet = "landlock-net"
	LayerSeccomp     = "seccomp"
	// LayerSeatbelt is macOS's sandbox, through sandbox-exec.
	LayerSeatbelt = "seatbelt"
)

// State is what get_state reports of the sandbox.
type State struct {
	Mode    Mode
	Network bool
	// Layers are what confines each command; none when Mode is off or
	// the kernel cannot enforce the mode.
	Layers []string
	// Problem says why the mode cannot be enforced here ("" when it can):
	// commands are then refused.
	Problem string
}

// Sandbox runs commands under one policy.
type Sandbox struct {
	policy  Policy
	problem error
	layers  []string
	// writable are WritableRoots and the temp dir with their links
	// followed, what the file tools' writes are checked against.
	writable []string
	tmp      string
	opts     options
	// enforcer is what this OS confines each command with, prepared
	// once by New (start_linux.go, seatbelt_darwin.go).
	enforcer enforcer
}

// options are what [Option]s set.
type options struct {
	// launcher, when set, is the binary every command starts through
	// (Linux).
	launcher string
}

// Option configures [New].
type Option func(*options)

// WithLauncher makes the sandbox start every command through the
// launcher, the binary at path (one that imports this package), as it
// does by itself only for a command the thread cannot start (see
// [Sandbox.Start]): the tests and the benchmark use it to keep that path
// tried and measured. It matters on Linux only.
func WithLauncher(path string) Option { return func(o *options) { o.launcher = path } }

// New prepares the policy p for this machine. When the machine cannot
// enforce it, [Sandbox.Problem] says why and [Sandbox.Start] refuses
// every command: a command never runs with less confinement than its
// mode promises.
func New(p Policy, opts ...Option) *Sandbox {
	s := &Sandbox{policy: p}
	for _, o := range opts {
		o(&s.opts)
	}
	if p.Mode == Off || p.Mode == "" {
		s.policy.Mode = Off
		return s
	}
	s.layers, s.problem = check(p)
	if s.problem != nil {
		return s
	}
	s.tmp = p.TempDir
	if s.tmp == "" {
		var err error
		if s.tmp, err = makeTempDir(); err != nil {
			s.problem = fmt.Errorf("%w: making the commands' temp dir: %v", ErrUnavailable, err)
			return s
		}
	}
	write := writableDirs(p, s.tmp)
	for _, r := range write {
		s.writable = append(s.writable, realPath(r))
	}
	e, err := prepare(p, write, s.opts)
	if err != nil {
		s.problem = fmt.Errorf("%w: %v", ErrUnavailable, err)
		return s
	}
	s.enforcer = e
	return s
}

// writableDirs are the directories a command of p may write in: the
// writable roots in workspace-write, and the temp dir in every mode.
func writableDirs(p Policy, tmp string) []string {
	var dirs []string
	if p.Mode == WorkspaceWrite {
		dirs = slices.Clone(p.WritableRoots)
	}
	return append(dirs, tmp)
}

// enforcer starts commands confined, the same way for each; one is made
// by prepare, per OS.
type enforcer interface {
	// start starts cmd, whose environment is set, confined.
	start(cmd *exec.Cmd) error
}

// Mode is the policy's mode.
func (s *Sandbox) Mode() Mode { return s.policy.Mode }

// Enabled reports whether commands run confined (the mode is not off).
func (s *Sandbox) Enabled() bool { return s.policy.Mode != Off }

// Problem says why the mode cannot be enforced on this machine; nil when
// it can (or is off).
func (s *Sandbox) Problem() error { return s.problem }

// State is the sandbox as get_state reports it.
func (s *Sandbox) State() State {
	st := State{Mode: s.policy.Mode, Network: s.policy.Network || s.policy.Mode == Off, Layers: []string{}}
	if s.problem != nil {
		st.Problem = s.problem.Error()
		return st
	}
	st.Layers = append(st.Layers, s.layers...)
	return st
}

// TempDir is the commands' $TMPDIR ("" when the mode is off or cannot
// be enforced).
func (s *Sandbox) TempDir() string { return s.tmp }

// Start starts cmd (built by exec.Command, not yet started) under the
// policy, with $TMPDIR set to the temp dir; with the mode off it is
// cmd.Start. What confines it is prepared once, by [New]; a start only
// applies it. It fails, and the command does not run, when the mode
// cannot be enforced here or the confinement could not be applied.
//
// On Linux the command starts from a thread confined for it alone
// (start_linux.go); through the launcher when the sandbox was made
// [WithLauncher], or when cmd asks for a signal at its parent's death
// (SysProcAttr.Pdeathsig): the kernel sends that when the starting
// thread ends, and the confined thread ends right after the start. On
// macOS it starts under /usr/bin/sandbox-exec with a Seatbelt profile
// made from the policy (seatbelt.go).
func (s *Sandbox) Start(cmd *exec.Cmd) error {
	if s.policy.Mode == Off {
		return cmd.Start()
	}
	if s.problem != nil {
		return s.problem
	}
	if cmd.Err != nil {
		return cmd.Err
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "TMPDIR=")
	}), "TMPDIR="+s.tmp)
	return s.enforcer.start(cmd)
}

// CheckWrite says whether a file tool may write the file at real (an
// absolute path with every link followed): nil when the mode is off or
// real is inside a writable root or the temp dir, else an error that
// names the roots.
func (s *Sandbox) CheckWrite(real string) error {
	if s.policy.Mode == Off {
		return nil
	}
	real = filepath.Clean(real)
	for _, r := range s.writable {
		if within(r, real) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s is outside what the %s sandbox lets gopi change (%s)", ErrOutside, real, s.policy.Mode, s.writableText())
}

// Describe is what a command's result tells the model when the sandbox
// may have stopped it: the mode, where it may write, the network.
func (s *Sandbox) Describe() string {
	net := "the network is off (Unix sockets only)"
	if s.policy.Network {
		net = "the network is on"
	}
	return fmt.Sprintf("The command ran in gopi's sandbox (%s): it may write only in %s; %s. A \"Permission denied\" or \"Operation not permitted\" above may be the sandbox refusing a write outside those or a network connection.",
		s.policy.Mode, s.writableText(), net)
}

func (s *Sandbox) writableText() string {
	var parts []string
	parts = append(parts, s.policy.WritableRoots...)
	if s.tmp != "" {
		parts = append(parts, s.tmp+" ($TMPDIR)")
	} else {
		parts = append(parts, "$TMPDIR")
	}
	parts = append(parts, "/dev/null and the terminal devices")
	return strings.Join(parts, ", ")
}

// within reports whether p is dir or below it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realPath is p with the links of its existing part followed: a root
// that does not exist yet keeps the names below its deepest existing
// ancestor, which is resolved (/tmp/new is /private/tmp/new on macOS).
func realPath(p string) string {
	p = filepath.Clean(p)
	var below []string
	for dir := p; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(append([]string{r}, below...)...)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		below = append([]string{filepath.Base(dir)}, below...)
		dir = parent
	}
}

// tempDirs are the temp dirs this process made, for [RemoveTempDirs].
var tempDirs struct {
	mu   sync.Mutex // guards dirs
	dirs []string
}

func makeTempDir() (string, error) {
	dir, err := os.MkdirTemp("", "gopi-sandbox-")
	if err != nil {
		return "", err
	}
	tempDirs.mu.Lock()
	tempDirs.dirs = append(tempDirs.dirs, dir)
	tempDirs.mu.Unlock()
	return dir, nil
}

// RemoveTempDirs removes the temp dirs the sandboxes of this process
// made, with what the commands left in them; gopi calls it at exit, after
// the commands' process groups are ended.
func RemoveTempDirs() {
	tempDirs.mu.Lock()
	defer tempDirs.mu.Unlock()
	for _, d := range tempDirs.dirs {
		_ = os.RemoveAll(d)
	}
	tempDirs.dirs = nil
}
