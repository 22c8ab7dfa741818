package host

// This file is the room of the user's own shell commands.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/tools"
)

// shell is the room of the user's commands: the one running and how to
// run the next. Their results go to the transcript.
type shell struct {
	ctx      context.Context // the host's: Close stops the command
	dir      string
	settings Settings
	emit     func(api.Event)
	// userBash lets an extension answer the command (user_bash); ok is
	// false when none did.
	userBash func(context.Context, api.BashParams) (res api.BashResult, ok bool, err error)
	log      *transcript

	mu     sync.Mutex
	cancel context.CancelFunc // the running command's, or nil
}

// start registers a command and returns the function that runs it
// (see Host.StartBash).
func (s *shell) start(ctx context.Context, p api.BashParams) (func() (api.BashResult, error), error) {
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	if s.cancel != nil {
		s.mu.Unlock()
		cancel()
		return nil, errBashRunning
	}
	s.cancel = cancel
	s.mu.Unlock()
	store := s.log.current()
	return func() (api.BashResult, error) {
		defer func() {
			s.mu.Lock()
			s.cancel = nil
			s.mu.Unlock()
			cancel()
		}()
		// Close cancels s.ctx; a closing connection cancels ctx.
		stop := context.AfterFunc(s.ctx, cancel)
		defer stop()
		res, err := s.run(ctx, p)
		if err != nil {
			return api.BashResult{}, err
		}
		s.log.addBash(store, &llm.BashExecutionMessage{
			Command: p.Command, Output: res.Output, ExitCode: res.ExitCode, Cancelled: res.Cancelled,
			Truncated: res.Truncated, FullOutputPath: res.FullOutputPath, Timestamp: time.Now().UnixMilli(),
			ExcludeFromContext: p.ExcludeFromContext,
		})
		return res, nil
	}, nil
}

// abort stops the running command, if any.
func (s *shell) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
}

// run runs the command, or has an extension answer it.
func (s *shell) run(ctx context.Context, p api.BashParams) (api.BashResult, error) {
	if res, ok, err := s.userBash(ctx, p); err != nil || ok {
		return res, err
	}
	command := p.Command
	if prefix := s.settings.ShellCommandPrefix; prefix != "" {
		command = prefix + "\n" + command
	}
	id := api.CommandID(ctx)
	res, err := tools.RunShell(ctx, tools.ShellOptions{
		Command:    command,
		Dir:        s.dir,
		Shell:      s.settings.shell(),
		Sanitize:   true,
		TempPrefix: "gopi-bash",
		// Every piece of output goes to the client as it comes (pi 1.5's
		// bash_execution_update); the response may carry a truncated tail.
		OnChunk: func(chunk string) { s.emit(api.BashExecutionUpdate{ID: id, Delta: chunk}) },
	})
	if err != nil {
		return api.BashResult{}, fmt.Errorf("running bash command: %w", err)
	}
	return api.BashResult{
		Output:         res.Output,
		ExitCode:       res.ExitCode,
		Cancelled:      res.Cancelled,
		Truncated:      res.Truncated,
		FullOutputPath: res.FullOutputPath,
	}, nil
}
