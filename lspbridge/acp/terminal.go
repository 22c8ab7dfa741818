package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/tools"
)

// clientShell runs bash's commands in the client's terminals, so the
// editor shows them live in the tool call. A command runs as
// `bash -c <command>` in the terminal, as gopi's own shell runs it; gopi
// waits for it to exit (terminal/wait_for_exit), then reads what it
// printed (terminal/output) into the tool's output, where bash's own
// truncation applies. The output reaches the tool once the command ends:
// the editor shows it live. When ctx ends the command is killed
// (terminal/kill); the terminal is always released (terminal/release).
type clientShell struct{ l *lent }

var _ tools.OnLocalMachine = clientShell{}

// OnLocalMachine says the client's terminals run on this machine, where
// gopi's sandbox, when on, runs bash's commands itself instead, confined.
func (clientShell) OnLocalMachine() bool { return true }

// terminalOutputLimit is the output the client keeps of a command, its
// end: what bash's full output keeps.
const terminalOutputLimit = tools.BashOutputMax

// terminalCleanup bounds each request that ends a terminal (kill, the
// last output, release) once the command's ctx is over.
const terminalCleanup = 10 * time.Second

func (sh clientShell) Exec(ctx context.Context, req tools.ExecRequest) (*int, error) {
	s := sh.l.session()
	if s == nil || !sh.l.caps.Terminal {
		return tools.LocalShell{}.Exec(ctx, req)
	}
	a := sh.l.a
	sid := sdk.SessionId(s.id)
	create := sdk.CreateTerminalRequest{
		SessionId:       sid,
		Command:         "bash",
		Args:            []string{"-c", req.Command},
		OutputByteLimit: sdk.Ptr(terminalOutputLimit),
	}
	if req.Dir != "" {
		create.Cwd = sdk.Ptr(req.Dir)
	}
	for _, kv := range req.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			create.Env = append(create.Env, sdk.EnvVariable{Name: k, Value: v})
		}
	}
	var term sdk.CreateTerminalResponse
	if err := a.call(ctx, sdk.ClientMethodTerminalCreate, create, &term); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("running the command in the editor's terminal: %w", clientFailedTerminal(err))
	}
	tid := term.TerminalId
	// What ends the terminal runs even when ctx is over, each request
	// bounded.
	after := func(method string, params, result any) error {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), terminalCleanup)
		defer cancel()
		return a.call(cctx, method, params, result)
	}
	output := func() error {
		var out sdk.TerminalOutputResponse
		if err := after(sdk.ClientMethodTerminalOutput, sdk.TerminalOutputRequest{SessionId: sid, TerminalId: tid}, &out); err != nil {
			return err
		}
		return writeOutput(req.Output, out)
	}
	kill := func() {
		_ = after(sdk.ClientMethodTerminalKill, sdk.KillTerminalRequest{SessionId: sid, TerminalId: tid}, nil)
	}
	defer func() {
		_ = after(sdk.ClientMethodTerminalRelease, sdk.ReleaseTerminalRequest{SessionId: sid, TerminalId: tid}, nil)
	}()
	if id, ok := agent.CallID(ctx); ok {
		s.showTerminal(id, term.TerminalId)
	}

	var exit sdk.WaitForTerminalExitResponse
	waitErr := a.call(ctx, sdk.ClientMethodTerminalWaitForExit, sdk.WaitForTerminalExitRequest{SessionId: sid, TerminalId: tid}, &exit)
	if ctx.Err() != nil {
		// Cancelled or timed out: the command is killed, and what it
		// printed until then is the tool's.
		kill()
		_ = output()
		return nil, ctx.Err()
	}
	if waitErr != nil {
		kill()
		return nil, fmt.Errorf("waiting for the command in the editor's terminal: %w", clientFailedTerminal(waitErr))
	}
	if err := output(); err != nil {
		return nil, fmt.Errorf("reading the editor's terminal: %w", clientFailedTerminal(err))
	}
	// No exit code: the command was killed by a signal.
	return exit.ExitCode, nil
}

// writeOutput writes a terminal's output to w, after a note when the
// client kept only its end.
func writeOutput(w io.Writer, out sdk.TerminalOutputResponse) error {
	if w == nil {
		return nil
	}
	if out.Truncated {
		if _, err := fmt.Fprintf(w, "[the editor's terminal kept only the last %s of the output]\n", tools.FormatSize(terminalOutputLimit)); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, out.Output)
	return err
}

// clientFailedTerminal says what went wrong with a terminal request.
func clientFailedTerminal(err error) error {
	var ce *ClientError
	switch {
	case errors.As(err, &ce):
		return fmt.Errorf("the editor answered %s with error %d: %s", ce.Method, ce.Code, ce.Message)
	case errors.Is(err, errConnectionEnded):
		return errors.New("the editor disconnected")
	}
	return err
}
