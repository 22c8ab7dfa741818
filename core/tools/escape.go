package tools

import "context"

// Escape decides whether a command gopi's sandbox stopped runs once more
// outside it. The bash tool finds it in the context it runs with
// ([WithEscape]); core/host/gate's sandbox stage puts it there and asks
// the user.
type Escape interface {
	// Escape reports whether the command d names may run again, once,
	// unconfined. false (the user denied it, nobody could be asked)
	// leaves the sandboxed result as it is.
	Escape(ctx context.Context, d Denial) bool
}

// Denial is a command the sandbox stopped: it failed with the messages
// of a refused write or socket.
type Denial struct {
	// Command is the command line as the model sent it.
	Command string
	// Confinement says what the sandbox let it do (the sandbox's
	// Describe).
	Confinement string
}

// escapedNote is what the model reads after the result of a command that
// ran again outside the sandbox.
const escapedNote = "The command first ran in gopi's sandbox, which stopped it; the user allowed it to run once more " +
	"outside the sandbox, and this is the result of that second run."

type escapeKey struct{}

// WithEscape makes a bash tool running with ctx ask e whether a command
// the sandbox stopped may run again outside it. Without it, the
// sandboxed result stands and nothing is asked.
func WithEscape(ctx context.Context, e Escape) context.Context {
	return context.WithValue(ctx, escapeKey{}, e)
}

// escapeFrom is the Escape ctx carries, nil when none.
func escapeFrom(ctx context.Context) Escape {
	e, _ := ctx.Value(escapeKey{}).(Escape)
	return e
}
