//go:build unix

package checkpoint

import (
	"os"
	"syscall"
)

// canRead says whether name can be opened for reading, without opening
// it (a FIFO put in a file's place would block an open).
func canRead(name string) error {
	if err := syscall.Access(name, 4 /* R_OK */); err != nil {
		return &os.PathError{Op: "access", Path: name, Err: err}
	}
	return nil
}
