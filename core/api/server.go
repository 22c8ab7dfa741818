package api

import (
	"context"

	"github.com/gopi-dev/gopi/core/llm"
)

// Server is the session runtime as the wire dialects see it: one method
// per command. Methods that only change or read state return promptly;
// Prompt returns once the prompt is accepted (validated, expanded, queued
// or started) while the run streams on as events; Bash, Compact and
// ExportHTML return when their work is done.
//
// A returned error becomes the command's failure response; its text is
// what the client reads.
type Server interface {
	Prompt(ctx context.Context, p PromptParams) (DispositionResult, error)
	Steer(ctx context.Context, p MessageParams) (DispositionResult, error)
	FollowUp(ctx context.Context, p MessageParams) (DispositionResult, error)
	ClearQueue(ctx context.Context) (QueueResult, error)
	Abort(ctx context.Context) error
	NewSession(ctx context.Context, p NewSessionParams) (CancelledResult, error)

	GetState(ctx context.Context) (State, error)
	GetMessages(ctx context.Context) (MessagesResult, error)

	SetModel(ctx context.Context, p SetModelParams) (*llm.Model, error)
	CycleModel(ctx context.Context) (*CycleModelResult, error)
	GetAvailableModels(ctx context.Context) (ModelsResult, error)

	SetThinkingLevel(ctx context.Context, p ThinkingParams) error
	CycleThinkingLevel(ctx context.Context) (*LevelResult, error)
	GetAvailableThinkingLevels(ctx context.Context) (LevelsResult, error)

	SetSteeringMode(ctx context.Context, p ModeParams) error
	SetFollowUpMode(ctx context.Context, p ModeParams) error

	Compact(ctx context.Context, p CompactParams) (CompactionResult, error)
	SetAutoCompaction(ctx context.Context, p EnabledParams) error

	SetAutoRetry(ctx context.Context, p EnabledParams) error
	AbortRetry(ctx context.Context) error

	Bash(ctx context.Context, p BashParams) (BashResult, error)
	AbortBash(ctx context.Context) error

	GetSessionStats(ctx context.Context) (SessionStats, error)
	ExportHTML(ctx context.Context, p ExportParams) (PathResult, error)
	SwitchSession(ctx context.Context, p SwitchSessionParams) (CancelledResult, error)
	Fork(ctx context.Context, p ForkParams) (ForkResult, error)
	Clone(ctx context.Context) (CancelledResult, error)
	GetForkMessages(ctx context.Context) (ForkMessagesResult, error)
	GetLastAssistantText(ctx context.Context) (TextResult, error)
	SetSessionName(ctx context.Context, p NameParams) error
	GetCommands(ctx context.Context) (CommandsResult, error)
	GetEntries(ctx context.Context, p EntriesParams) (EntriesResult, error)
	GetTree(ctx context.Context) (TreeResult, error)
	ListSessions(ctx context.Context, p ListSessionsParams) (SessionsResult, error)
	GetMCPServers(ctx context.Context) (MCPServersResult, error)

	CreateCheckpoint(ctx context.Context, p CreateCheckpointParams) (CheckpointResult, error)
	ListCheckpoints(ctx context.Context) (CheckpointsResult, error)
	DiffCheckpoint(ctx context.Context, p CheckpointParams) (FileChangesResult, error)
	RestoreCheckpoint(ctx context.Context, p RestoreCheckpointParams) (RestoreCheckpointResult, error)
}

// Client is the connection as the runtime sees it: where events and UI
// requests go. Both dialects implement it.
type Client interface {
	// Emit sends one event. Events are sent in the order Emit is called;
	// Emit encodes ev before returning, so ev may be reused.
	Emit(ev Event)
	// Ask sends a dialog request (select, confirm, input, editor) and waits
	// for the answer, ctx's end, or the request's timeout. On timeout or
	// cancellation it returns a response with Cancelled set.
	Ask(ctx context.Context, req UIRequest) UIResponse
	// Notify sends a fire-and-forget UI request (notify, setStatus, ...).
	Notify(req UIRequest)
}
