//go:build unix

package atomicfile

import (
	"io/fs"
	"syscall"
)

// nonBlock keeps an open of a path that turned into a FIFO from waiting.
const nonBlock = syscall.O_NONBLOCK

// links is the file's hard link count.
func links(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// noFollow makes an open fail on a symbolic link instead of following it.
const noFollow = syscall.O_NOFOLLOW
