package api

import (
	"fmt"
	"runtime/debug"

	"github.com/sourcegraph/conc/panics"
)

// Reporter is implemented by a Server that logs the problems it survived
// (cmd/gopi writes them to stderr). The [Scheduler] hands it every panic
// a command's handler raised, with the stack.
type Reporter interface {
	Report(err error)
}

// Panicked turns what a deferred function got from recover into the error
// a client is shown ("internal error in <where>: <value>") and the report
// for stderr, which adds the stack of the goroutine that panicked. Call it
// from that deferred function, while the stack still holds the panic. A
// panic that conc carried over from another goroutine keeps its own value
// and stack, so neither the stack nor conc's wrapping reaches the client.
func Panicked(where string, v any) (err, report error) {
	stack := debug.Stack()
	if r, ok := v.(*panics.Recovered); ok {
		v, stack = r.Value, r.Stack
	}
	err = fmt.Errorf("internal error in %s: %v", where, v)
	return err, fmt.Errorf("%w\n%s", err, stack)
}
