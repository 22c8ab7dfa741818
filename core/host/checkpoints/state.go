package checkpoints

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/checkpoint"
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

// Config is what the checkpoints use of the host: the session's
// directory and the additional ones, the agent directory (where the
// journals and indexes live), the current session and how the host
// tells of what happened. Every func is required.
type Config struct {
	// Cwd is the session's directory.
	Cwd string
	// AgentDir is the agent directory; "" keeps no journal.
	AgentDir string
	// BudgetMs bounds a prompt's snapshot (settings'
	// checkpointBudgetMs); 0 is the default, 3 s.
	BudgetMs int64
	// Roots are the additional directories now.
	Roots func() []string
	// Store is the current session.
	Store func() *session.Store
	// Busy reports whether a prompt is in progress, the moment after
	// agent_end while its run winds down waited out.
	Busy func(context.Context) bool
	// Navigate moves the session's leaf to an entry (the host's tree
	// navigation) and returns the text it put back in the editor.
	Navigate func(ctx context.Context, entryID string) (*string, error)
	// Emit tells the clients of an event.
	Emit func(api.Event)
	// Saved reports how a write to the session went (see Host.saved).
	Saved func(store *session.Store, what string, err error) error
	// Report says what went wrong where no caller can hear it.
	Report func(error)
}

// State is the session's checkpoints: each root's recorder (a
// repository, or the reason there is none), the edit journals, and the
// checkpoint a prompt took until its user message is stored.
type State struct {
	cfg Config

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

// New is the checkpoints of a session with cfg.
func New(cfg Config) *State { return &State{cfg: cfg} }

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

// Keep keeps what a write or edit call is about to change in the
// prompt's checkpoint, when the journal keeps the root the file is in;
// a checkpoint only the journal keeps is recorded with the first file
// it keeps. For other tools, or files of roots a snapshot recorded, it
// does nothing.
// State is the tool pipeline's journal (gate.Journal).
func (s *State) Keep(ctx context.Context, call agent.Call) {
	if call.Name != tools.NameWrite && call.Name != tools.NameEdit {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.window
	if w == nil || s.cfg.AgentDir == "" {
		return
	}
	target, ok := tools.CallTarget(ctx, s.cfg.Cwd, call.Name, call.Args)
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
	for _, rc := range w.roots(s.cwd()) {
		if within(realDir(rc.Dir), name) {
			root = &rc
			break
		}
	}
	if root == nil || !root.Journal {
		return
	}
	if _, err := s.rootJournal(root.Dir).Record(w.ID, name); err != nil {
		s.cfg.Report(fmt.Errorf("checkpoint: %w", err))
		return
	}
	if !w.stored {
		w.stored = true
		s.storeCheckpoint(s.cfg.Store(), w.checkpointRecord)
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
// in for a snapshot that failed or was given up. s.mu is held.
func (s *State) recordRoot(ctx context.Context, id, dir string, fallback bool) rootCheckpoint {
	rc := rootCheckpoint{Dir: dir}
	repo, why := s.rootRepo(ctx, dir)
	j := s.rootJournal(dir)
	if repo == nil {
		if j == nil {
			rc.note = why
		} else {
			rc.Journal, rc.note = true, journalNote
		}
		return rc
	}
	budget := checkpointBudget
	if ms := s.cfg.BudgetMs; ms > 0 {
		budget = time.Duration(ms) * time.Millisecond
	}
	sctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	commit, err := repo.Snapshot(sctx, s.snapshotRef(id, dir))
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
// directory's after its path. s.mu is held.
func (s *State) record(ctx context.Context, trigger api.CheckpointTrigger, label string, fallback bool) checkpointRecord {
	rec := newCheckpoint(newCheckpointID(), trigger, label)
	for i, dir := range s.checkpointRoots() {
		rc := s.recordRoot(ctx, rec.ID, dir, fallback)
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

// Prompt records the files before a prompt's run; the
// checkpoint is stored with the run's first user message. Where no files
// can be recorded (outside a git work tree, without a journal) a prompt
// records nothing.
func (s *State) Prompt(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.window = nil
	rec := s.record(ctx, api.TriggerPrompt, "", true)
	if repo, _ := s.checkpointRepo(ctx); repo == nil && !rec.recordedAny() {
		return // nothing can be recorded: no entry, no event
	}
	s.pending = &rec
}

// newCheckpoint is a checkpoint record made now.
func newCheckpoint(id string, trigger api.CheckpointTrigger, label string) checkpointRecord {
	return checkpointRecord{Checkpoint: api.Checkpoint{
		ID: id, CreatedAt: time.Now().UTC().Format(time.RFC3339Nano), Label: label, Trigger: trigger,
	}}
}

// DropPending forgets the prompt's checkpoint: its run did
// not start.
func (s *State) DropPending() {
	s.mu.Lock()
	s.pending = nil
	s.mu.Unlock()
}

// UserMessage stores the pending checkpoint, keyed to the user
// message entry it precedes, and tells the client.
func (s *State) UserMessage(store *session.Store, entryID string) {
	s.mu.Lock()
	rec := s.pending
	s.pending = nil
	s.mu.Unlock()
	if rec == nil {
		return
	}
	rec.EntryID = entryID
	if rec.journaled() {
		// A checkpoint the journal alone keeps is recorded when a file
		// is first kept; one a snapshot recorded, or whose snapshot
		// failed, now.
		stored := rec.fallback || rec.snapshotted()
		s.mu.Lock()
		s.window = &journalWindow{checkpointRecord: *rec, stored: stored}
		s.mu.Unlock()
		if !stored {
			return
		}
	}
	s.storeCheckpoint(store, *rec)
}

// journalWindow is a prompt's journal checkpoint and whether its entry
// is stored yet.
type journalWindow struct {
	checkpointRecord
	stored bool
}

// storeCheckpoint appends a checkpoint's entry and announces it.
func (s *State) storeCheckpoint(store *session.Store, rec checkpointRecord) {
	if _, err := store.AppendCustom(checkpointEntryType, rec); err != nil {
		_ = s.cfg.Saved(store, "a checkpoint", err)
		return
	}
	s.cfg.Emit(api.CheckpointCreated{Checkpoint: rec.Checkpoint})
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

// Dirs are the additional directories whose files the
// checkpoints of the session file at path recorded by a snapshot: their
// repositories hold the session's refs too. None when the file cannot be
// read.
func Dirs(path string) []string {
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
