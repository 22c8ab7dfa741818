package host

import (
	"context"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/host/checkpoints"
)

// The checkpoints of the project's files are a room of their own
// (core/host/checkpoints); the host gives it the session and answers the
// clients' checkpoint commands through it.

// checkpointState is the checkpoints room, given what it uses of the
// host.
func (h *Host) checkpointState() *checkpoints.State {
	return checkpoints.New(checkpoints.Config{
		Cwd:      h.opts.Cwd,
		AgentDir: h.opts.AgentDir,
		BudgetMs: h.opts.Settings.CheckpointBudgetMs,
		Roots:    h.roots.get,
		Store:    h.Store,
		Busy:     h.busy,
		Navigate: func(ctx context.Context, entryID string) (*string, error) {
			res, err := h.NavigateTree(ctx, entryID, NavigateOptions{})
			return res.EditorText, err
		},
		Emit:   h.emit,
		Saved:  h.log.saved,
		Report: h.opts.Report,
	})
}

// CheckpointDirs are the additional directories whose files the
// checkpoints of the session file at path recorded by a snapshot.
func CheckpointDirs(path string) []string { return checkpoints.Dirs(path) }

// CreateCheckpoint records the files now, by hand.
func (h *Host) CreateCheckpoint(ctx context.Context, p api.CreateCheckpointParams) (api.CheckpointResult, error) {
	return h.cp.Create(ctx, p)
}

// ListCheckpoints lists the session's checkpoints, oldest first.
func (h *Host) ListCheckpoints(ctx context.Context) (api.CheckpointsResult, error) {
	return h.cp.List(ctx)
}

// DiffCheckpoint says how the files differ from a checkpoint.
func (h *Host) DiffCheckpoint(ctx context.Context, p api.CheckpointParams) (api.FileChangesResult, error) {
	return h.cp.Diff(ctx, p)
}

// RestoreCheckpoint puts back a checkpoint's files, its conversation, or
// both.
func (h *Host) RestoreCheckpoint(ctx context.Context, p api.RestoreCheckpointParams) (api.RestoreCheckpointResult, error) {
	return h.cp.Restore(ctx, p)
}
