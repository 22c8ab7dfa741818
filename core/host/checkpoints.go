package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/checkpoint"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
	"github.com/gopi-dev/gopi/core/tools"
)

// checkpointEntryType is the customType of the session entries that hold
// checkpoints: custom entries, which pi keeps and never sends to a model.
const checkpointEntryType = "gopi-checkpoint"

// rewindEntryType marks where a conversation restore put the session.
const rewindEntryType = "gopi-rewind"

// checkpointBudget bounds a prompt's snapshot: one that takes longer is
// given up, and the prompt's checkpoint says so.
const checkpointBudget = 3 * time.Second

// checkpoints are the host's: the project's repository, and the
// checkpoint a prompt took until its user message is stored.
type checkpoints struct {
	// mu guards the fields below; a snapshot or restore runs under it.
	mu     sync.Mutex
	opened bool
	repo   *checkpoint.Repo // nil where there is no git work tree
	why    string           // why there is none (then the journal records)
	// pending is the prompt's checkpoint, recorded with the run's first
	// user message.
	pending *checkpointRecord
	// window is the prompt's journal checkpoint once its user message is
	// stored: it is recorded when the run's write or edit first changes
	// a file, so a prompt that changes nothing adds nothing.
	window *journalWindow
	// journals are the sessions' edit journals, by session id.
	journals map[string]*checkpoint.Journal
}

// checkpointRecord is a checkpoint as its session entry stores it.
type checkpointRecord struct {
	api.Checkpoint
	// Commit is the snapshot's commit in the project's repository; ""
	// when none was taken (Note says why).
	Commit string `json:"commit,omitempty"`
	// Journal: the checkpoint's files are in the session's edit journal
	// (outside git, or when the snapshot failed: what write and edit
	// changed).
	Journal bool `json:"journal,omitempty"`
	// fallback: a journal checkpoint in a git work tree whose snapshot
	// failed; it is recorded at once, so the client hears why.
	fallback bool
}

// journalNote is the note of a checkpoint kept by the edit journal.
const journalNote = "outside a git work tree only the changes of write and edit are recorded, not those of commands"

// errCheckpointStreaming refuses a restore during a run.
var errCheckpointStreaming = errors.New("wait for the current response to finish before restoring a checkpoint")

// checkpointRepo opens the project's repository once; nil, with the
// reason, where checkpoints cannot record files.
func (h *Host) checkpointRepo(ctx context.Context) (*checkpoint.Repo, string) {
	c := &h.cp
	if !c.opened {
		c.opened = true
		cwd := filepath.Clean(h.opts.Cwd)
		home, _ := os.UserHomeDir()
		switch {
		case cwd == string(filepath.Separator) || (home != "" && cwd == filepath.Clean(home)):
			c.why = "the session works in the home directory or the root, where gopi takes no snapshots"
		default:
			// The index stays in the agent directory, the user's alone,
			// for the next gopi that works here; without one that can
			// keep it, in a temporary folder until gopi exits (said
			// once).
			o := checkpoint.Options{Report: h.opts.Report}
			if h.opts.AgentDir != "" {
				o.IndexDir = checkpoint.IndexDir(h.opts.AgentDir)
			}
			r, err := checkpoint.Open(ctx, cwd, o)
			if err != nil {
				c.why = "the project is not a git work tree"
			} else {
				c.repo = r
			}
		}
	}
	return c.repo, c.why
}

// closeCheckpoints ends the repository's use of its index (a temporary
// one, without an agent directory, is removed).
func (h *Host) closeCheckpoints() {
	h.cp.mu.Lock()
	defer h.cp.mu.Unlock()
	if h.cp.repo != nil {
		_ = h.cp.repo.Close()
	}
}

