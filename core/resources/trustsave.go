package resources

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gopi-dev/gopi/internal/atomicfile"
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

// staleLock is how old a lock directory may be before it is taken over:
// proper-lockfile's default, whose holder refreshes its time every half
// of it.
const staleLock = 10 * time.Second

// lockDir takes the lock pi's proper-lockfile takes: creating dir, which
// only one process can. It tries ten times, 20 ms apart, as pi does, and
// takes over a lock left stale by a process that died holding it.
func lockDir(dir string) (unlock func(), err error) {
	for attempt := 1; ; attempt++ {
		err = os.Mkdir(dir, 0o755)
		if err == nil {
			return func() { _ = os.Remove(dir) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if attempt == 10 {
			return nil, fmt.Errorf("%s %w", dir, ErrTrustLocked)
		}
		if fi, serr := os.Stat(dir); serr == nil && time.Since(fi.ModTime()) > staleLock {
			_ = os.Remove(dir)
			continue
		}
		time.Sleep(20 * time.Millisecond)
	}
}
