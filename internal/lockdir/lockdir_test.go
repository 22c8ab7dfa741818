package lockdir

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One holder at a time; a lock held too long is reported; a stale one
// (its holder died) is taken over; a holder that refreshes keeps it.
func TestLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "file.lock")
	unlock, err := Lock(context.Background(), dir, Options{})
	require.NoError(t, err)
	_, err = Lock(context.Background(), dir, Options{Wait: 50 * time.Millisecond})
	assert.ErrorIs(t, err, ErrLocked)

	done := make(chan error, 1)
	go func() {
		u, err := Lock(context.Background(), dir, Options{Wait: 5 * time.Second})
		if err == nil {
			u()
		}
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	unlock()
	require.NoError(t, <-done, "taken once released")
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err))

	require.NoError(t, os.Mkdir(dir, 0o755))
	old := time.Now().Add(-time.Minute)
	require.NoError(t, os.Chtimes(dir, old, old))
	unlock, err = Lock(context.Background(), dir, Options{Stale: time.Second})
	require.NoError(t, err, "a stale lock is taken over")
	unlock()

	unlock, err = Lock(context.Background(), dir, Options{Stale: 200 * time.Millisecond, Refresh: true})
	require.NoError(t, err)
	time.Sleep(500 * time.Millisecond)
	_, err = Lock(context.Background(), dir, Options{Stale: 200 * time.Millisecond})
	assert.ErrorIs(t, err, ErrLocked, "its holder keeps its time current")
	unlock()
	unlock() // twice is harmless

	ctx, cancel := context.WithCancel(context.Background())
	unlock, err = Lock(context.Background(), dir, Options{})
	require.NoError(t, err)
	defer unlock()
	cancel()
	_, err = Lock(ctx, dir, Options{Wait: time.Minute})
	assert.ErrorIs(t, err, context.Canceled)
}