// journal is the current session's edit journal, in the agent
// directory; nil without one. c.mu is held.
func (h *Host) journal() *checkpoint.Journal {
	if h.opts.AgentDir == "" {
		return nil
	}
	id := h.Store().ID()
	if h.cp.journals == nil {
		h.cp.journals = map[string]*checkpoint.Journal{}
	}
	j := h.cp.journals[id]
	if j == nil {
		j = checkpoint.OpenJournal(checkpoint.JournalDir(h.opts.AgentDir, id), h.opts.Cwd)
		h.cp.journals[id] = j
	}
	return j
}

// journaller is the tool pipeline's journal: the host's checkpoints.
type journaller struct{ h *Host }

// Keep keeps what a write or edit call is about to change in the
// prompt's journal checkpoint, which is recorded with the first file it
// keeps. Outside journal mode, or for other tools, it does nothing.
func (jr journaller) Keep(ctx context.Context, call agent.Call) {
	h := jr.h
	if call.Name != tools.NameWrite && call.Name != tools.NameEdit {
		return
	}
	h.cp.mu.Lock()
	defer h.cp.mu.Unlock()
	w := h.cp.window
	j := h.journal()
	if w == nil || j == nil {
		return
	}
	target, ok := tools.CallTarget(ctx, h.opts.Cwd, call.Name, call.Args)
	if !ok || target.Abs == "" {
		return
	}
	name := target.Abs
	if target.Real != "" {
		name = target.Real
	}
	if _, err := j.Record(w.ID, name); err != nil {
		h.opts.Report(fmt.Errorf("checkpoint: %w", err))
		return
	}
	if !w.stored {
		w.stored = true
		h.storeCheckpoint(h.Store(), w.checkpointRecord)
	}
}

// newCheckpointID is a short random id.
func newCheckpointID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// snapshot records the files now as a checkpoint of trigger; c.mu is
// held. With no repository, or a snapshot over budget, the checkpoint
// has no commit and a note.
func (h *Host) snapshot(ctx context.Context, trigger api.CheckpointTrigger, label string) checkpointRecord {
	rec := newCheckpoint(newCheckpointID(), trigger, label)
	repo, why := h.checkpointRepo(ctx)
	if repo == nil {
		rec.Note = why
		return rec
	}
	budget := checkpointBudget
	if ms := h.opts.Settings.CheckpointBudgetMs; ms > 0 {
		budget = time.Duration(ms) * time.Millisecond
	}
	sctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	commit, err := repo.Snapshot(sctx, h.Store().ID()+"/"+rec.ID)
	switch {
	case errors.Is(sctx.Err(), context.DeadlineExceeded):
		rec.Note = fmt.Sprintf("the snapshot took longer than its %v budget and was given up", budget)
	case err != nil:
		rec.Note = fmt.Sprintf("the snapshot failed: %v", err)
	default:
		rec.Commit = commit
	}
	return rec
}

// checkpointPrompt records the files before a prompt's run; the
// checkpoint is stored with the run's first user message. Where no files
// can be recorded (outside a git work tree) a prompt records nothing.
func (h *Host) checkpointPrompt(ctx context.Context) {
	h.cp.mu.Lock()
	defer h.cp.mu.Unlock()
	h.cp.window = nil
	if repo, _ := h.checkpointRepo(ctx); repo == nil {
		if h.journal() == nil {
			return // nothing can be recorded: no entry, no event
		}
		rec := h.journalCheckpoint(api.TriggerPrompt, "")
		h.cp.pending = &rec
		return
	}
	rec := h.snapshot(ctx, api.TriggerPrompt, "")
	if rec.Commit == "" && h.journal() != nil {
		// No snapshot this time: the journal keeps what write and edit
		// change in this prompt, and the checkpoint says so at once.
		rec.Journal, rec.fallback = true, true
		rec.Note += "; for this prompt only the changes of write and edit are recorded, not those of commands"
	}
	h.cp.pending = &rec
}

// journalCheckpoint is a new checkpoint kept by the edit journal.
func (h *Host) journalCheckpoint(trigger api.CheckpointTrigger, label string) checkpointRecord {
	rec := newCheckpoint(newCheckpointID(), trigger, label)
	rec.Note, rec.Journal = journalNote, true
	return rec
}

