package mcp

// This file owns a server's connection: one attempt at a time, the
// initialize handshake and its retries, watching for the connection's end,
// and dropping it after a call found it closed or signed out.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// session returns the connected session, connecting first when there is
// none: at start, and on the first call after the connection dropped. The
// attempt runs in a goroutine of the manager, so a caller that gives up
// (an abort) returns at once and the attempt still ends cleanly.
func (s *server) session(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("mcp server %q: closed", s.name)
	}
	if s.sess != nil {
		sess := s.sess
		s.mu.Unlock()
		return sess, nil
	}
	wait := s.connecting
	again := false // a new attempt after a drop or a failure: announced
	if wait == nil {
		done := make(chan struct{})
		again = s.state != StateConnecting
		s.connecting, s.state, wait = done, StateConnecting, done
		if again {
			s.gen++
		}
		s.m.wg.Go(func() {
			// connect announces a success; a failure is announced here,
			// before the callers waiting for the attempt hear of it.
			_, err := s.connect()
			snapshot := ""
			if errors.Is(err, ErrSignInRequired) {
				snapshot = s.m.opts.Auth.tokensSnapshot(s.name, s.cfg.URL)
			}
			s.mu.Lock()
			s.connecting = nil
			if err != nil {
				s.state, s.err = StateFailed, err
				if errors.Is(err, ErrSignInRequired) {
					s.state, s.signedOut = StateNeedsAuth, snapshot
				}
				s.gen++
			}
			s.mu.Unlock()
			if err != nil {
				s.announce()
			}
			close(done)
		})
	}
	s.mu.Unlock()
	if again {
		s.announce()
	}
	select {
	case <-wait:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.sess != nil {
			return s.sess, nil
		}
		if s.err == nil {
			return nil, fmt.Errorf("mcp server %q: the connection ended", s.name)
		}
		return nil, s.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// connect starts the server (or reaches it), initializes the session and
// lists its tools; a goroutine then watches for the connection's end. An
// HTTP server that fails for a transient reason is tried twice more
// after connectRetryDelays, as pi does.
func (s *server) connect() (*sdk.ClientSession, error) {
	for attempt := 0; ; attempt++ {
		var outcome *httpOutcome
		if !s.cfg.isStdio() {
			outcome = &httpOutcome{}
		}
		sess, err := s.connectOnce(outcome)
		if err == nil || attempt >= len(connectRetryDelays) || !outcome.transient() {
			return sess, err
		}
		select {
		case <-time.After(connectRetryDelays[attempt]):
		case <-s.m.ctx.Done():
			return nil, err
		}
	}
}

// connectOnce is one attempt of connect; outcome, for an HTTP server,
// records its exchanges.
func (s *server) connectOnce(outcome *httpOutcome) (*sdk.ClientSession, error) {
	ctx, cancel := context.WithTimeout(s.m.ctx, s.timeout())
	defer cancel()
	t, stderr, oauth, err := s.transport(ctx, outcome)
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: %w", s.name, err)
	}
	var sess *sdk.ClientSession
	client := sdk.NewClient(&sdk.Implementation{Name: "gopi", Version: s.m.opts.Version}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			// Not on the session's goroutine: listing is a request, and
			// its answer is read there.
			s.m.wg.Go(func() { s.refresh(sess) })
		},
		// Logging is deprecated from protocol 2026-07-28 on, but servers
		// of the earlier versions still log, and pi keeps mcp.log.
		//lint:ignore SA1019 servers of protocols before 2026-07-28 log this way
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			if req.Params != nil {
				s.m.opts.Log.Write(s.name, string(req.Params.Level), req.Params.Logger, req.Params.Data)
			}
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			if req.Params != nil {
				s.m.progress.progressed(req.Params.ProgressToken)
			}
		},
	})
	sess, err = client.Connect(ctx, t, nil)
	if err != nil {
		if signIn := oauth.signInNeededOrNil(); signIn != nil && s.m.ctx.Err() == nil {
			return nil, fmt.Errorf("mcp server %q: %w", s.name, signIn)
		}
		return nil, s.failure("connecting", s.timedOut(ctx, err), stderr)
	}
	// A server without the tools capability (resources or prompts only)
	// is not asked for tools: it need not answer tools/list.
	var tools []*Tool
	var caps *sdk.ServerCapabilities
	var instructions string
	if init := sess.InitializeResult(); init != nil {
		caps, instructions = init.Capabilities, init.Instructions
	}
	if caps == nil || caps.Tools != nil {
		if tools, err = s.listTools(ctx, sess); err != nil {
			_ = sess.Close()
			if signIn := oauth.signInNeededOrNil(); signIn != nil && s.m.ctx.Err() == nil {
				return nil, fmt.Errorf("mcp server %q: %w", s.name, signIn)
			}
			return nil, s.failure("listing tools", s.timedOut(ctx, err), stderr)
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = sess.Close()
		return nil, fmt.Errorf("mcp server %q: closed", s.name)
	}
	s.sess, s.tools, s.state, s.err, s.stderr, s.auth = sess, tools, StateConnected, nil, stderr, oauth
	s.resources = caps != nil && caps.Resources != nil
	s.instructions = instructions
	s.gen++
	s.mu.Unlock()
	s.m.toolsGen.Add(1)
	s.announce()
	s.m.wg.Go(func() { s.watch(sess) })
	return sess, nil
}

