package agent

import (
	"fmt"
	"runtime/debug"
)

// reportPanic reports a panic the loop survived, with the stack of the
// goroutine that panicked. Call it from the deferred function that
// recovered, while the stack still holds the panic.
func (a *Agent) reportPanic(format string, args ...any) {
	if a.cfg.Report != nil {
		a.cfg.Report(fmt.Errorf(format+"\n%s", append(args, debug.Stack())...))
	}
}
