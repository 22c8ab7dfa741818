package models

import (
	"testing"

	"go.uber.org/goleak"
)

// Commands for "!" config values run in child processes whose pipes are
// read by goroutines; none may outlive a lookup.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
