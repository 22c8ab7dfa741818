package checkpoints

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/checkpoint"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// The clients' checkpoint commands: create, list, diff, restore.

// Create records the files now, by hand; the checkpoint is
// keyed to the session's leaf.
func (s *State) Create(ctx context.Context, p api.CreateCheckpointParams) (api.CheckpointResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	store := s.cfg.Store()
	rec := s.record(ctx, api.TriggerManual, p.Label, false)
	if repo, _ := s.checkpointRepo(ctx); repo != nil && rec.Commit == "" {
		return api.CheckpointResult{}, fmt.Errorf("create_checkpoint: %s", rec.Note)
	}
	if !rec.recordedAny() {
		return api.CheckpointResult{}, fmt.Errorf("create_checkpoint: %s, and sessions without an agent directory keep no journal", rec.Note)
	}
	rec.EntryID = store.Leaf()
	if rec.journaled() {
		// Later changes of write and edit are kept under it, until the
		// next prompt.
		s.window = &journalWindow{checkpointRecord: rec, stored: true}
	}
	s.storeCheckpoint(store, rec)
	return api.CheckpointResult{Checkpoint: rec.Checkpoint}, nil
}

// List lists the session's checkpoints, oldest first.
func (s *State) List(context.Context) (api.CheckpointsResult, error) {
	out := []api.Checkpoint{}
	for _, rec := range checkpointRecords(s.cfg.Store()) {
		out = append(out, rec.Checkpoint)
	}
	return api.CheckpointsResult{Checkpoints: out}, nil
}