// timedOut says that the server did not answer in time when ctx, a
// connection's, ended at the server's timeout.
func (s *server) timedOut(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && s.m.ctx.Err() == nil {
		return fmt.Errorf("no answer within %v (the server's timeout): %w", s.timeout(), err)
	}
	return err
}

// failure words a failed start, with the end of the server's stderr.
func (s *server) failure(doing string, err error, stderr *tailBuffer) error {
	if s.m.ctx.Err() != nil {
		return fmt.Errorf("mcp server %q: closed", s.name)
	}
	err = fmt.Errorf("mcp server %q: %s: %w", s.name, doing, err)
	if stderr != nil {
		if tail := strings.TrimSpace(stderr.String()); tail != "" {
			err = fmt.Errorf("%w\nstderr:\n%s", err, tail)
		}
	}
	return err
}

// watch waits for the session to end. A session the server ended (it
// crashed, the network dropped) leaves the server disconnected: its tools
// stay known and the next call reconnects.
func (s *server) watch(sess *sdk.ClientSession) {
	_ = sess.Wait()
	s.mu.Lock()
	if s.sess != sess {
		s.mu.Unlock()
		return
	}
	s.sess = nil
	closed := s.closed
	if !closed {
		s.state = StateDisconnected
		s.err = fmt.Errorf("mcp server %q: the connection ended", s.name)
		if s.stderr != nil {
			if tail := strings.TrimSpace(s.stderr.String()); tail != "" {
				s.err = fmt.Errorf("%w\nstderr:\n%s", s.err, tail)
			}
		}
		s.gen++
	}
	err := s.err
	s.mu.Unlock()
	// Closing our side stops what is left of a stdio server.
	_ = sess.Close()
	if !closed {
		s.m.opts.Report(err)
		s.announce()
	}
}

// signedOutOf reports, after a call on sess failed, whether the server
// turned down its OAuth token for good (a 401 no refresh could answer):
// the server then needs a sign-in, sess is dropped, and the next call
// connects again with whatever is stored by then.
func (s *server) signedOutOf(sess *sdk.ClientSession) error {
	s.mu.Lock()
	if s.sess != sess || s.auth == nil {
		s.mu.Unlock()
		return nil
	}
	err := s.auth.signInNeededOrNil()
	if err == nil {
		s.mu.Unlock()
		return nil
	}
	err = fmt.Errorf("mcp server %q: %w", s.name, err)
	s.sess, s.auth, s.state, s.err = nil, nil, StateNeedsAuth, err
	s.mu.Unlock()
	snapshot := s.m.opts.Auth.tokensSnapshot(s.name, s.cfg.URL)
	s.mu.Lock()
	s.signedOut = snapshot
	s.mu.Unlock()
	_ = sess.Close()
	s.m.opts.Report(err)
	return err
}

// dropped marks sess as gone after a call found the connection closed, so
// that the next call reconnects.
func (s *server) dropped(sess *sdk.ClientSession) {
	s.mu.Lock()
	if s.sess != sess {
		s.mu.Unlock()
		return
	}
	s.sess, s.auth, s.state = nil, nil, StateDisconnected
	s.gen++
	s.mu.Unlock()
	_ = sess.Close()
	s.announce()
}
