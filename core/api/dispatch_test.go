package api

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// recorder is a Server that records the last call.
type recorder struct {
	last   string
	params any
}

func (r *recorder) rec(name string, p any) { r.last, r.params = name, p }

func (r *recorder) Prompt(_ context.Context, p PromptParams) (DispositionResult, error) {
	r.rec("prompt", p)
	return DispositionResult{Disposition: DispositionStarted}, nil
}
func (r *recorder) Steer(_ context.Context, p MessageParams) (DispositionResult, error) {
	r.rec("steer", p)
	return DispositionResult{Disposition: DispositionQueued}, nil
}
func (r *recorder) FollowUp(_ context.Context, p MessageParams) (DispositionResult, error) {
	r.rec("follow_up", p)
	return DispositionResult{Disposition: DispositionQueued}, nil
}
func (r *recorder) ClearQueue(context.Context) (QueueResult, error) {
	r.rec("clear_queue", nil)
	return QueueResult{Steering: []string{}, FollowUp: []string{}}, nil
}
func (r *recorder) GetAvailableThinkingLevels(context.Context) (LevelsResult, error) {
	return LevelsResult{Levels: []llm.ThinkingLevel{llm.ThinkingOff}}, nil
}
func (r *recorder) GetEntries(_ context.Context, p EntriesParams) (EntriesResult, error) {
	r.rec("get_entries", p)
	return EntriesResult{Entries: []json.RawMessage{}}, nil
}
func (r *recorder) GetTree(context.Context) (TreeResult, error) {
	return TreeResult{Tree: json.RawMessage("[]")}, nil
}
func (r *recorder) Abort(context.Context) error { r.rec("abort", nil); return nil }
func (r *recorder) NewSession(_ context.Context, p NewSessionParams) (CancelledResult, error) {
	r.rec("new_session", p)
	return CancelledResult{}, nil
}
func (r *recorder) GetState(context.Context) (State, error) { return State{SessionID: "s"}, nil }
func (r *recorder) GetMessages(context.Context) (MessagesResult, error) {
	return MessagesResult{}, nil
}
func (r *recorder) SetModel(_ context.Context, p SetModelParams) (*llm.Model, error) {
	r.rec("set_model", p)
	return nil, errors.New("Model not found: " + p.Provider + "/" + p.ModelID)
}
func (r *recorder) CycleModel(context.Context) (*CycleModelResult, error) { return nil, nil }
func (r *recorder) GetAvailableModels(context.Context) (ModelsResult, error) {
	return ModelsResult{}, nil
}
func (r *recorder) SetThinkingLevel(_ context.Context, p ThinkingParams) error {
	r.rec("set_thinking_level", p)
	return nil
}
func (r *recorder) CycleThinkingLevel(context.Context) (*LevelResult, error) { return nil, nil }
func (r *recorder) SetSteeringMode(_ context.Context, p ModeParams) error {
	r.rec("ssm", p)
	return nil
}
func (r *recorder) SetFollowUpMode(_ context.Context, p ModeParams) error {
	r.rec("sfm", p)
	return nil
}
func (r *recorder) Compact(context.Context, CompactParams) (CompactionResult, error) {
	return CompactionResult{}, nil
}
func (r *recorder) SetAutoCompaction(_ context.Context, p EnabledParams) error {
	r.rec("sac", p)
	return nil
}
func (r *recorder) SetAutoRetry(_ context.Context, p EnabledParams) error {
	r.rec("sar", p)
	return nil
}
func (r *recorder) AbortRetry(context.Context) error { return nil }
func (r *recorder) Bash(_ context.Context, p BashParams) (BashResult, error) {
	panic("boom")
}
func (r *recorder) AbortBash(context.Context) error { return nil }
func (r *recorder) GetSessionStats(context.Context) (SessionStats, error) {
	return SessionStats{}, nil
}
func (r *recorder) ExportHTML(context.Context, ExportParams) (PathResult, error) {
	return PathResult{}, nil
}
func (r *recorder) SwitchSession(context.Context, SwitchSessionParams) (CancelledResult, error) {
	return CancelledResult{}, nil
}
func (r *recorder) Fork(context.Context, ForkParams) (ForkResult, error) { return ForkResult{}, nil }
func (r *recorder) Clone(context.Context) (CancelledResult, error)       { return CancelledResult{}, nil }
func (r *recorder) GetForkMessages(context.Context) (ForkMessagesResult, error) {
	return ForkMessagesResult{}, nil
}
func (r *recorder) GetLastAssistantText(context.Context) (TextResult, error) {
	return TextResult{}, nil
}
func (r *recorder) SetSessionName(_ context.Context, p NameParams) error { r.rec("ssn", p); return nil }
func (r *recorder) GetCommands(context.Context) (CommandsResult, error) {
	return CommandsResult{}, nil
}
func (r *recorder) ListSessions(context.Context, ListSessionsParams) (SessionsResult, error) {
	return SessionsResult{}, nil
}
func (r *recorder) GetMCPServers(context.Context) (MCPServersResult, error) {
	return MCPServersResult{}, nil
}

