//go:build unix

package atomicfile

import "syscall"

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

func mknull(path string) error { return syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3) }
