//go:build !unix

package atomicfile

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs here") }

func mknull(string) error { return errors.New("no device nodes here") }
