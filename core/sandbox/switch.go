package sandbox

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Switch is the sandbox of one session whose mode and further writable
// roots may change while gopi runs (an ACP client's session mode, its
// additional directories). [Switch.Set] resolves a new mode as --sandbox
// is resolved at start, against the same settings, so a project's
// settings keep tightening it. Each policy is prepared once, the first
// time it is in force, and kept: a command started under one keeps it,
// and coming back to it costs nothing. The policies share one temp dir.
type Switch struct {
	cfg SwitchConfig

	mu sync.Mutex // guards the fields below
	// chosen is the mode asked for (the project's settings may keep a
	// stricter one in force), extra the further roots.
	chosen Mode
	extra  []string
	cur    *Sandbox
	// made are the sandboxes prepared so far, by policy (key).
	made map[string]*Sandbox
	tmp  string
}

// SwitchConfig is what a [Switch] resolves each mode against.
type SwitchConfig struct {
	// User and Project are the user's "sandbox" settings and a trusted
	// project's (nil for none), as [Resolve] takes them.
	User, Project *Settings
	// Cwd is the project: writable in workspace-write, and the base of
	// relative roots.
	Cwd string
	// Options are [New]'s.
	Options []Option
}

// NewSwitch prepares the sandbox of mode chosen (the flag, the user's
// settings or a dialect's default; "" is off), resolved against cfg. The
// notes say what the project's settings asked for and did not get; an
// error is a mode or a project's setting that is not a mode.
func NewSwitch(chosen Mode, cfg SwitchConfig) (*Switch, []string, error) {
	s := &Switch{cfg: cfg, made: map[string]*Sandbox{}}
	notes, err := s.set(chosen, false)
	if err != nil {
		return nil, nil, err
	}
	return s, notes, nil
}

// Set makes mode the one commands run in from now on, resolved as at
// start: a project's settings may keep a stricter one in force, which
// the notes say. When this machine cannot enforce what is in force, the
// new [Sandbox]'s Problem says why and its commands are refused, as at
// start. A command already running keeps the sandbox it started in.
func (s *Switch) Set(mode Mode) ([]string, error) { return s.set(mode, true) }

// set is Set; floor says whether a stricter mode the project keeps is
// worth a note (not at start, where it is the project's ordinary say).
func (s *Switch) set(mode Mode, floor bool) ([]string, error) {
	m, err := ParseMode(string(mode))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, notes, err := Resolve(string(m), s.cfg.User, s.cfg.Project, s.cfg.Cwd)
	if err != nil {
		return nil, err
	}
	if floor && p.Mode != m {
		notes = append(notes, fmt.Sprintf("the project's settings keep the sandbox %s, stricter than %s (a project may only tighten it)", p.Mode, m))
	}
	s.chosen = m
	s.use(p)
	return notes, nil
}

// SetRoots makes dirs (absolute paths) the further directories commands
// may write in under workspace-write, beside the project and the
// settings' writableRoots, replacing those it had: a session's additional
// directories.
func (s *Switch) SetRoots(dirs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.extra = slices.Clone(dirs)
	p, _, err := Resolve(string(s.chosen), s.cfg.User, s.cfg.Project, s.cfg.Cwd)
	if err != nil {
		return // Set resolved the same inputs without an error
	}
	s.use(p)
}

// use puts the sandbox of p, with the further roots, in force; s.mu is
// held.
func (s *Switch) use(p Policy) {
	if p.Mode == WorkspaceWrite {
		for _, d := range s.extra {
			if d = filepath.Clean(d); !slices.Contains(p.WritableRoots, d) {
				p.WritableRoots = append(p.WritableRoots, d)
			}
		}
	}
	k := key(p)
	if sb, ok := s.made[k]; ok {
		s.cur = sb
		return
	}
	p.TempDir = s.tmp
	sb := New(p, s.cfg.Options...)
	if s.tmp == "" {
		s.tmp = sb.TempDir()
	}
	s.made[k] = sb
	s.cur = sb
}

// key names a policy by what it allows.
func key(p Policy) string {
	return fmt.Sprintf("%s\x00%s\x00%s", p.Mode, strconv.FormatBool(p.Network), strings.Join(p.WritableRoots, "\x00"))
}

// Current is the sandbox in force: a command confined now runs in it.
func (s *Switch) Current() *Sandbox {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Chosen is the mode last asked for ([NewSwitch], [Switch.Set]); the
// one in force ([Switch.State]) may be stricter.
func (s *Switch) Chosen() Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chosen
}

// State is the sandbox in force as get_state reports it.
func (s *Switch) State() State { return s.Current().State() }
