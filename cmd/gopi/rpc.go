package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"

	"github.com/gopi-dev/gopi/lspbridge"
	"github.com/gopi-dev/gopi/rpc"
)

// runRPC serves stdin/stdout in the dialect the client speaks (pi's
// native JSONL, JSON-RPC 2.0 or ACP, see rpc.Detect; --mode jsonrpc forces
// JSON-RPC) until stdin ends, a signal cancels ctx, or a JSON-RPC client
// sends exit. The caller then closes the host, which aborts any run and
// leaves the session file complete.
func (ap *app) runRPC(ctx context.Context, a *args, stdin io.Reader, stdout io.Writer) error {
	type detected struct {
		d   rpc.Detection
		err error
	}
	// Detection blocks until the client writes; a signal must still end
	// gopi before that.
	ch := make(chan detected, 1)
	go func() {
		d, err := rpc.Detect(stdin)
		ch <- detected{d, err}
	}()
	var det rpc.Detection
	select {
	case <-ctx.Done():
		return nil
	case r := <-ch:
		if errors.Is(r.err, io.EOF) {
			return nil // the client left without a word
		}
		if r.err != nil {
			return fmt.Errorf("reading stdin: %w", r.err)
		}
		det = r.d
	}
	if det.Dialect == rpc.DialectACP && a.mode != "jsonrpc" {
		// An editor speaking ACP: served as --mode acp serves it, from
		// its initialize on.
		return ap.runACP(ctx, a, det.Reader, stdout)
	}
	report := func(err error) { fmt.Fprintln(ap.stderr, "gopi:", err) }
	framing := det.Framing
	if det.Dialect != rpc.DialectJSONRPC && a.mode != "jsonrpc" {
		framing = rpc.FramingNewline
	}
	w := rpc.NewWriter(stdout, framing)
	// Events are written a burst at a time; stop (deferred first, so it
	// runs last) writes what is still queued before gopi exits.
	stopBatching := w.Batch()
	defer stopBatching()
	ctx, cancel := ap.untilClientGone(ctx, w, report)
	defer cancel()
	if a.mode == "jsonrpc" || det.Dialect == rpc.DialectJSONRPC {
		return ap.runJSONRPC(ctx, a, det, w, report)
	}
	conn := rpc.NewConn(w, report)
	drain := conn.Drain
	ap.drain.Store(&drain)
	ap.host.Bind(conn)
	defer ap.host.Bind(nil)
	var emit func(api.Event)
	var server api.Server = ap.host
	if a.fullUpdates {
		server = olderServer{ap.host}
		var full agent.FullUpdates
		emit = func(ev api.Event) {
			ev, ok := olderEvent(ev)
			if !ok {
				return
			}
			if e, isAgent := ev.(agent.Event); isAgent {
				ev = full.Wrap(e)
			}
			conn.Emit(ev)
		}
	} else {
		// pi 1.5's wire: message_update carries the delta and the usage so
		// far, not the whole message twice (--full-updates keeps the older
		// document's events for its clients).
		emit = func(ev api.Event) {
			if e, ok := ev.(agent.Event); ok {
				ev = e.Lean()
			}
			conn.Emit(ev)
		}
	}
	unsubscribe := ap.host.Subscribe(emit)
	defer unsubscribe()
	err := conn.Serve(ctx, rpc.NewLineReader(det.Reader, 0), server)
	// Abort what still runs while the client can still hear about it.
	ap.close()
	return err
}

// runJSONRPC serves the JSON-RPC 2.0 dialect in the framing the client
// used. Its exit code follows LSP: 1 when exit came without shutdown.
func (ap *app) runJSONRPC(ctx context.Context, a *args, det rpc.Detection, w *rpc.Writer, report func(error)) error {
	var in rpc.RecordReader
	if det.Framing == rpc.FramingHeader {
		in = rpc.NewHeaderReader(det.Reader, 0)
	} else {
		in = rpc.NewLineReader(det.Reader, 0)
	}
	b := lspbridge.New(lspbridge.Options{
		Runtime:     ap.host,
		Reconfigure: ap.reconfigure(a),
		Version:     version,
		Report:      report,
	})
	drain := b.Drain
	ap.drain.Store(&drain)
	ap.exitCode = b.Serve(ctx, in, w)
	ap.close()
	return nil
}

// reconfigure rebuilds the host for what a JSON-RPC client's initialize
// asked: another workspace folder, model or session. The options take the
// place of the matching flags.
func (ap *app) reconfigure(a *args) lspbridge.Reconfigure {
	return func(ctx context.Context, cwd string, o lspbridge.InitOptions) (lspbridge.Runtime, error) {
		b := *a
		if o.Provider != "" || o.Model != "" {
			b.provider, b.model = o.Provider, o.Model
		}
		if o.ThinkingLevel != "" {
			b.thinking = o.ThinkingLevel
		}
		if cwd == "" {
			cwd = ap.cwd
		}
		if o.SessionFile != "" {
			b.session, b.continue_, b.noSession = o.SessionFile, false, false
			if !filepath.IsAbs(b.session) {
				b.session = filepath.Join(cwd, b.session)
			}
		}
		if o.Continue {
			b.continue_ = true
		}
		if o.NoSession {
			b.noSession = true
		}
		h, err := ap.buildHost(&b, cwd)
		if err != nil {
			return nil, err
		}
		ap.close()
		ap.host, ap.cwd = h, cwd
		return h, nil
	}
}

// untilClientGone is ctx, cancelled too when the client stops reading
// (its end of stdout closed: it is gone just as one whose stdin ended, so
// gopi stops serving and shuts down cleanly) or an extension asks gopi
// to exit. Its goroutine ends with the returned context.
func (ap *app) untilClientGone(ctx context.Context, w *rpc.Writer, report func(error)) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-w.Gone():
			report(fmt.Errorf("%w (%v)", errClientGone, w.Err()))
			cancel()
		case <-ap.shutdown:
			report(errExtensionExit)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
