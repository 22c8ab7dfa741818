package host

import (
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/host/run"
)

// survive is deferred by code that runs in the host's own goroutines
// (the extensions' start, their routes): a panic there is a bug, and must
// not take the process and the session down (see [run.Survived]).
func (h *Host) survive(where string, cleanup func(err error)) {
	run.Survived(recover(), h.tells, where, cleanup)
}

var _ api.Reporter = (*Host)(nil)

// Report hands err to Options.Report: an [api.Scheduler] reports a panic in a
// command through it.
func (h *Host) Report(err error) { h.opts.Report(err) }