// newCheckpoint is a checkpoint record made now.
func newCheckpoint(id string, trigger api.CheckpointTrigger, label string) checkpointRecord {
	return checkpointRecord{Checkpoint: api.Checkpoint{
		ID: id, CreatedAt: time.Now().UTC().Format(time.RFC3339Nano), Label: label, Trigger: trigger,
	}}
}

// dropPendingCheckpoint forgets the prompt's checkpoint: its run did
// not start.
func (h *Host) dropPendingCheckpoint() {
	h.cp.mu.Lock()
	h.cp.pending = nil
	h.cp.mu.Unlock()
}

// checkpointUserMessage stores the pending checkpoint, keyed to the user
// message entry it precedes, and tells the client.
func (h *Host) checkpointUserMessage(store *session.Store, entryID string) {
	h.cp.mu.Lock()
	rec := h.cp.pending
	h.cp.pending = nil
	h.cp.mu.Unlock()
	if rec == nil {
		return
	}
	rec.EntryID = entryID
	if rec.Journal {
		// Recorded when a file is first kept, or now when the snapshot
		// failed.
		h.cp.mu.Lock()
		h.cp.window = &journalWindow{checkpointRecord: *rec, stored: rec.fallback}
		h.cp.mu.Unlock()
		if !rec.fallback {
			return
		}
	}
	h.storeCheckpoint(store, *rec)
}

// journalWindow is a prompt's journal checkpoint and whether its entry
// is stored yet.
type journalWindow struct {
	checkpointRecord
	stored bool
}

// storeCheckpoint appends a checkpoint's entry and announces it.
func (h *Host) storeCheckpoint(store *session.Store, rec checkpointRecord) {
	if _, err := store.AppendCustom(checkpointEntryType, rec); err != nil {
		_ = h.saved(store, "a checkpoint", err)
		return
	}
	h.emit(api.CheckpointCreated{Checkpoint: rec.Checkpoint})
}

// checkpointRecords are the session's checkpoints, oldest first.
func checkpointRecords(store *session.Store) []checkpointRecord {
	var out []checkpointRecord
	for _, e := range store.Entries() {
		c, ok := e.(*session.CustomEntry)
		if !ok || c.CustomType != checkpointEntryType {
			continue
		}
		var rec checkpointRecord
		if json.Unmarshal(c.Data, &rec) == nil && rec.ID != "" {
			out = append(out, rec)
		}
	}
	return out
}

func findCheckpoint(store *session.Store, id string) (checkpointRecord, error) {
	for _, rec := range checkpointRecords(store) {
		if rec.ID == id {
			return rec, nil
		}
	}
	return checkpointRecord{}, fmt.Errorf("no checkpoint %q in this session (list_checkpoints lists them)", api.Clip(id, api.ClipName))
}

// CreateCheckpoint records the files now, by hand; the checkpoint is
// keyed to the session's leaf.
func (h *Host) CreateCheckpoint(ctx context.Context, p api.CreateCheckpointParams) (api.CheckpointResult, error) {
	h.cp.mu.Lock()
	defer h.cp.mu.Unlock()
	store := h.Store()
	var rec checkpointRecord
	if repo, why := h.checkpointRepo(ctx); repo != nil {
		if rec = h.snapshot(ctx, api.TriggerManual, p.Label); rec.Commit == "" {
			return api.CheckpointResult{}, fmt.Errorf("create_checkpoint: %s", rec.Note)
		}
	} else if h.journal() != nil {
		// Later changes of write and edit are kept under it, until the
		// next prompt.
		rec = h.journalCheckpoint(api.TriggerManual, p.Label)
		h.cp.window = &journalWindow{checkpointRecord: rec, stored: true}
	} else {
		return api.CheckpointResult{}, fmt.Errorf("create_checkpoint: %s, and sessions without an agent directory keep no journal", why)
	}
	rec.EntryID = store.Leaf()
	if h.cp.window != nil && h.cp.window.ID == rec.ID {
		h.cp.window.EntryID = rec.EntryID
	}
	h.storeCheckpoint(store, rec)
	return api.CheckpointResult{Checkpoint: rec.Checkpoint}, nil
}

