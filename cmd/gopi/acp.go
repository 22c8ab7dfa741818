package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gopi-dev/gopi/core/host"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
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
	opts := acp.Options{
		NewRuntime: func(_ context.Context, cwd string) (acp.Runtime, error) {
			return ap.acpHost(a, cwd, "")
		},
		Version: version,
		Report:  report,
	}
	if !a.noSession {
		opts.Sessions = acpSessions{ap: ap, a: a}
	}
	err := acp.Serve(ctx, rpc.NewLineReader(stdin, 0), w, opts)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// acpHost builds the host of one ACP session in cwd: a new session, or
// the stored session openID. --continue, --session and their kin name the
// session the process started with, not each of these.
func (ap *app) acpHost(a *args, cwd, openID string) (acp.Runtime, error) {
	b := *a
	b.continue_, b.session, b.resume, b.fork = false, "", false, ""
	b.openID = openID
	if openID != "" {
		// A stored session keeps its id and its name.
		b.sessionIDSet, b.nameSet = false, false
	}
	h, err := ap.buildHost(&b, cwd)
	if err != nil {
		return nil, err
	}
	return acpRuntime{h}, nil
}

// acpSessions are the pi session files ACP's session methods reach, found
// as --session finds them.
type acpSessions struct {
	ap *app
	a  *args
}

func (s acpSessions) Open(_ context.Context, id, cwd string) (acp.Runtime, error) {
	rt, err := s.ap.acpHost(s.a, cwd, id)
	var elsewhere *elsewhereError
	switch {
	case errors.Is(err, errNoSessionMatch):
		return nil, fmt.Errorf("%w: %w", acp.ErrUnknownSession, err)
	case errors.As(err, &elsewhere):
		return nil, fmt.Errorf("%w: session %s works in %s, not in %s", acp.ErrOtherCwd, id, elsewhere.cwd, cwd)
	}
	return rt, err
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

// History is the session's visible branch, root to leaf: every message
// of it, those a compaction summarised included.
func (r acpRuntime) History() []llm.Message {
	var out []llm.Message
	for _, e := range r.Store().Path() {
		if m, ok := e.(*session.MessageEntry); ok {
			out = append(out, m.Message())
		}
	}
	return out
}
