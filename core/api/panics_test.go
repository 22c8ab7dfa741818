package api

import (
	"encoding/json"
	"testing"

	"github.com/sourcegraph/conc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reportingServer is a recorder that hears about the panics the
// Scheduler stops.
type reportingServer struct {
	recorder
	reports []error
}

func (s *reportingServer) Report(err error) { s.reports = append(s.reports, err) }

// Issue 10: a panic in a command is answered as an error and reported,
// with the stack of the handler that panicked, to a Server that reports.
func TestStartReportsAPanicWithItsStack(t *testing.T) {
	s := &reportingServer{}
	_, err := schedule(s, "bash", json.RawMessage(`{"command":"ls"}`))
	assert.EqualError(t, err, "internal error in bash: boom")
	require.Len(t, s.reports, 1)
	assert.Contains(t, s.reports[0].Error(), "internal error in bash: boom\n")
	assert.Contains(t, s.reports[0].Error(), "(*recorder).Bash", "the report carries the handler's stack")
}

// A panic that conc carried over from another goroutine reaches the client
// as its plain value; its stack (the panicking goroutine's) goes to the
// report only.
func TestPanickedUnwrapsConc(t *testing.T) {
	var err, report error
	func() {
		defer func() { err, report = Panicked("compaction", recover()) }()
		var wg conc.WaitGroup
		wg.Go(func() { panic("deep down") })
		wg.Wait()
	}()
	assert.EqualError(t, err, "internal error in compaction: deep down")
	assert.Contains(t, report.Error(), "TestPanickedUnwrapsConc.func1.2", "the stack of the goroutine that panicked")
}