// ListCheckpoints lists the session's checkpoints, oldest first.
func (h *Host) ListCheckpoints(context.Context) (api.CheckpointsResult, error) {
	out := []api.Checkpoint{}
	for _, rec := range checkpointRecords(h.Store()) {
		out = append(out, rec.Checkpoint)
	}
	return api.CheckpointsResult{Checkpoints: out}, nil
}

// DiffCheckpoint says how the files differ from a checkpoint: what
// restoring its code would undo.
func (h *Host) DiffCheckpoint(ctx context.Context, p api.CheckpointParams) (api.FileChangesResult, error) {
	rec, repo, err := h.codeCheckpoint(ctx, p.CheckpointID)
	if err != nil {
		return api.FileChangesResult{}, fmt.Errorf("diff_checkpoint: %w", err)
	}
	var changes []checkpoint.Change
	if rec.Journal {
		h.cp.mu.Lock()
		changes, err = h.journal().Changes(journalFrom(h.Store(), rec.ID))
		h.cp.mu.Unlock()
	} else {
		changes, err = repo.Changes(ctx, rec.Commit)
	}
	if err != nil {
		return api.FileChangesResult{}, fmt.Errorf("diff_checkpoint: %w", err)
	}
	return api.FileChangesResult{Files: fileChanges(changes)}, nil
}

// codeCheckpoint finds a checkpoint whose files were recorded.
func (h *Host) codeCheckpoint(ctx context.Context, id string) (checkpointRecord, *checkpoint.Repo, error) {
	if id == "" {
		return checkpointRecord{}, nil, errors.New(`"checkpointId" is required`)
	}
	rec, err := findCheckpoint(h.Store(), id)
	if err != nil {
		return rec, nil, err
	}
	h.cp.mu.Lock()
	repo, why := h.checkpointRepo(ctx)
	j := h.journal()
	h.cp.mu.Unlock()
	switch {
	case rec.Journal && j == nil:
		return rec, nil, errors.New("this session keeps no journal (no agent directory)")
	case rec.Journal:
		return rec, nil, nil
	case rec.Commit == "" && rec.Note != "":
		return rec, nil, fmt.Errorf("checkpoint %s recorded no files: %s", id, rec.Note)
	case repo == nil:
		return rec, nil, errors.New(why)
	}
	return rec, repo, nil
}

// journalFrom are the ids of the session's journal checkpoints from id
// on, oldest first: the windows whose first records say what the files
// were at id.
func journalFrom(store *session.Store, id string) []string {
	var out []string
	for _, rec := range checkpointRecords(store) {
		if rec.ID == id || len(out) > 0 {
			if rec.Journal {
				out = append(out, rec.ID)
			}
		}
	}
	return out
}

func fileChanges(cs []checkpoint.Change) []api.FileChange {
	out := make([]api.FileChange, 0, len(cs))
	for _, c := range cs {
		out = append(out, api.FileChange{Path: c.Path, Status: c.Status, Binary: c.Binary, Diff: c.Diff})
	}
	return out
}

