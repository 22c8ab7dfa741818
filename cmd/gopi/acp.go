package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gopi-dev/gopi/core/checkpoint"
	"github.com/gopi-dev/gopi/core/host"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/sandbox"
	"github.com/gopi-dev/gopi/core/session"
	"github.com/gopi-dev/gopi/lspbridge/acp"
	"github.com/gopi-dev/gopi/rpc"
)

// runACP serves the Agent Client Protocol on stdin/stdout until stdin
// ends or a signal cancels ctx. Each session/new builds a host of its own
// for the session's cwd, from the same flags; acp.Serve closes them all
// (runs aborted, session files complete) before it returns.
func (ap *app) runACP(ctx context.Context, a *args, stdin io.Reader, stdout io.Writer) error {
	report := func(err error) { fmt.Fprintln(ap.stderr, "gopi:", err) }
	w := rpc.NewWriter(stdout, rpc.FramingNewline)
	stopBatching := w.Batch()
	defer stopBatching()
	ctx, cancel := ap.untilClientGone(ctx, w, report)
	defer cancel()
	opts := acp.Options{
		NewRuntime: func(_ context.Context, cfg acp.SessionConfig) (acp.Runtime, error) {
			return ap.acpHost(a, cfg, "")
		},
		Fork: func(_ context.Context, src acp.Runtime, cfg acp.SessionConfig) (acp.Runtime, error) {
			return ap.acpFork(a, src, cfg)
		},
		Auth:    acpAuth{ap.registry},
		Version: currentBuild().Version,
		Report:  report,
	}
	if !a.noSession {
		opts.Sessions = acpSessions{ap: ap, a: a}
	}
	err := acp.Serve(ctx, rpc.NewLineReader(stdin, 0), w, opts)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// acpHost builds the host of one ACP session in cwd: a new session, or
// the stored session openID. --continue, --session and their kin name the
// session the process started with, not each of these.
func (ap *app) acpHost(a *args, cfg acp.SessionConfig, openID string) (acp.Runtime, error) {
	b := *a
	b.continue_, b.session, b.resume, b.fork = false, "", false, ""
	b.openID, b.lent = openID, cfg
	if openID != "" {
		// A stored session keeps its id and its name.
		b.sessionIDSet, b.nameSet = false, false
	}
	h, err := ap.buildHost(&b, cfg.Cwd)
	if err != nil {
		return nil, err
	}
	return acpRuntime{h}, nil
}

// acpFork builds the host of session/fork's copy of src: its current
// branch in a new session of the same directory (pi's clone), stored
// where src is (in memory with --no-session). The flags that name or
// number the process's first session do not apply to it.
func (ap *app) acpFork(a *args, src acp.Runtime, cfg acp.SessionConfig) (acp.Runtime, error) {
	r, ok := src.(acpRuntime)
	if !ok {
		return nil, fmt.Errorf("%w: %T", errNotGopiSession, src)
	}
	st, err := forkStore(r.Store())
	if err != nil {
		return nil, err
	}
	b := *a
	b.continue_, b.session, b.resume, b.fork = false, "", false, ""
	b.sessionIDSet, b.nameSet = false, false
	b.forked, b.lent = st, cfg
	h, err := ap.buildHost(&b, cfg.Cwd)
	if err != nil {
		return nil, err
	}
	return acpRuntime{h}, nil
}

// forkStore copies src's current branch into a new session; a session
// with no entries yet gives an empty one naming src as its parent.
func forkStore(src *session.Store) (*session.Store, error) {
	if src.Leaf() != "" {
		st, err := src.Clone()
		if err != nil {
			return nil, fmt.Errorf("copying the session: %w", err)
		}
		return st, nil
	}
	if src.File() == "" {
		return session.InMemory(src.Cwd()), nil
	}
	st, err := session.Create(src.Dir(), src.Cwd(), session.Options{ParentSession: src.File()})
	if err != nil {
		return nil, fmt.Errorf("starting the fork: %w", err)
	}
	return st, nil
}

// acpSessions are the pi session files ACP's session methods reach, found
// as --session finds them.
type acpSessions struct {
	ap *app
	a  *args
}

func (s acpSessions) Open(_ context.Context, id string, cfg acp.SessionConfig) (acp.Runtime, error) {
	cwd := cfg.Cwd
	rt, err := s.ap.acpHost(s.a, cfg, id)
	var elsewhere *elsewhereError
	switch {
	case errors.Is(err, errNoSessionMatch):
		return nil, fmt.Errorf("%w: %w", acp.ErrUnknownSession, err)
	case errors.As(err, &elsewhere):
		return nil, fmt.Errorf("%w: session %s works in %s, not in %s", acp.ErrOtherCwd, id, elsewhere.cwd, cwd)
	}
	return rt, err
}

// dir is where sessions are stored when not in the agent dir's folder
// per directory: --session-dir, its environment variable, or the global
// settings' sessionDir ("" for none). A project's own sessionDir setting
// is not consulted here: which projects are trusted is decided per
// session.
func (s acpSessions) dir(cwd string) string {
	settings, _ := loadSettings(s.ap.agentDir, "", false)
	if dir := sessionDirOf(s.a, settings, cwd); filepath.IsAbs(dir) {
		return dir
	}
	return "" // relative to no directory: listing everything

}

func (s acpSessions) List(cwd string) ([]acp.StoredSession, error) {
	infos, err := s.infos(cwd)
	if err != nil {
		return nil, err
	}
	out := make([]acp.StoredSession, 0, len(infos))
	for _, in := range infos {
		out = append(out, acp.StoredSession{ID: in.ID, Cwd: in.Cwd, Title: sessionTitle(in), Updated: in.Modified})
	}
	return out, nil
}

// infos describes the stored sessions of cwd ("" for all), newest first.
func (s acpSessions) infos(cwd string) ([]session.Info, error) {
	var infos []session.Info
	var err error
	switch custom := s.dir(cwd); {
	case custom != "":
		infos, err = session.List(custom)
	case cwd != "":
		infos, err = session.List(session.DefaultDir(s.ap.agentDir, cwd))
	default:
		infos, err = session.ListAll(filepath.Join(s.ap.agentDir, "sessions"))
	}
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	return slices.DeleteFunc(infos, func(in session.Info) bool {
		return in.ID == "" || in.Cwd == "" || (cwd != "" && !session.SameDir(in.Cwd, cwd))
	}), nil
}

// sessionTitle is a session's name, else the first line of its first
// user message, cut at titleMax runes.
func sessionTitle(in session.Info) string {
	t := in.Name
	if t == "" {
		t, _, _ = strings.Cut(strings.TrimSpace(in.FirstMessage), "\n")
	}
	if r := []rune(t); len(r) > titleMax {
		t = string(r[:titleMax]) + "…"
	}
	return t
}

// titleMax bounds a listed session's title.
const titleMax = 120

func (s acpSessions) Delete(id string) error {
	infos, err := s.infos("")
	if err != nil {
		return err
	}
	for _, in := range infos {
		if in.ID == id {
			roots := host.CheckpointDirs(in.Path)
			if err := os.Remove(in.Path); err != nil {
				return fmt.Errorf("deleting the session file: %w", err)
			}
			// Its checkpoints go with it (docs/checkpoints.md).
			if err := checkpoint.ForgetSession(context.Background(), s.ap.agentDir, in.Cwd, id, roots...); err != nil {
				s.ap.warn(fmt.Errorf("session %s deleted, but not all of its checkpoints: %w", id, err))
			}
			return nil
		}
	}
	return fmt.Errorf("%w: %s", acp.ErrUnknownSession, id)
}

// acpRuntime is a session's host as the ACP dialect closes it: the
// session file is written out, and a write that keeps failing is the
// close's error.
type acpRuntime struct{ *host.Host }

func (r acpRuntime) Close(ctx context.Context) error {
	err := r.Host.Close(ctx)
	if serr := r.SaveSession(); serr != nil {
		return serr
	}
	return err
}

// History is the session's visible branch, root to leaf: every message
// of it, those a compaction summarised included.
func (r acpRuntime) History() []llm.Message {
	var out []llm.Message
	for _, e := range r.Store().Path() {
		if m, ok := e.(*session.MessageEntry); ok {
			out = append(out, m.Message())
		}
	}
	return out
}

// ApprovalMode is the session's approval mode, as ACP's session mode.
func (r acpRuntime) ApprovalMode() string { return string(r.Approval()) }

// SetApprovalMode changes the session's approval mode.
func (r acpRuntime) SetApprovalMode(mode string) error {
	m, err := host.ParseApproval(mode)
	if err != nil {
		return err
	}
	r.SetApproval(m)
	return nil
}

// SandboxMode is the session's sandbox mode as chosen, the other half of
// ACP's session mode.
func (r acpRuntime) SandboxMode() string { return string(r.Host.SandboxMode()) }

// SetSandboxMode changes the session's sandbox mode.
func (r acpRuntime) SetSandboxMode(mode string) error { return r.SetSandbox(sandbox.Mode(mode)) }
