package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
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

// checkpoints are the host's: each root's recorder (a repository, or
// the reason there is none), and the checkpoint a prompt took until its
// user message is stored.
type checkpoints struct {
	// mu guards the fields below; a snapshot or restore runs under it.
	mu sync.Mutex
	// recorders are the roots' repositories, by directory, opened once.
	recorders map[string]*rootRecorder
	// pending is the prompt's checkpoint, recorded with the run's first
	// user message.
	pending *checkpointRecord
	// window is the prompt's checkpoint once its user message is stored,
	// while a root of it is kept by the edit journal: write and edit keep
	// a file there before they first change it; a checkpoint only the
	// journal keeps is recorded then, so a prompt that changes nothing
	// adds nothing.
	window *journalWindow
	// journals are the edit journals, by session id and root.
	journals map[[2]string]*checkpoint.Journal
}

// rootRecorder is a root's repository; nil, with why, where there is none
// (then the journal records).
type rootRecorder struct {
	repo *checkpoint.Repo
	why  string
}

// checkpointRecord is a checkpoint as its session entry stores it.
type checkpointRecord struct {
	api.Checkpoint
	// Commit is the snapshot's commit of the session's directory in the
	// project's repository; "" when none was taken (Note says why).
	Commit string `json:"commit,omitempty"`
	// Journal: the session directory's files are in the session's edit
	// journal (outside git, or when the snapshot failed: what write and
	// edit changed).
	Journal bool `json:"journal,omitempty"`
	// Roots are the additional directories the checkpoint recorded, each
	// as the session's directory is; a restore puts back these and no
	// others.
	Roots []rootCheckpoint `json:"roots,omitempty"`
	// fallback: a journal checkpoint in a git work tree whose snapshot
	// failed; it is recorded at once, so the client hears why.
	fallback bool
}

// rootCheckpoint is what a checkpoint recorded of one root.
type rootCheckpoint struct {
	Dir     string `json:"dir"`
	Commit  string `json:"commit,omitempty"`
	Journal bool   `json:"journal,omitempty"`
	// note says why nothing, or only the journal, recorded the root;
	// fallback, that the journal stands in for a failed snapshot.
	note     string
	fallback bool
}

// recorded reports whether the root's files were recorded.
func (rc rootCheckpoint) recorded() bool { return rc.Commit != "" || rc.Journal }

// roots are everything the checkpoint recorded: the session's directory
// first, then its additional directories.
func (rec checkpointRecord) roots(cwd string) []rootCheckpoint {
	return append([]rootCheckpoint{{Dir: cwd, Commit: rec.Commit, Journal: rec.Journal}}, rec.Roots...)
}

// journalNote is the note of a checkpoint kept by the edit journal.
const journalNote = "outside a git work tree only the changes of write and edit are recorded, not those of commands"

// errCheckpointStreaming refuses a restore during a run.
var errCheckpointStreaming = errors.New("wait for the current response to finish before restoring a checkpoint")

// journaller is the tool pipeline's journal: the host's checkpoints.
type journaller struct{ h *Host }