// Diff says how the files differ from a checkpoint: what
// restoring its code would undo.
func (s *State) Diff(ctx context.Context, p api.CheckpointParams) (api.FileChangesResult, error) {
	rec, roots, err := s.codeCheckpoint(ctx, p.CheckpointID)
	if err != nil {
		return api.FileChangesResult{}, fmt.Errorf("diff_checkpoint: %w", err)
	}
	store := s.cfg.Store()
	files := []api.FileChange{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cr := range roots {
		var changes []checkpoint.Change
		err := cr.err
		switch {
		case err != nil:
		case cr.journal != nil:
			changes, err = cr.journal.Changes(journalFrom(store, rec.ID, s.cwd(), cr.Dir))
		default:
			changes, err = cr.repo.Changes(ctx, cr.Commit)
		}
		if err != nil {
			return api.FileChangesResult{}, fmt.Errorf("diff_checkpoint: %w", s.rootErr(roots, cr.Dir, err))
		}
		files = append(files, s.fileChanges(cr.Dir, changes)...)
	}
	return api.FileChangesResult{Files: files}, nil
}

// codeRoot is a root whose files a checkpoint recorded, with what
// restores it, or why nothing can.
type codeRoot struct {
	rootCheckpoint
	repo    *checkpoint.Repo
	journal *checkpoint.Journal
	err     error
}

// codeCheckpoint finds a checkpoint whose files were recorded, and the
// roots it recorded.
func (s *State) codeCheckpoint(ctx context.Context, id string) (checkpointRecord, []codeRoot, error) {
	if id == "" {
		return checkpointRecord{}, nil, errors.New(`"checkpointId" is required`)
	}
	rec, err := findCheckpoint(s.cfg.Store(), id)
	if err != nil {
		return rec, nil, err
	}
	if !rec.recordedAny() {
		if rec.Note != "" {
			return rec, nil, fmt.Errorf("checkpoint %s recorded no files: %s", id, rec.Note)
		}
		_, why := s.lockedRepo(ctx)
		return rec, nil, errors.New(why)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []codeRoot
	for _, rc := range rec.roots(s.cwd()) {
		if !rc.recorded() {
			continue
		}
		cr := codeRoot{rootCheckpoint: rc}
		if rc.Journal {
			if cr.journal = s.rootJournal(rc.Dir); cr.journal == nil {
				cr.err = errors.New("this session keeps no journal (no agent directory)")
			}
		} else if repo, why := s.rootRepo(ctx, rc.Dir); repo == nil {
			cr.err = errors.New(why)
		} else {
			cr.repo = repo
		}
		out = append(out, cr)
	}
	if len(out) == 1 && out[0].err != nil {
		return rec, nil, out[0].err
	}
	return rec, out, nil
}

// lockedRepo is checkpointRepo under c.mu.
func (s *State) lockedRepo(ctx context.Context) (*checkpoint.Repo, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.checkpointRepo(ctx)
}

// rootErr names the root an error is about when the checkpoint has more
// than one.
func (s *State) rootErr(roots []codeRoot, dir string, err error) error {
	if len(roots) < 2 {
		return err
	}
	return fmt.Errorf("%s: %w", dir, err)
}

// journalFrom are the ids of the session's checkpoints from id on whose
// journal keeps the root dir, oldest first: the windows whose first
// records say what the root's files were at id.
func journalFrom(store *session.Store, id, cwd, dir string) []string {
	var out []string
	for _, rec := range checkpointRecords(store) {
		if rec.ID == id || len(out) > 0 {
			if rec.journals(cwd, dir) {
				out = append(out, rec.ID)
			}
		}
	}
	return out
}

// fileChanges words a root's changes for the client: paths relative to
// the session's directory for its own files, absolute for an additional
// directory's.
func (s *State) fileChanges(dir string, cs []checkpoint.Change) []api.FileChange {
	out := make([]api.FileChange, 0, len(cs))
	for _, c := range cs {
		p := c.Path
		if dir != s.cwd() {
			p = filepath.Join(dir, filepath.FromSlash(c.Path))
		}
		out = append(out, api.FileChange{Path: p, Status: c.Status, Binary: c.Binary, Diff: c.Diff})
	}
	return out
}

// Restore puts back a checkpoint's files, its conversation (the
// session's leaf goes to just before its user message, whose text is
// returned), or both. A code restore first records the files as they
// are, so it can be undone. Refused during a run.
func (s *State) Restore(ctx context.Context, p api.RestoreCheckpointParams) (api.RestoreCheckpointResult, error) {
	what := p.Restore
	switch what {
	case "":
		what = api.RestoreBoth
	case api.RestoreCode, api.RestoreConversation, api.RestoreBoth:
	default:
		return api.RestoreCheckpointResult{}, fmt.Errorf(`restore_checkpoint: "restore" must be "code", "conversation" or "both", not %q`, api.Clip(string(what), api.ClipName))
	}
	if s.cfg.Busy(ctx) {
		return api.RestoreCheckpointResult{}, fmt.Errorf("restore_checkpoint: %w", errCheckpointStreaming)
	}
	if p.CheckpointID == "" {
		return api.RestoreCheckpointResult{}, errors.New(`restore_checkpoint: "checkpointId" is required`)
	}
	store := s.cfg.Store()
	rec, err := findCheckpoint(store, p.CheckpointID)
	if err != nil {
		return api.RestoreCheckpointResult{}, fmt.Errorf("restore_checkpoint: %w", err)
	}
	out := api.RestoreCheckpointResult{Files: []api.FileChange{}}
	if what != api.RestoreConversation {
		rec, roots, err := s.codeCheckpoint(ctx, p.CheckpointID)
		if err != nil {
			return api.RestoreCheckpointResult{}, fmt.Errorf("restore_checkpoint: %w", err)
		}
		// The undo checkpoint: the files of the same roots as they were
		// just before, in the journal or in snapshot commits.
		u := newCheckpoint(newCheckpointID(), api.TriggerRestore, "before restoring "+rec.ID)
		u.EntryID = store.Leaf()
		var errs []error
		s.mu.Lock()
		for _, cr := range roots {
			if cr.err != nil {
				errs = append(errs, s.rootErr(roots, cr.Dir, cr.err))
				continue
			}
			uc := rootCheckpoint{Dir: cr.Dir}
			var changes []checkpoint.Change
			var err error
			if cr.journal != nil {
				changes, err = cr.journal.Restore(journalFrom(store, rec.ID, s.cwd(), cr.Dir), u.ID, p.DryRun)
				uc.Journal = !p.DryRun && len(changes) > 0
			} else {
				changes, uc.Commit, err = cr.repo.Restore(ctx, cr.Commit, s.snapshotRef(u.ID, cr.Dir), p.DryRun)
			}
			out.Files = append(out.Files, s.fileChanges(cr.Dir, changes)...)
			if err != nil {
				errs = append(errs, s.rootErr(roots, cr.Dir, err))
			}
			switch {
			case cr.Dir == s.cwd():
				u.Commit, u.Journal = uc.Commit, uc.Journal
				if uc.Journal {
					u.Note = journalNote
				}
			case uc.recorded():
				u.Roots = append(u.Roots, uc)
			}
		}
		s.mu.Unlock()
		err = errors.Join(errs...)
		undone := u.recordedAny()
		if err != nil && !undone {
			return api.RestoreCheckpointResult{}, fmt.Errorf("restore_checkpoint: %w", err)
		}
		if undone {
			s.storeCheckpoint(store, u)
			out.UndoCheckpointID = u.ID
		}
		if err != nil {
			return out, fmt.Errorf("restore_checkpoint: some files were not restored (restore %s to undo the rest): %w", u.ID, err)
		}
	}
	if what == api.RestoreConversation && !p.DryRun {
		// The conversation as it is now, so the rewind can be undone:
		// restoring this checkpoint's conversation comes back here. It
		// records no files.
		u := newCheckpoint(newCheckpointID(), api.TriggerRestore, "before restoring "+rec.ID)
		u.EntryID, u.Note = store.Leaf(), "the conversation before a rewind; no files were recorded"
		s.storeCheckpoint(store, u)
		out.UndoCheckpointID = u.ID
	}
	if what != api.RestoreCode {
		text, err := s.rewindTo(ctx, store, rec, p.DryRun)
		if err != nil {
			return out, fmt.Errorf("restore_checkpoint: %w", err)
		}
		out.Text = text
	}
	if !p.DryRun {
		s.cfg.Emit(api.CheckpointRestored{CheckpointID: rec.ID, Restore: what, Files: out.Files})
	}
	return out, nil
}

// rewindTo moves the conversation to just before the checkpoint's user
// message (pi's tree navigation: the old branch stays in the file, the
// next prompt starts a new one) and returns the message's text.
func (s *State) rewindTo(ctx context.Context, store *session.Store, rec checkpointRecord, dryRun bool) (*string, error) {
	e, ok := store.Entry(rec.EntryID)
	if !ok {
		return nil, fmt.Errorf("checkpoint %s: its entry %s is not in this session", rec.ID, rec.EntryID)
	}
	if dryRun {
		if m, ok := e.(*session.MessageEntry); ok {
			if u, ok := m.Message().(*llm.UserMessage); ok {
				text := u.Content.Text()
				return &text, nil
			}
		}
		return nil, nil
	}
	text, err := s.cfg.Navigate(ctx, rec.EntryID)
	if err != nil {
		return nil, err
	}
	// An entry on the new branch keeps it the session's when it is
	// opened again (a file's leaf is its last entry), as the next
	// prompt's would; pi passes over it.
	if _, err := store.AppendCustom(rewindEntryType, map[string]string{"checkpointId": rec.ID}); err != nil {
		return text, s.cfg.Saved(store, "the rewind", err)
	}
	return text, nil
}
