package resources

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gopi-dev/gopi/internal/atomicfile"
	"github.com/gopi-dev/gopi/internal/lockdir"
	"github.com/gopi-dev/gopi/internal/regularfile"
)

// SaveTrust records a remembered decision for cwd in agentDir/trust.json,
// as pi does when a project_trust handler returns remember: the key is
// cwd's real path, the other entries (null ones too) are kept, the file
// is written sorted and indented by two spaces. It is held under the lock
// pi takes for it (a trust.json.lock directory, proper-lockfile's), so a
// pi writing the store at the same moment loses nothing.
func SaveTrust(agentDir, cwd string, trusted bool) error {
	path := filepath.Join(agentDir, "trust.json")
	if err := os.MkdirAll(agentDir, 0o755); err != nil {
		return fmt.Errorf("saving the trust decision: %w", err)
	}
	unlock, err := lockDir(path + ".lock")
	if err != nil {
		return fmt.Errorf("saving the trust decision: %w", err)
	}
	defer unlock()
	m := map[string]*bool{}
	data, err := regularfile.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("saving the trust decision: %w", err)
	default:
		if err := json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &m); err != nil {
			return fmt.Errorf("saving the trust decision: trust store %s: expected an object of true, false or null: %w", path, err)
		}
	}
	key := absDir(cwd)
	if real, err := filepath.EvalSymlinks(key); err == nil {
		key = real
	}
	m[key] = &trusted
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil { // sorted keys, a final newline
		return fmt.Errorf("saving the trust decision: %w", err)
	}
	if err := atomicfile.Write(path, buf.Bytes(), ".trust-*.json"); err != nil {
		return fmt.Errorf("saving the trust decision: %w", err)
	}
	return nil
}

// lockDir takes the lock pi's proper-lockfile takes on dir's file: it
// tries ten times, 20 ms apart, as pi does, and takes over a lock left
// stale (10 s, proper-lockfile's default) by a process that died holding
// it.
func lockDir(dir string) (unlock func(), err error) {
	unlock, err = lockdir.Lock(context.Background(), dir, lockdir.Options{Wait: 9 * 20 * time.Millisecond, Retry: 20 * time.Millisecond})
	if errors.Is(err, lockdir.ErrLocked) {
		return nil, fmt.Errorf("%s %w", dir, ErrTrustLocked)
	}
	return unlock, err
}
