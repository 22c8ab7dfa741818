//go:build !unix

package checkpoint

import "os"

// canRead says whether name can be opened for reading.
func canRead(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	return f.Close()
}