// RestoreCheckpoint puts back a checkpoint's files, its conversation (the
// session's leaf goes to just before its user message, whose text is
// returned), or both. A code restore first records the files as they
// are, so it can be undone. Refused during a run.
func (h *Host) RestoreCheckpoint(ctx context.Context, p api.RestoreCheckpointParams) (api.RestoreCheckpointResult, error) {
	what := p.Restore
	switch what {
	case "":
		what = api.RestoreBoth
	case api.RestoreCode, api.RestoreConversation, api.RestoreBoth:
	default:
		return api.RestoreCheckpointResult{}, fmt.Errorf(`restore_checkpoint: "restore" must be "code", "conversation" or "both", not %q`, api.Clip(string(what), api.ClipName))
	}
	if h.agent.IsStreaming() {
		return api.RestoreCheckpointResult{}, fmt.Errorf("restore_checkpoint: %w", errCheckpointStreaming)
	}
	if p.CheckpointID == "" {
		return api.RestoreCheckpointResult{}, errors.New(`restore_checkpoint: "checkpointId" is required`)
	}
	store := h.Store()
	rec, err := findCheckpoint(store, p.CheckpointID)
	if err != nil {
		return api.RestoreCheckpointResult{}, fmt.Errorf("restore_checkpoint: %w", err)
	}
	out := api.RestoreCheckpointResult{Files: []api.FileChange{}}
	if what != api.RestoreConversation {
		rec, repo, err := h.codeCheckpoint(ctx, p.CheckpointID)
		if err != nil {
			return api.RestoreCheckpointResult{}, fmt.Errorf("restore_checkpoint: %w", err)
		}
		undoID := newCheckpointID()
		var changes []checkpoint.Change
		// The undo checkpoint: the files as they were just before, in
		// the journal or in a snapshot commit.
		u := newCheckpoint(undoID, api.TriggerRestore, "before restoring "+rec.ID)
		u.EntryID = store.Leaf()
		var undone bool
		h.cp.mu.Lock()
		if rec.Journal {
			changes, err = h.journal().Restore(journalFrom(store, rec.ID), undoID, p.DryRun)
			u.Journal, u.Note = true, journalNote
			undone = !p.DryRun && len(changes) > 0
		} else {
			changes, u.Commit, err = repo.Restore(ctx, rec.Commit, store.ID()+"/"+undoID, p.DryRun)
			undone = u.Commit != ""
		}
		h.cp.mu.Unlock()
		if err != nil && !undone {
			return api.RestoreCheckpointResult{}, fmt.Errorf("restore_checkpoint: %w", err)
		}
		out.Files = fileChanges(changes)
		if undone {
			h.storeCheckpoint(store, u)
			out.UndoCheckpointID = undoID
		}
		if err != nil {
			return out, fmt.Errorf("restore_checkpoint: some files were not restored (restore %s to undo the rest): %w", undoID, err)
		}
	}
	if what == api.RestoreConversation && !p.DryRun {
		// The conversation as it is now, so the rewind can be undone:
		// restoring this checkpoint's conversation comes back here. It
		// records no files.
		u := newCheckpoint(newCheckpointID(), api.TriggerRestore, "before restoring "+rec.ID)
		u.EntryID, u.Note = store.Leaf(), "the conversation before a rewind; no files were recorded"
		h.storeCheckpoint(store, u)
		out.UndoCheckpointID = u.ID
	}
	if what != api.RestoreCode {
		text, err := h.rewindTo(ctx, store, rec, p.DryRun)
		if err != nil {
			return out, fmt.Errorf("restore_checkpoint: %w", err)
		}
		out.Text = text
	}
	if !p.DryRun {
		h.emit(api.CheckpointRestored{CheckpointID: rec.ID, Restore: what, Files: out.Files})
	}
	return out, nil
}

// rewindTo moves the conversation to just before the checkpoint's user
// message (pi's tree navigation: the old branch stays in the file, the
// next prompt starts a new one) and returns the message's text.
func (h *Host) rewindTo(ctx context.Context, store *session.Store, rec checkpointRecord, dryRun bool) (*string, error) {
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
	res, err := h.NavigateTree(ctx, rec.EntryID, NavigateOptions{})
	if err != nil {
		return nil, err
	}
	// An entry on the new branch keeps it the session's when it is
	// opened again (a file's leaf is its last entry), as the next
	// prompt's would; pi passes over it.
	if _, err := store.AppendCustom(rewindEntryType, map[string]string{"checkpointId": rec.ID}); err != nil {
		return res.EditorText, h.saved(store, "the rewind", err)
	}
	return res.EditorText, nil
}
