package llm

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeCall emits one text block and ends as told.
type fakeCall struct {
	run       *StreamRun
	readErr   error
	finishErr error
	reason    StopReason
	cancel    context.CancelFunc // called at the end of Read when set
	finished  bool
}

func (c *fakeCall) Read(ctx context.Context) error {
	b := c.run.Builder()
	i, ev := b.BeginText()
	if !c.run.EmitAll([]StreamEvent{ev, b.TextDelta(i, "hi"), b.End(i)}) {
		return errors.New("dropped: the consumer stopped")
	}
	if c.cancel != nil {
		c.cancel()
	}
	return c.readErr
}

func (c *fakeCall) Finish() (StopReason, error) {
	c.finished = true
	return c.reason, c.finishErr
}

func runFake(ctx context.Context, c *fakeCall, stopAfter int) []StreamEvent {
	var evs []StreamEvent
	seq := RunStream(ctx, &Model{ID: "m"}, &Request{}, errors.New("no model"), func(r *StreamRun) StreamCall {
		c.run = r
		return c
	})
	for ev := range seq {
		evs = append(evs, ev)
		if len(evs) == stopAfter {
			break
		}
	}
	return evs
}

func evTypes(evs []StreamEvent) []StreamEventType {
	var out []StreamEventType
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

func TestRunStreamEnds(t *testing.T) {
	body := []StreamEventType{EventStart, EventTextStart, EventTextDelta, EventTextEnd}

	evs := runFake(context.Background(), &fakeCall{reason: StopLength}, 0)
	assert.Equal(t, append(body, EventDone), evTypes(evs))
	assert.Equal(t, StopLength, evs[len(evs)-1].Reason)

	evs = runFake(context.Background(), &fakeCall{readErr: TransportFailure("cut", nil)}, 0)
	assert.Equal(t, append(body, EventError), evTypes(evs))
	assert.Equal(t, "cut", evs[len(evs)-1].Partial.ErrorMessage)
	assert.NotNil(t, evs[len(evs)-1].Partial.Failure)

	c := &fakeCall{finishErr: errors.New("refused")}
	evs = runFake(context.Background(), c, 0)
	assert.Equal(t, StopError, evs[len(evs)-1].Reason)
	assert.Equal(t, "refused", evs[len(evs)-1].Partial.ErrorMessage)

	// A context cancelled while reading aborts the message before Finish.
	ctx, cancel := context.WithCancel(context.Background())
	c = &fakeCall{cancel: cancel}
	evs = runFake(ctx, c, 0)
	assert.False(t, c.finished)
	assert.Equal(t, StopAborted, evs[len(evs)-1].Reason)
	assert.Equal(t, "Request was aborted", evs[len(evs)-1].Partial.ErrorMessage)
}

func TestRunStreamMissingAndStopped(t *testing.T) {
	var evs []StreamEvent
	//lint:ignore SA1012 a nil ctx is allowed and means Background
	for ev := range RunStream(nil, nil, nil, errors.New("no model"), nil) {
		evs = append(evs, ev)
	}
	require.Equal(t, []StreamEventType{EventStart, EventError}, evTypes(evs))
	assert.Equal(t, "no model", evs[1].Partial.ErrorMessage)

	// A consumer that stops gets nothing more, whatever the call returns,
	// and Finish is not asked.
	for n := 1; n <= 4; n++ {
		c := &fakeCall{}
		assert.Len(t, runFake(context.Background(), c, n), n)
		assert.False(t, c.finished, "stopped after %d", n)
	}
}

func TestBuilderEnd(t *testing.T) {
	b := NewBuilder(nil)
	ti, _ := b.BeginText()
	hi, _ := b.BeginThinking()
	ci, _ := b.BeginToolCall("c", "read")
	assert.Equal(t, EventTextEnd, b.End(ti).Type)
	assert.Equal(t, EventThinkingEnd, b.End(hi).Type)
	assert.Equal(t, EventToolCallEnd, b.End(ci).Type)
}