func (r *recorder) CreateCheckpoint(_ context.Context, p CreateCheckpointParams) (CheckpointResult, error) {
	r.rec("cc", p)
	return CheckpointResult{}, nil
}
func (r *recorder) ListCheckpoints(context.Context) (CheckpointsResult, error) {
	return CheckpointsResult{}, nil
}
func (r *recorder) DiffCheckpoint(_ context.Context, p CheckpointParams) (FileChangesResult, error) {
	r.rec("dc", p)
	return FileChangesResult{}, nil
}
func (r *recorder) RestoreCheckpoint(_ context.Context, p RestoreCheckpointParams) (RestoreCheckpointResult, error) {
	r.rec("rc", p)
	return RestoreCheckpointResult{}, nil
}

var _ Server = (*recorder)(nil)

func TestCommandsDecodeParams(t *testing.T) {
	r := &recorder{}
	res, err := schedule(r, "prompt", json.RawMessage(`{"type":"prompt","id":"1","message":"hi","images":[{"type":"image","data":"AAAA","mimeType":"image/png"}],"streamingBehavior":"steer"}`))
	require.NoError(t, err)
	assert.Equal(t, DispositionResult{Disposition: DispositionStarted}, res, "pi 1.5: data.disposition")
	p := r.params.(PromptParams)
	assert.Equal(t, "hi", p.Message)
	assert.Equal(t, BehaviorSteer, p.StreamingBehavior)
	require.Len(t, p.Images, 1)
	assert.Equal(t, "image/png", p.Images[0].MimeType)
}

func TestCommandErrors(t *testing.T) {
	r := &recorder{}

	_, err := schedule(r, "frobnicate", nil)
	assert.ErrorIs(t, err, ErrUnknownCommand)
	assert.Equal(t, "Unknown command: frobnicate", err.Error())

	_, err = schedule(r, "prompt", json.RawMessage(`{"message":42}`))
	var pe *ParamError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "message", pe.Field)
	assert.Contains(t, err.Error(), `field "message" must be a string`)

	_, err = schedule(r, "set_auto_retry", json.RawMessage(`{}`))
	assert.ErrorIs(t, err, ErrInvalidParams)
	assert.Contains(t, err.Error(), "enabled")

	_, err = schedule(r, "set_auto_retry", json.RawMessage(`{"enabled":"yes"}`))
	assert.ErrorIs(t, err, ErrInvalidParams)

	_, err = schedule(r, "set_thinking_level", json.RawMessage(`{"level":"extreme"}`))
	assert.ErrorIs(t, err, ErrInvalidParams)
	assert.Contains(t, err.Error(), "level")

	_, err = schedule(r, "set_steering_mode", json.RawMessage(`{"mode":"some"}`))
	assert.ErrorIs(t, err, ErrInvalidParams)

	_, err = schedule(r, "set_model", json.RawMessage(`{"provider":"x","modelId":"y"}`))
	assert.EqualError(t, err, "Model not found: x/y")

	_, err = schedule(r, "prompt", json.RawMessage(`[1]`))
	assert.ErrorIs(t, err, ErrInvalidParams)

	// A panicking handler becomes an error, not a crash.
	_, err = schedule(r, "bash", json.RawMessage(`{"command":"ls"}`))
	assert.ErrorContains(t, err, "internal error in bash: boom")

	assert.Equal(t, kindLong, kindOf("bash"))
	assert.Equal(t, kindState, kindOf("get_state"))
	assert.Contains(t, Commands(), "get_fork_messages")
}

func TestCommandNullData(t *testing.T) {
	res, err := schedule(&recorder{}, "cycle_model", nil)
	require.NoError(t, err)
	b, _ := json.Marshal(res)
	assert.Equal(t, "null", string(b))
}

func TestEventJSON(t *testing.T) {
	b, _ := json.Marshal(AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "529"})
	assert.JSONEq(t, `{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529"}`, string(b))
	b, _ = json.Marshal(AutoCompactionEnd{Aborted: true})
	assert.JSONEq(t, `{"type":"auto_compaction_end","result":null,"aborted":true,"willRetry":false}`, string(b))
	b, _ = json.Marshal(UIRequest{ID: "u1", Method: UISelect, Title: "Allow?", Options: []string{"Allow", "Deny"}, Timeout: 100})
	assert.JSONEq(t, `{"type":"extension_ui_request","id":"u1","method":"select","title":"Allow?","options":["Allow","Deny"],"timeout":100}`, string(b))
}

func TestUIBroker(t *testing.T) {
	sent := make(chan UIRequest, 4)
	b := NewUIBroker(func(r UIRequest) error { sent <- r; return nil })

	done := make(chan UIResponse)
	go func() {
		done <- b.Ask(context.Background(), UIRequest{Method: UISelect, Title: "t", Options: []string{"a"}})
	}()
	req := <-sent
	v := "a"
	assert.False(t, b.Resolve(UIResponse{ID: "nope", Value: &v}))
	assert.True(t, b.Resolve(UIResponse{ID: req.ID, Value: &v}))
	got := <-done
	require.NotNil(t, got.Value)
	assert.Equal(t, "a", *got.Value)

	// Timeout resolves as cancelled.
	start := time.Now()
	r := b.Ask(context.Background(), UIRequest{Method: UIConfirm, Timeout: 20})
	assert.True(t, r.Cancelled)
	assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
	<-sent

	// Context end resolves as cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-sent; cancel() }()
	assert.True(t, b.Ask(ctx, UIRequest{Method: UIInput}).Cancelled)
}
