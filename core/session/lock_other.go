//go:build !unix

package session

import "os"

// lockFile does nothing where flock is not available: appends still go
// out whole, each in one write.
func lockFile(*os.File) error { return nil }
