//go:build unix

package session

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockWait bounds how long a write waits for another process to release
// the session file; lockPoll is how often it tries meanwhile. Writers
// hold the lock only while they append, so a wait this long means a
// process holds it for something else: the write fails (and is retried
// with the next one) rather than stalling the session.
const (
	lockWait = 10 * time.Second
	lockPoll = 10 * time.Millisecond
)

// lockFile takes an exclusive flock on f; closing f releases it. A file
// system that has no such locks is written without one.
func lockFile(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(lockWait)
	for {
		var lerr error
		if err := rc.Control(func(fd uintptr) {
			lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
		}); err != nil {
			return err
		}
		switch {
		case lerr == nil:
			return nil
		case errors.Is(lerr, syscall.EINTR):
			continue
		case errors.Is(lerr, syscall.ENOLCK), errors.Is(lerr, syscall.EOPNOTSUPP), errors.Is(lerr, syscall.ENOSYS), errors.Is(lerr, syscall.EINVAL):
			return nil
		case !errors.Is(lerr, syscall.EWOULDBLOCK):
			return fmt.Errorf("lock %s: %w", f.Name(), lerr)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %w", f.Name(), ErrLocked)
		}
		time.Sleep(lockPoll)
	}
}
