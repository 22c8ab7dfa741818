//go:build unix

package checkpoint

import (
	"io/fs"
	"syscall"
)

// inode is the file's inode number: a file replaced by another of the
// same size and time is still seen as changed.
func inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
