package llm

import (
	"context"
	"iter"
)

// StreamRun owns the frame every provider's stream shares: the builder,
// the start event, the check of the model and request, the abort check
// once the reply is read, and the one final done or error event. A
// provider supplies only what its API does differently, as a [StreamCall];
// call [RunStream].
type StreamRun struct {
	b       *Builder
	yield   func(StreamEvent) bool
	stopped bool // the consumer stopped reading
}

// StreamCall is one provider call's own part of a stream.
//
// Read sends the request and passes the reply's events on through the
// run's [StreamRun.Emit]. It returns when the reply ends: nil when the
// stream ended cleanly, else the error the message fails with, already
// classified (see [HTTPFailure], [TransportFailure]).
//
// Finish is called after a clean end, when ctx is still live. It checks
// how the reply ended, closes the blocks still open, and returns the stop
// reason ("" keeps the one set on the builder) or the error the message
// fails with.
//
// Once Emit has reported that the consumer stopped, what Read and Finish
// return is dropped and nothing more is emitted.
type StreamCall interface {
	Read(ctx context.Context) error
	Finish() (StopReason, error)
}

// RunStream is the [Provider] contract around call: a start event, then
// what call emits, then exactly one [EventDone] or [EventError]. A call
// without a model or request fails with missing before newCall runs. A
// nil ctx means [context.Background].
func RunStream(ctx context.Context, model *Model, req *Request, missing error, newCall func(*StreamRun) StreamCall) iter.Seq[StreamEvent] {
	return func(yield func(StreamEvent) bool) {
		if ctx == nil {
			ctx = context.Background()
		}
		r := &StreamRun{b: NewBuilder(model), yield: yield}
		if !r.Emit(r.b.Start()) {
			return
		}
		if model == nil || req == nil {
			r.Emit(r.b.Fail(ctx, missing))
			return
		}
		if ev, ok := r.run(ctx, newCall(r)); ok {
			r.Emit(ev)
		}
	}
}

// run reads the reply and says how it ends; ok is false when the consumer
// stopped and nothing is left to say.
func (r *StreamRun) run(ctx context.Context, call StreamCall) (final StreamEvent, ok bool) {
	err := call.Read(ctx)
	switch {
	case r.stopped:
		return StreamEvent{}, false
	case err != nil:
		return r.b.Fail(ctx, err), true
	case ctx.Err() != nil:
		return r.b.Fail(ctx, ctx.Err()), true
	}
	reason, err := call.Finish()
	switch {
	case r.stopped:
		return StreamEvent{}, false
	case err != nil:
		return r.b.Fail(ctx, err), true
	}
	return r.b.Done(reason), true
}

// Builder is the message the run assembles.
func (r *StreamRun) Builder() *Builder { return r.b }

// Emit passes ev to the consumer; false means it stopped reading, and the
// provider should return.
func (r *StreamRun) Emit(ev StreamEvent) bool {
	if r.stopped {
		return false
	}
	if !r.yield(ev) {
		r.stopped = true
	}
	return !r.stopped
}

// EmitAll passes evs on in order; false means the consumer stopped.
func (r *StreamRun) EmitAll(evs []StreamEvent) bool {
	for _, ev := range evs {
		if !r.Emit(ev) {
			return false
		}
	}
	return true
}
