package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gopi-dev/gopi/core/session"
	"github.com/gopi-dev/gopi/internal/homedir"
)

// openSession picks the session as pi does, first match wins:
// --no-session (in memory, with --session-id's id), --fork (a copy in a
// new session of the cwd), --session (a file or an id), --resume and
// --continue (the cwd's most recent session), --session-id (the cwd's
// session with that id, created when there is none), else a new session.
// customDir is --session-dir and its kin ("" for the agent dir's
// default). --name is applied to the result.
func openSession(a *args, customDir, agentDir, cwd string, stderr io.Writer, off *sync.Once) (*session.Store, error) {
	st, err := pickSession(a, customDir, agentDir, cwd, stderr, off)
	if err != nil || !a.nameSet {
		return st, err
	}
	if _, err := st.AppendSessionInfo(a.name); err != nil {
		return nil, fmt.Errorf("naming the session: %w", err)
	}
	return st, nil
}

func pickSession(a *args, customDir, agentDir, cwd string, stderr io.Writer, off *sync.Once) (*session.Store, error) {
	if a.forked != nil {
		return a.forked, nil
	}
	if a.noSession {
		if a.sessionIDSet {
			return session.InMemoryWithID(cwd, a.sessionID)
		}
		return session.InMemory(cwd), nil
	}
	l := newSessionLookup(customDir, agentDir, cwd)
	switch {
	case a.fork != "":
		if a.sessionIDSet {
			if p := session.FindByID(l.dir, a.sessionID, l.ownCwd); p != "" {
				return nil, fmt.Errorf("a session with id %q %w: %s", a.sessionID, errSessionExists, p)
			}
		}
		f, err := l.find(a.fork)
		if err != nil {
			return nil, err
		}
		st, err := session.ForkFrom(f.path, cwd, l.dir, session.Options{ID: a.sessionID})
		if err != nil {
			return nil, fmt.Errorf("forking %s: %w", f.path, err)
		}
		return st, nil
	case a.session != "":
		f, err := l.find(a.session)
		if err != nil {
			return nil, err
		}
		if f.elsewhere {
			// pi asks on the terminal whether to fork it here; nobody
			// can be asked here.
			return nil, &elsewhereError{session: a.session, cwd: f.cwd}
		}
		return openSessionFile(f.path, cwd, stderr)
	case a.openID != "":
		return l.openExact(a.openID, stderr)
	case a.resume || a.continue_:
		// --resume is pi's terminal picker; without a terminal gopi
		// resumes what it would list first: the most recent session.
		if p, err := session.MostRecent(l.dir); err == nil && p != "" {
			return openSessionFile(p, cwd, stderr)
		}
	case a.sessionIDSet:
		if p := session.FindByID(l.dir, a.sessionID, l.ownCwd); p != "" {
			return openSessionFile(p, cwd, stderr)
		}
		fmt.Fprintf(stderr, "gopi: warning: no session of this directory has id %q; starting a new session with that id\n", a.sessionID)
		return newSession(a, l.dir, cwd, stderr, off)
	}
	return newSession(a, l.dir, cwd, stderr, off)
}

// newSession starts a session in dir. When dir cannot be made (the agent
// directory under a file, a read-only disk) gopi serves anyway with the
// session kept in memory, as pi does, and says so once per process: a
// session that cannot be saved is not a reason to refuse every command.
// off keeps the warning to one per process (ACP builds a session runtime
// per client session; setup's check of the agent directory may have said
// it already).
func newSession(a *args, dir, cwd string, stderr io.Writer, off *sync.Once) (*session.Store, error) {
	st, err := session.Create(dir, cwd, session.Options{ID: a.sessionID})
	if err == nil || !errors.Is(err, session.ErrSessionDir) {
		return st, err
	}
	off.Do(func() {
		fmt.Fprintf(stderr, "gopi: warning: sessions are off, nothing will be saved: %v\n", err)
	})
	if a.sessionIDSet {
		return session.InMemoryWithID(cwd, a.sessionID)
	}
	return session.InMemory(cwd), nil
}

