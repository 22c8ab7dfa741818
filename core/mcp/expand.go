package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gopi-dev/gopi/internal/envexpand"
	"github.com/gopi-dev/gopi/internal/homedir"
)

// CommandTimeout bounds a !command in a configuration value, as pi's 10
// seconds do.
const CommandTimeout = 10 * time.Second

// Expander expands configuration values when a server is started: mcp.json
// keeps what the user wrote (`gopi mcp add` writes it back unchanged).
type Expander struct {
	// Getenv reads the environment (nil: os.Getenv); an empty value
	// counts as unset, as in pi.
	Getenv func(string) string
	// Timeout bounds each !command (0: CommandTimeout).
	Timeout time.Duration
}

// Value expands one env or header value as pi does: a value that starts
// with "!" is a command run with sh -c whose trimmed standard output is
// the value (failing when it fails, times out or prints nothing);
// otherwise $NAME and ${NAME} are environment variables (an unset one is
// an error naming it), "$$" is "$" and "$!" is "!". what names the value
// in errors (`MCP server "docs" header "Authorization"`).
func (x Expander) Value(ctx context.Context, v, what string) (string, error) {
	if cmd, ok := strings.CutPrefix(v, "!"); ok {
		out, err := x.run(ctx, cmd)
		if err != nil {
			return "", fmt.Errorf("failed to resolve %s from shell command: %s: %w", what, cmd, err)
		}
		return out, nil
	}
	getenv := x.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	out, missing := envexpand.Expand(v, getenv)
	switch len(missing) {
	case 0:
		return out, nil
	case 1:
		return "", fmt.Errorf("failed to resolve %s from environment variable: %s", what, missing[0])
	}
	return "", fmt.Errorf("failed to resolve %s from environment variables: %s", what, strings.Join(missing, ", "))
}

var errSilentCommand = errors.New("it printed nothing")

func (x Expander) run(ctx context.Context, cmd string) (string, error) {
	timeout := x.Timeout
	if timeout <= 0 {
		timeout = CommandTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	// A child of sh may hold stdout open after sh is killed; stop
	// waiting for it shortly after.
	c.WaitDelay = 500 * time.Millisecond
	out, err := c.Output()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%w (after %s)", ctx.Err(), timeout)
	}
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(out))
	if s == "" {
		return "", errSilentCommand
	}
	return s, nil
}

// Launch is how to start a stdio server, every value expanded.
type Launch struct {
	Command string
	Args    []string
	// Env is the entry's env, expanded; the caller adds it to the
	// environment the server starts with.
	Env map[string]string
	// Dir is the working directory, absolute.
	Dir string
}

// Stdio expands a stdio entry named name for a session in sessionDir: a
// leading ~/ (or a whole ~) in command, args and cwd is the home
// directory, env values are expanded as Value does, and a relative cwd
// (none: ".") is taken from sessionDir.
func (x Expander) Stdio(ctx context.Context, name string, s Server, sessionDir string) (Launch, error) {
	l := Launch{Command: homedir.Expand(s.Command), Dir: homedir.Expand(s.Cwd)}
	for _, a := range s.Args {
		l.Args = append(l.Args, homedir.Expand(a))
	}
	if l.Dir == "" {
		l.Dir = "."
	}
	if !filepath.IsAbs(l.Dir) {
		l.Dir = filepath.Join(sessionDir, l.Dir)
	}
	if len(s.Env) > 0 {
		l.Env = make(map[string]string, len(s.Env))
		for _, k := range sortedKeys(s.Env) {
			v, err := x.Value(ctx, s.Env[k], fmt.Sprintf("MCP server %q env %q", name, k))
			if err != nil {
				return Launch{}, err
			}
			l.Env[k] = v
		}
	}
	return l, nil
}

// Headers expands the headers of an HTTP entry named name as Value does.
func (x Expander) Headers(ctx context.Context, name string, s Server) (map[string]string, error) {
	if len(s.Headers) == 0 {
		return nil, nil
	}
	h := make(map[string]string, len(s.Headers))
	for _, k := range sortedKeys(s.Headers) {
		v, err := x.Value(ctx, s.Headers[k], fmt.Sprintf("MCP server %q header %q", name, k))
		if err != nil {
			return nil, err
		}
		h[k] = v
	}
	return h, nil
}
