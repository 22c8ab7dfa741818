// Package lockdir takes the lock pi's proper-lockfile takes: a directory
// (<file>.lock) that only one process can create. A holder that dies
// leaves it behind; once its time is older than the stale age, the next
// process takes it over. A holder that keeps it for long refreshes its
// time, as proper-lockfile does every half of the stale age, so it is
// not taken over under it.
//
// gopi and pi lock the same files this way (trust.json, mcp-auth.json and
// the MCP refresh locks), so neither loses the other's writes.
package lockdir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"
)

// ErrLocked marks a lock another process held for the whole wait.
var ErrLocked = errors.New("is held by another process")

// Options say how long to wait for a lock and when it is stale.
type Options struct {
	// Wait is how long to keep trying (0: one attempt); Retry is the
	// pause between attempts (0: 20 ms).
	Wait, Retry time.Duration
	// Stale is the age after which a lock is taken over (0: 10 s,
	// proper-lockfile's default).
	Stale time.Duration
	// Refresh keeps the lock's time current while it is held (every half
	// of Stale), for a holder that may keep it longer than Stale.
	Refresh bool
}

// Lock creates dir, waiting as o says, and returns the function that
// removes it. ctx ends the wait early with its error.
func Lock(ctx context.Context, dir string, o Options) (unlock func(), err error) {
	if o.Retry <= 0 {
		o.Retry = 20 * time.Millisecond
	}
	if o.Stale <= 0 {
		o.Stale = 10 * time.Second
	}
	deadline := time.Now().Add(o.Wait)
	for {
		err = os.Mkdir(dir, 0o755)
		if err == nil {
			return held(dir, o), nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if fi, serr := os.Stat(dir); serr == nil && time.Since(fi.ModTime()) > o.Stale {
			_ = os.Remove(dir)
			continue
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("%s %w", dir, ErrLocked)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(o.Retry):
		}
	}
}

// held is the unlock of a lock just taken, which refreshes its time
// meanwhile when o asks for it.
func held(dir string, o Options) func() {
	if !o.Refresh {
		return func() { _ = os.Remove(dir) }
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(o.Stale / 2)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				_ = os.Chtimes(dir, now, now)
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			_ = os.Remove(dir)
		})
	}
}
