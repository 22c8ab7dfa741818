//go:build unix

package tools

import (
	"io/fs"
	"syscall"
)

func idOf(info fs.FileInfo) fileID {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)} //nolint:unconvert // Dev is int32 on some systems
	}
	return fileID{}
}
