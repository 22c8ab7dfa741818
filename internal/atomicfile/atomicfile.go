// Package atomicfile replaces a file's contents all at once: readers see
// the old file or the new one, never half of it.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to a temporary file in path's directory (named by
// pattern, as for os.CreateTemp), makes it 0644 and renames it over path.
// On failure the temporary file is removed. The directory must exist.
func Write(path string, data []byte, pattern string) error {
	f, err := os.CreateTemp(filepath.Dir(path), pattern)
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
