package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gopi-dev/gopi/core/host"
	"github.com/gopi-dev/gopi/lspbridge/acp"
	"github.com/gopi-dev/gopi/rpc"
)

// runACP serves the Agent Client Protocol on stdin/stdout until stdin
// ends or a signal cancels ctx. Each session/new builds a host of its own
// for the session's cwd, from the same flags; acp.Serve closes them all
// (runs aborted, session files complete) before it returns.
func (ap *app) runACP(ctx context.Context, a *args, stdin io.Reader, stdout io.Writer) error {
	report := func(err error) { fmt.Fprintln(ap.stderr, "gopi:", err) }
	w := rpc.NewWriter(stdout, rpc.FramingNewline)
	stopBatching := w.Batch()
	defer stopBatching()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
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
	err := acp.Serve(ctx, rpc.NewLineReader(stdin, 0), w, acp.Options{
		NewRuntime: func(_ context.Context, cwd string) (acp.Runtime, error) {
			// A session/new is a new session: --continue and --session
			// name the one the process started with, not each of these.
			b := *a
			b.continue_, b.session, b.resume, b.fork = false, "", false, ""
			h, err := ap.buildHost(&b, cwd)
			if err != nil {
				return nil, err
			}
			return acpRuntime{h}, nil
		},
		Version: version,
		Report:  report,
	})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// acpRuntime is a session's host as the ACP dialect closes it: the
// session file is written out, and a write that keeps failing is the
// close's error.
type acpRuntime struct{ *host.Host }

func (r acpRuntime) Close(ctx context.Context) error {
	err := r.Host.Close(ctx)
	if serr := r.SaveSession(); serr != nil {
		return serr
	}
	return err
}
