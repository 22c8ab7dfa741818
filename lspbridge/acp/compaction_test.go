package acp

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/api"
)

// promptRuntime is a fakeRuntime that takes a prompt and starts a run
// once the prompt's response counts as written, as the host does; the
// test ends it with agent_settled.
type promptRuntime struct {
	fakeRuntime
	started chan struct{}
}

func (r *promptRuntime) Prompt(ctx context.Context, _ api.PromptParams) (api.DispositionResult, error) {
	api.AfterResponse(ctx, func() { close(r.started) })
	return api.DispositionResult{Disposition: api.DispositionStarted}, nil
}

func (r *promptRuntime) GetSessionStats(context.Context) (api.SessionStats, error) {
	return api.SessionStats{}, errors.New("no stats in the stand-in")
}

// A compaction during a prompt is told to a client that declared
// session.compaction: in progress, then completed with its summary;
// another client hears nothing of it.
func TestCompactionUpdates(t *testing.T) {
	schema := schemaFor(t, "SessionNotification")
	for _, declared := range []bool{true, false} {
		rt := &promptRuntime{started: make(chan struct{})}
		c := serveRuntime(t, rt)
		caps := map[string]any{}
		if declared {
			caps = map[string]any{"session": map[string]any{"compaction": map[string]any{}}}
		}
		c.open(caps)
		c.send(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": map[string]any{
			"sessionId": "s-1", "prompt": []any{map[string]any{"type": "text", "text": "go"}}}})
		<-rt.started
		rt.emit(api.CompactionStart{Reason: "threshold"})
		rt.emit(api.CompactionEnd{Reason: "threshold", Result: &api.CompactionResult{Summary: "What happened so far."}})
		rt.emit(api.AgentSettled{})
		var updates []map[string]any
		for m := c.next(); m["id"] == nil; m = c.next() {
			params := m["params"].(map[string]any)
			assert.True(t, schema.Validate(params).IsValid(), "%v", params)
			updates = append(updates, params["update"].(map[string]any))
		}
		if !declared {
			assert.Empty(t, updates)
		} else {
			require.Len(t, updates, 2)
			assert.Equal(t, map[string]any{"sessionUpdate": "compaction_update", "compactionId": "compaction-1", "status": "in_progress"}, updates[0])
			assert.Equal(t, "completed", updates[1]["status"])
			assert.Equal(t, "compaction-1", updates[1]["compactionId"])
			assert.Equal(t, []any{map[string]any{"type": "text", "text": "What happened so far."}}, updates[1]["summary"])
		}
		c.close()
	}
}
