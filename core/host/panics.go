package host

import (
	"fmt"
	"runtime/debug"

	"github.com/gopi-dev/gopi/core/api"
)

// internalSource names gopi itself as the origin of an extension_error
// event that reports an internal failure (clients already show those and
// go on).
const internalSource = "gopi"

// survive is deferred by code that runs in the host's own goroutines (the
// drive loop, retries, compaction). A panic there is a bug; it must not
// take the process and the session down. survive reports it with its stack
// (stderr), tells the client with an extension_error event, and runs
// cleanup so the protocol's promises still hold (an auto_*_end for every
// auto_*_start). It returns whether it recovered one.
func (h *Host) survive(where string, cleanup func(err error)) {
	v := recover()
	if v == nil {
		return
	}
	err := fmt.Errorf("internal error in %s: %v", where, v)
	h.opts.Report(fmt.Errorf("%w\n%s", err, debug.Stack()))
	if cleanup != nil {
		cleanup(err)
	}
	h.emit(api.ExtensionError{ExtensionPath: internalSource, Event: where, Error: err.Error()})
}
