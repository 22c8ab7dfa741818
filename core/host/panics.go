package host

import "github.com/gopi-dev/gopi/core/api"

// internalSource names gopi itself as the origin of an extension_error
// event that reports an internal failure (clients already show those and
// go on).
const internalSource = "gopi"

// survive is deferred by code that runs in the host's own goroutines (the
// drive loop, retries, compaction). A panic there is a bug; it must not
// take the process and the session down. survive reports it with its stack
// (stderr), tells the client with an extension_error event, and runs
// cleanup so the protocol's promises still hold (an auto_*_end for every
// auto_*_start).
func (h *Host) survive(where string, cleanup func(err error)) {
	v := recover()
	if v == nil {
		return
	}
	err, report := api.Panicked(where, v)
	h.opts.Report(report)
	if cleanup != nil {
		cleanup(err)
	}
	h.emit(api.ExtensionError{ExtensionPath: internalSource, Event: where, Error: err.Error()})
}

var _ api.Reporter = (*Host)(nil)

// Report hands err to Options.Report: an [api.Scheduler] reports a panic in a
// command through it.
func (h *Host) Report(err error) { h.opts.Report(err) }
