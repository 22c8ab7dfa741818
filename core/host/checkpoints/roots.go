package checkpoints

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/gopi-dev/gopi/core/checkpoint"
)

// cwd is the session's directory, cleaned.
func (s *State) cwd() string { return filepath.Clean(s.cfg.Cwd) }

// checkpointRoots are the directories a checkpoint records now: the
// session's, then each additional directory that is not inside it or
// inside another one (its files are recorded there). An additional
// directory that holds the session's leaves the session's files to it.
func (s *State) checkpointRoots() []string {
	cwd := s.cwd()
	out := []string{cwd}
	dirs := s.cfg.Roots()
	reals := make([]string, len(dirs))
	for i, d := range dirs {
		reals[i] = realDir(d)
	}
	covered := func(i int) bool {
		if within(realDir(cwd), reals[i]) {
			return true
		}
		for j, o := range reals {
			// Inside another one, or the same folder as an earlier one.
			if j != i && within(o, reals[i]) && (o != reals[i] || j < i) {
				return true
			}
		}
		return false
	}
	for i, d := range dirs {
		if !covered(i) {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

// realDir is dir with its links followed, when it can be.
func realDir(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// within reports whether name is dir or below it.
func within(dir, name string) bool {
	rel, err := filepath.Rel(dir, name)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// rootRepo opens the repository of a root once; nil, with the reason,
// where checkpoints cannot snapshot its files. s.mu is held.
func (s *State) rootRepo(ctx context.Context, dir string) (*checkpoint.Repo, string) {
	c := s
	if rc := c.recorders[dir]; rc != nil {
		return rc.repo, rc.why
	}
	if c.recorders == nil {
		c.recorders = map[string]*rootRecorder{}
	}
	rc := &rootRecorder{}
	c.recorders[dir] = rc
	home, _ := os.UserHomeDir()
	switch {
	case dir == string(filepath.Separator) || (home != "" && dir == filepath.Clean(home)):
		rc.why = "the session works in the home directory or the root, where gopi takes no snapshots"
	default:
		// The index stays in the agent directory, the user's alone, for
		// the next gopi that works here; without one that can keep it,
		// in a temporary folder until gopi exits (said once). An
		// additional directory that holds the session's leaves the
		// session's files to the session directory's own recorder.
		o := checkpoint.Options{Report: s.cfg.Report}
		if s.cfg.AgentDir != "" {
			o.IndexDir = checkpoint.IndexDir(s.cfg.AgentDir)
		}
		if dir != s.cwd() {
			o.Exclude = []string{s.cwd()}
		}
		r, err := checkpoint.Open(ctx, dir, o)
		if err != nil {
			rc.why = "the project is not a git work tree"
			if dir != s.cwd() {
				rc.why = "it is not in a git work tree"
			}
		} else {
			rc.repo = r
		}
	}
	return rc.repo, rc.why
}

// checkpointRepo is the session directory's repository; see rootRepo.
func (s *State) checkpointRepo(ctx context.Context) (*checkpoint.Repo, string) {
	return s.rootRepo(ctx, s.cwd())
}

// Close ends the repositories' use of their indexes (a
// temporary one, without an agent directory, is removed).
func (s *State) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rc := range s.recorders {
		if rc.repo != nil {
			_ = rc.repo.Close()
		}
	}
}

// rootJournal is the current session's edit journal of a root: the
// session directory's in the session's journal folder, an additional
// directory's in a folder of its own below it, named by a hash of the
// directory. nil without an agent directory. s.mu is held.
func (s *State) rootJournal(dir string) *checkpoint.Journal {
	if s.cfg.AgentDir == "" {
		return nil
	}
	id := s.cfg.Store().ID()
	if s.journals == nil {
		s.journals = map[[2]string]*checkpoint.Journal{}
	}
	key := [2]string{id, dir}
	j := s.journals[key]
	if j == nil {
		jdir := checkpoint.JournalDir(s.cfg.AgentDir, id)
		if dir == s.cwd() {
			j = checkpoint.OpenJournal(jdir, dir)
		} else {
			j = checkpoint.OpenJournal(filepath.Join(jdir, "roots", rootKey(dir)), dir, s.cwd())
		}
		s.journals[key] = j
	}
	return j
}

// rootKey names an additional directory's journal and snapshot refs.
func rootKey(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(sum[:6])
}

// snapshotRef is the ref, below the session's, of a checkpoint's
// snapshot of a root: the checkpoint's id for the session's directory,
// with the root's key for an additional one (two roots may share a
// repository).
func (s *State) snapshotRef(id, dir string) string {
	ref := s.cfg.Store().ID() + "/" + id
	if dir != s.cwd() {
		ref += "." + rootKey(dir)
	}
	return ref
}