// Keep keeps what a write or edit call is about to change in the
// prompt's checkpoint, when the journal keeps the root the file is in;
// a checkpoint only the journal keeps is recorded with the first file
// it keeps. For other tools, or files of roots a snapshot recorded, it
// does nothing.
func (jr journaller) Keep(ctx context.Context, call agent.Call) {
	h := jr.h
	if call.Name != tools.NameWrite && call.Name != tools.NameEdit {
		return
	}
	h.cp.mu.Lock()
	defer h.cp.mu.Unlock()
	w := h.cp.window
	if w == nil || h.opts.AgentDir == "" {
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
	// The file is the session directory's when it lies there, else the
	// additional directory's that holds it: no two roots of a checkpoint
	// hold the same file.
	var root *rootCheckpoint
	for _, rc := range w.roots(h.cwd()) {
		if within(realDir(rc.Dir), name) {
			root = &rc
			break
		}
	}
	if root == nil || !root.Journal {
		return
	}
	if _, err := h.rootJournal(root.Dir).Record(w.ID, name); err != nil {
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

// recordRoot records a root's files now for checkpoint id: a snapshot
// where the root is in a git work tree, else the edit journal, from the
// first change of write or edit. With fallback, the journal also stands
// in for a snapshot that failed or was given up. c.mu is held.
func (h *Host) recordRoot(ctx context.Context, id, dir string, fallback bool) rootCheckpoint {
	rc := rootCheckpoint{Dir: dir}
	repo, why := h.rootRepo(ctx, dir)
	j := h.rootJournal(dir)
	if repo == nil {
		if j == nil {
			rc.note = why
		} else {
			rc.Journal, rc.note = true, journalNote
		}
		return rc
	}
	budget := checkpointBudget
	if ms := h.opts.Settings.CheckpointBudgetMs; ms > 0 {
		budget = time.Duration(ms) * time.Millisecond
	}
	sctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	commit, err := repo.Snapshot(sctx, h.snapshotRef(id, dir))
	switch {
	case errors.Is(sctx.Err(), context.DeadlineExceeded):
		rc.note = fmt.Sprintf("the snapshot took longer than its %v budget and was given up", budget)
	case err != nil:
		rc.note = fmt.Sprintf("the snapshot failed: %v", err)
	default:
		rc.Commit = commit
		return rc
	}
	if fallback && j != nil {
		// No snapshot this time: the journal keeps what write and edit
		// change in this prompt, and the checkpoint says so at once.
		rc.Journal, rc.fallback = true, true
		rc.note += "; for this prompt only the changes of write and edit are recorded, not those of commands"
	}
	return rc
}

// record records the files of every root now as a checkpoint of
// trigger (see recordRoot). Its note says why a root is not recorded,
// or only by the journal: the session directory's alone, an additional
// directory's after its path. c.mu is held.
func (h *Host) record(ctx context.Context, trigger api.CheckpointTrigger, label string, fallback bool) checkpointRecord {
	rec := newCheckpoint(newCheckpointID(), trigger, label)
	for i, dir := range h.checkpointRoots() {
		rc := h.recordRoot(ctx, rec.ID, dir, fallback)
		if i == 0 {
			rec.Commit, rec.Journal, rec.Note, rec.fallback = rc.Commit, rc.Journal, rc.note, rc.fallback
			continue
		}
		if rc.note != "" {
			if rec.Note != "" {
				rec.Note += "; "
			}
			rec.Note += dir + ": " + rc.note
		}
		if rc.recorded() {
			rec.Roots = append(rec.Roots, rc)
			rec.fallback = rec.fallback || rc.fallback
		}
	}
	return rec
}

// recordedAny reports whether the checkpoint recorded the files of a
// root; journaled, whether the journal keeps one; snapshotted, whether
// a snapshot recorded one.
func (rec checkpointRecord) recordedAny() bool {
	return slices.ContainsFunc(rec.roots(""), rootCheckpoint.recorded)
}

func (rec checkpointRecord) journaled() bool {
	return slices.ContainsFunc(rec.roots(""), func(rc rootCheckpoint) bool { return rc.Journal })
}

func (rec checkpointRecord) snapshotted() bool {
	return slices.ContainsFunc(rec.roots(""), func(rc rootCheckpoint) bool { return rc.Commit != "" })
}

// journals reports whether the journal keeps the root dir's files under
// the checkpoint.
func (rec checkpointRecord) journals(cwd, dir string) bool {
	for _, rc := range rec.roots(cwd) {
		if rc.Dir == dir {
			return rc.Journal
		}
	}
	return false
}

// checkpointPrompt records the files before a prompt's run; the
// checkpoint is stored with the run's first user message. Where no files
// can be recorded (outside a git work tree, without a journal) a prompt
// records nothing.
func (h *Host) checkpointPrompt(ctx context.Context) {
	h.cp.mu.Lock()
	defer h.cp.mu.Unlock()
	h.cp.window = nil
	rec := h.record(ctx, api.TriggerPrompt, "", true)
	if repo, _ := h.checkpointRepo(ctx); repo == nil && !rec.recordedAny() {
		return // nothing can be recorded: no entry, no event
	}
	h.cp.pending = &rec
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
	if rec.journaled() {
		// A checkpoint the journal alone keeps is recorded when a file
		// is first kept; one a snapshot recorded, or whose snapshot
		// failed, now.
		stored := rec.fallback || rec.snapshotted()
		h.cp.mu.Lock()
		h.cp.window = &journalWindow{checkpointRecord: *rec, stored: stored}
		h.cp.mu.Unlock()
		if !stored {
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

// CheckpointDirs are the additional directories whose files the
// checkpoints of the session file at path recorded by a snapshot: their
// repositories hold the session's refs too. None when the file cannot be
// read.
func CheckpointDirs(path string) []string {
	store, _, err := session.Open(path)
	if err != nil {
		return nil
	}
	var out []string
	for _, rec := range checkpointRecords(store) {
		for _, rc := range rec.Roots {
			if rc.Commit != "" && !slices.Contains(out, rc.Dir) {
				out = append(out, rc.Dir)
			}
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
	rec := h.record(ctx, api.TriggerManual, p.Label, false)
	if repo, _ := h.checkpointRepo(ctx); repo != nil && rec.Commit == "" {
		return api.CheckpointResult{}, fmt.Errorf("create_checkpoint: %s", rec.Note)
	}
	if !rec.recordedAny() {
		return api.CheckpointResult{}, fmt.Errorf("create_checkpoint: %s, and sessions without an agent directory keep no journal", rec.Note)
	}
	rec.EntryID = store.Leaf()
	if rec.journaled() {
		// Later changes of write and edit are kept under it, until the
		// next prompt.
		h.cp.window = &journalWindow{checkpointRecord: rec, stored: true}
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
	rec, roots, err := h.codeCheckpoint(ctx, p.CheckpointID)
	if err != nil {
		return api.FileChangesResult{}, fmt.Errorf("diff_checkpoint: %w", err)
	}
	store := h.Store()
	files := []api.FileChange{}
	h.cp.mu.Lock()
	defer h.cp.mu.Unlock()
	for _, cr := range roots {
		var changes []checkpoint.Change
		err := cr.err
		switch {
		case err != nil:
		case cr.journal != nil:
			changes, err = cr.journal.Changes(journalFrom(store, rec.ID, h.cwd(), cr.Dir))
		default:
			changes, err = cr.repo.Changes(ctx, cr.Commit)
		}
		if err != nil {
			return api.FileChangesResult{}, fmt.Errorf("diff_checkpoint: %w", h.rootErr(roots, cr.Dir, err))
		}
		files = append(files, h.fileChanges(cr.Dir, changes)...)
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
func (h *Host) codeCheckpoint(ctx context.Context, id string) (checkpointRecord, []codeRoot, error) {
	if id == "" {
		return checkpointRecord{}, nil, errors.New(`"checkpointId" is required`)
	}
	rec, err := findCheckpoint(h.Store(), id)
	if err != nil {
		return rec, nil, err
	}
	if !rec.recordedAny() {
		if rec.Note != "" {
			return rec, nil, fmt.Errorf("checkpoint %s recorded no files: %s", id, rec.Note)
		}
		_, why := h.lockedRepo(ctx)
		return rec, nil, errors.New(why)
	}
	h.cp.mu.Lock()
	defer h.cp.mu.Unlock()
	var out []codeRoot
	for _, rc := range rec.roots(h.cwd()) {
		if !rc.recorded() {
			continue
		}
		cr := codeRoot{rootCheckpoint: rc}
		if rc.Journal {
			if cr.journal = h.rootJournal(rc.Dir); cr.journal == nil {
				cr.err = errors.New("this session keeps no journal (no agent directory)")
			}
		} else if repo, why := h.rootRepo(ctx, rc.Dir); repo == nil {
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
func (h *Host) lockedRepo(ctx context.Context) (*checkpoint.Repo, string) {
	h.cp.mu.Lock()
	defer h.cp.mu.Unlock()
	return h.checkpointRepo(ctx)
}

// rootErr names the root an error is about when the checkpoint has more
// than one.
func (h *Host) rootErr(roots []codeRoot, dir string, err error) error {
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
func (h *Host) fileChanges(dir string, cs []checkpoint.Change) []api.FileChange {
	out := make([]api.FileChange, 0, len(cs))
	for _, c := range cs {
		p := c.Path
		if dir != h.cwd() {
			p = filepath.Join(dir, filepath.FromSlash(c.Path))
		}
		out = append(out, api.FileChange{Path: p, Status: c.Status, Binary: c.Binary, Diff: c.Diff})
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
		rec, roots, err := h.codeCheckpoint(ctx, p.CheckpointID)
		if err != nil {
			return api.RestoreCheckpointResult{}, fmt.Errorf("restore_checkpoint: %w", err)
		}
		// The undo checkpoint: the files of the same roots as they were
		// just before, in the journal or in snapshot commits.
		u := newCheckpoint(newCheckpointID(), api.TriggerRestore, "before restoring "+rec.ID)
		u.EntryID = store.Leaf()
		var errs []error
		h.cp.mu.Lock()
		for _, cr := range roots {
			if cr.err != nil {
				errs = append(errs, h.rootErr(roots, cr.Dir, cr.err))
				continue
			}
			uc := rootCheckpoint{Dir: cr.Dir}
			var changes []checkpoint.Change
			var err error
			if cr.journal != nil {
				changes, err = cr.journal.Restore(journalFrom(store, rec.ID, h.cwd(), cr.Dir), u.ID, p.DryRun)
				uc.Journal = !p.DryRun && len(changes) > 0
			} else {
				changes, uc.Commit, err = cr.repo.Restore(ctx, cr.Commit, h.snapshotRef(u.ID, cr.Dir), p.DryRun)
			}
			out.Files = append(out.Files, h.fileChanges(cr.Dir, changes)...)
			if err != nil {
				errs = append(errs, h.rootErr(roots, cr.Dir, err))
			}
			switch {
			case cr.Dir == h.cwd():
				u.Commit, u.Journal = uc.Commit, uc.Journal
				if uc.Journal {
					u.Note = journalNote
				}
			case uc.recorded():
				u.Roots = append(u.Roots, uc)
			}
		}
		h.cp.mu.Unlock()
		err = errors.Join(errs...)
		undone := u.recordedAny()
		if err != nil && !undone {
			return api.RestoreCheckpointResult{}, fmt.Errorf("restore_checkpoint: %w", err)
		}
		if undone {
			h.storeCheckpoint(store, u)
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