// openSessionFile opens the session at path, or starts one there when the
// file does not exist yet (pi's --session with a new path).
func openSessionFile(path, cwd string, stderr io.Writer) (*session.Store, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return session.Create(filepath.Dir(path), cwd, session.Options{Path: path})
	}
	st, rep, err := session.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening session: %w", err)
	}
	if !rep.OK() {
		fmt.Fprintf(stderr, "gopi: warning: session %s: %d damaged line(s) skipped\n", path, len(rep.Damaged))
	}
	return st, nil
}

// sessionLookup finds sessions named on the command line.
type sessionLookup struct {
	cwd string
	// dir holds the cwd's sessions.
	dir string
	// ownCwd is cwd when dir may hold other directories' sessions too
	// (a --session-dir other than the cwd's default one), else "".
	ownCwd string
	// all is where every directory's sessions are: the agent dir's
	// sessions folder, or the custom directory.
	all string
	// custom: all is one directory, not a folder of them.
	custom bool
}

func newSessionLookup(customDir, agentDir, cwd string) sessionLookup {
	own := session.DefaultDir(agentDir, cwd)
	l := sessionLookup{cwd: cwd, dir: own, all: filepath.Join(agentDir, "sessions")}
	if customDir != "" {
		l.dir, l.all, l.custom = customDir, customDir, true
		if !session.SameDir(customDir, own) {
			l.ownCwd = cwd
		}
	}
	return l
}

// foundSession is a session the command line named.
type foundSession struct {
	path string
	// elsewhere: the session belongs to another directory (cwd).
	elsewhere bool
	cwd       string
}

// find resolves a --session or --fork argument as pi does: something
// that looks like a path (a separator, or ".jsonl" at the end) is a file,
// relative to the cwd; anything else is a session id, exact or its
// beginning, among the cwd's sessions first, then everyone's, and last
// (gopi only) the name of a file in the cwd.
func (l sessionLookup) find(arg string) (foundSession, error) {
	if strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".jsonl") {
		p := homedir.Expand(arg)
		if !filepath.IsAbs(p) {
			p = filepath.Join(l.cwd, p)
		}
		return foundSession{path: p}, nil
	}
	if p := session.FindByID(l.dir, arg, l.ownCwd); p != "" {
		return foundSession{path: p}, nil
	}
	local, err := session.List(l.dir)
	if err != nil {
		return foundSession{}, fmt.Errorf("listing sessions: %w", err)
	}
	for _, in := range local {
		if strings.HasPrefix(in.ID, arg) && (l.ownCwd == "" || session.SameDir(in.Cwd, l.ownCwd)) {
			return foundSession{path: in.Path}, nil
		}
	}
	var all []session.Info
	if l.custom {
		all = local
	} else if all, err = session.ListAll(l.all); err != nil {
		return foundSession{}, fmt.Errorf("listing sessions: %w", err)
	}
	for _, exact := range []bool{true, false} {
		for _, in := range all {
			if in.ID == arg || (!exact && strings.HasPrefix(in.ID, arg)) {
				return foundSession{path: in.Path, elsewhere: true, cwd: in.Cwd}, nil
			}
		}
	}
	// pi stops here. A file of that name in the cwd is what the user most
	// likely meant (`--session notes`): it is opened as a path, which
	// refuses it plainly if it is not a session, instead of "no session".
	if p := filepath.Join(l.cwd, arg); fileExists(p) {
		return foundSession{path: p}, nil
	}
	return foundSession{}, fmt.Errorf("%w %q", errNoSessionMatch, arg)
}

func fileExists(p string) bool {
	info, err := os.Stat(p)
	return err == nil && !info.IsDir()
}

// openExact opens the stored session whose id is exactly id, which must
// work in the lookup's cwd: a session of another directory is an
// *elsewhereError, no session with that id errNoSessionMatch.
func (l sessionLookup) openExact(id string, stderr io.Writer) (*session.Store, error) {
	if p := session.FindByID(l.dir, id, l.cwd); p != "" {
		return openSessionFile(p, l.cwd, stderr)
	}
	var all []session.Info
	var err error
	if l.custom {
		all, err = session.List(l.dir)
	} else {
		all, err = session.ListAll(l.all)
	}
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	for _, in := range all {
		if in.ID == id {
			return nil, &elsewhereError{session: id, cwd: in.Cwd}
		}
	}
	return nil, fmt.Errorf("%w %q", errNoSessionMatch, id)
}
