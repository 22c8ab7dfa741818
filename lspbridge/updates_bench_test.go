package lspbridge

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/internal/rpccodec"
	"github.com/gopi-dev/gopi/rpc"
)

// countingWriter counts what reaches the client.
type countingWriter struct{ n atomic.Int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return len(p), nil
}

// blockedReader is an input that never yields, like a quiet stdin.
type blockedReader struct{ done chan struct{} }

func (r blockedReader) Next() ([]byte, error) {
	<-r.done
	return nil, io.EOF
}

// BenchmarkMessageUpdates streams one assistant reply of n text deltas
// through Emit, lean (the default) and with fullUpdates, and reports the
// bytes written per reply: lean grows with the reply, full with its
// square, since every update repeats the message so far.
func BenchmarkMessageUpdates(b *testing.B) {
	for _, n := range []int{500, 2000, 10000} {
		for _, full := range []bool{false, true} {
			if full && n > 2000 {
				continue // quadratic: 10,000 full updates are half a gigabyte
			}
			name := fmt.Sprintf("deltas=%d/lean", n)
			if full {
				name = fmt.Sprintf("deltas=%d/full", n)
			}
			b.Run(name, func(b *testing.B) {
				events := reply(n)
				out := &countingWriter{}
				br, stop := emitter(out, full)
				defer stop()
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					for _, ev := range events {
						br.Emit(ev)
					}
				}
				b.ReportMetric(float64(out.n.Load())/float64(b.N), "wire-bytes/op")
			})
		}
	}
}

// reply is the message_update events of a reply of n deltas of "word ".
func reply(n int) []agent.Event {
	model := &llm.Model{ID: "m", Provider: "p", API: "anthropic-messages"}
	bld := llm.NewBuilder(model)
	var evs []agent.Event
	add := func(se llm.StreamEvent) {
		se2 := se
		evs = append(evs, agent.Event{Type: agent.EventMessageUpdate, Message: se.Partial, AssistantEvent: &se2})
	}
	add(bld.Start())
	i, ev := bld.BeginText()
	add(ev)
	for range n {
		add(bld.TextDelta(i, "word "))
	}
	add(bld.EndText(i))
	return evs
}

// emitter is a bridge wired to out with no client reading: Emit only
// writes notifications, so no read loop is needed.
func emitter(out io.Writer, full bool) (*Bridge, func()) {
	br := New(Options{})
	quit := make(chan struct{})
	s := newStream(blockedReader{quit}, rpc.NewWriter(out, rpc.FramingHeader), func(error) {}, br.wrote)
	br.ctx, br.cancel = context.WithCancelCause(context.Background())
	br.jc = jsonrpc2.NewConn(s, jsonrpc2.WithCodec(rpccodec.Std{}))
	br.prog = newProgress(br)
	br.fullUpdates = full
	return br, func() {
		br.prog.stop()
		br.cancel(nil)
		close(quit)
		_ = s.Close()
	}
}
