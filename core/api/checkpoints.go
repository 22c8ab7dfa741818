package api

// gopi's checkpoint commands (pi has none): every prompt records the
// project's files before its run changes them; a checkpoint can be
// compared with the files now and restored, code, conversation or both.
const (
	CmdCreateCheckpoint  = "create_checkpoint"
	CmdListCheckpoints   = "list_checkpoints"
	CmdDiffCheckpoint    = "diff_checkpoint"
	CmdRestoreCheckpoint = "restore_checkpoint"
)

// CheckpointTrigger is what recorded a checkpoint.
type CheckpointTrigger string

const (
	TriggerPrompt  CheckpointTrigger = "prompt"  // before a prompt's run
	TriggerManual  CheckpointTrigger = "manual"  // create_checkpoint
	TriggerRestore CheckpointTrigger = "restore" // just before a code restore, to undo it
)

// Checkpoint is one recorded state of the project's files.
type Checkpoint struct {
	ID string `json:"id"`
	// EntryID is the session entry the checkpoint precedes: the user
	// message of its prompt, or the leaf when it was recorded by hand.
	EntryID   string            `json:"entryId"`
	CreatedAt string            `json:"createdAt"` // RFC 3339
	Label     string            `json:"label,omitempty"`
	Trigger   CheckpointTrigger `json:"trigger"`
	// Note says why the checkpoint is partial or empty (a project that
	// is not a git work tree, a snapshot over its time budget).
	Note string `json:"note,omitempty"`
}

// CreateCheckpointParams are "create_checkpoint"'s.
type CreateCheckpointParams struct {
	Label string `json:"label,omitempty"`
}

// CheckpointResult answers "create_checkpoint".
type CheckpointResult struct {
	Checkpoint Checkpoint `json:"checkpoint"`
}

// CheckpointsResult answers "list_checkpoints": the session's checkpoints,
// oldest first.
type CheckpointsResult struct {
	Checkpoints []Checkpoint `json:"checkpoints"`
}

// CheckpointParams name a checkpoint.
type CheckpointParams struct {
	CheckpointID string `json:"checkpointId"`
}

// FileChange is a file that differs from a checkpoint: what restoring it
// undoes.
type FileChange struct {
	// Path is relative to the session's directory.
	Path string `json:"path"`
	// Status is "added" (since the checkpoint: a restore deletes it),
	// "modified" or "deleted" (a restore brings it back). A rename is a
	// deleted and an added file.
	Status string `json:"status"`
	Binary bool   `json:"binary,omitempty"`
	// Diff is a unified diff from the checkpoint's version to the
	// current one, for text files.
	Diff string `json:"diff,omitempty"`
}

// FileChangesResult answers "diff_checkpoint".
type FileChangesResult struct {
	Files []FileChange `json:"files"`
}

// RestoreWhat is what "restore_checkpoint" puts back.
type RestoreWhat string

const (
	RestoreCode         RestoreWhat = "code"
	RestoreConversation RestoreWhat = "conversation"
	RestoreBoth         RestoreWhat = "both"
)

// RestoreCheckpointParams are "restore_checkpoint"'s.
type RestoreCheckpointParams struct {
	CheckpointID string `json:"checkpointId"`
	// Restore defaults to both.
	Restore RestoreWhat `json:"restore,omitempty"`
	// DryRun says what the restore would do and changes nothing.
	DryRun bool `json:"dryRun,omitempty"`
}

// RestoreCheckpointResult answers "restore_checkpoint".
type RestoreCheckpointResult struct {
	// Files are the files the restore changed (or would change).
	Files []FileChange `json:"files"`
	// UndoCheckpointID is the checkpoint recorded just before a code
	// restore: restoring it undoes the restore.
	UndoCheckpointID string `json:"undoCheckpointId,omitempty"`
	// Text is the user message's text when the conversation was
	// restored, for the client to put back in its input.
	Text *string `json:"text,omitempty"`
}

// Checkpoint events (gopi's own).
const (
	EventCheckpointCreated  = "checkpoint_created"
	EventCheckpointRestored = "checkpoint_restored"
)

// CheckpointCreated: a checkpoint was recorded.
type CheckpointCreated struct {
	Checkpoint Checkpoint `json:"checkpoint"`
}

// CheckpointRestored: a checkpoint was restored.
type CheckpointRestored struct {
	CheckpointID string       `json:"checkpointId"`
	Restore      RestoreWhat  `json:"restore"`
	Files        []FileChange `json:"files"`
}

func (CheckpointCreated) EventType() string  { return EventCheckpointCreated }
func (CheckpointRestored) EventType() string { return EventCheckpointRestored }

func (e CheckpointCreated) MarshalJSON() ([]byte, error) {
	type alias CheckpointCreated
	return typed(e.EventType(), alias(e))
}

func (e CheckpointRestored) MarshalJSON() ([]byte, error) {
	type alias CheckpointRestored
	return typed(e.EventType(), alias(e))
}
