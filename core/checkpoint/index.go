package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// IndexDir is where Repos keep their indexes in the agent directory: one
// file per repository and scope, readable by the user alone, reused by
// the next gopi that works there.
func IndexDir(agentDir string) string {
	return filepath.Join(agentDir, "checkpoint-index")
}

// indexSig is what an index file looked like when the Repo last wrote
// or read it: git replaces the file on every write (a new inode), so
// another process's write shows.
type indexSig struct {
	size, mtime int64
	ino         uint64
}

func sigOf(name string) indexSig {
	info, err := os.Stat(name)
	if err != nil {
		return indexSig{}
	}
	return indexSig{info.Size(), info.ModTime().UnixNano(), inode(info)}
}

// openIndex makes the Repo's index ready for an update and returns what
// ends it. With an index directory, the file is the one for this
// repository and scope, locked against other gopi processes until the
// returned func runs, and read again when someone else wrote it since.
// Without one, or when the directory cannot be used (said once, through
// Report), the index is a file in a temporary folder of the user's alone
// that Close removes.
func (r *Repo) openIndex(ctx context.Context) (func(), error) {
	if r.indexDir != "" {
		done, err := r.openSharedIndex(ctx)
		if err == nil || ctx.Err() != nil {
			return done, err
		}
		if r.report != nil {
			r.report(fmt.Errorf("checkpoint: the snapshot index cannot be kept in %s (%w); until gopi exits it is kept in a temporary folder", r.indexDir, err))
		}
		r.indexDir = ""
		r.index, r.indexed, r.indexSig = "", nil, indexSig{}
	}
	if r.index == "" {
		dir, err := temporaries.make()
		if err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		r.index = filepath.Join(dir, "index") // git creates it
	}
	if r.indexed == nil {
		r.indexed = map[string]fileEntry{}
	}
	return func() {}, nil
}

// indexName is the index file for this repository and scope in the
// index directory: its name is a hash of the repository's git directory,
// its work tree and the scope.
func (r *Repo) indexName() string {
	sum := sha256.Sum256([]byte(r.g.gitDir + "\x00" + r.g.top + "\x00" + r.prefix))
	return filepath.Join(r.indexDir, hex.EncodeToString(sum[:12]))
}

// openSharedIndex opens the index file for this repository and scope in
// the index directory, locked until the returned func runs.
func (r *Repo) openSharedIndex(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(r.indexDir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(r.indexDir, 0o700); err != nil {
		return nil, err
	}
	name := r.indexName()
	unlock, err := lockFile(ctx, name+".flock") // git takes name.lock itself
	if err != nil {
		return nil, fmt.Errorf("locking it: %w", err)
	}
	r.index = name
	if r.indexed == nil || sigOf(name) != r.indexSig {
		if r.indexed, err = r.readIndex(ctx); err != nil {
			// Not an index gopi can use: it is built anew.
			_ = os.Remove(name)
			r.indexed = map[string]fileEntry{}
		}
	}
	return unlock, nil
}

// readIndex is what the index file holds; nothing when there is none.
func (r *Repo) readIndex(ctx context.Context) (map[string]fileEntry, error) {
	out := map[string]fileEntry{}
	if _, err := os.Stat(r.index); errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	list, err := r.g.run(ctx, []string{"GIT_INDEX_FILE=" + r.index}, nil, "ls-files", "-z", "-s")
	if err != nil {
		return nil, err
	}
	for _, line := range splitZ(list) {
		meta, p, ok := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("checkpoint: its index lists %q", line)
		}
		out[p] = fileEntry{mode: f[0], id: f[1]}
	}
	return out, nil
}

// wroteIndex notes the index as the Repo left it, readable by the user
// alone (git makes it with the umask's bits).
func (r *Repo) wroteIndex() error {
	if err := os.Chmod(r.index, 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	r.indexSig = sigOf(r.index)
	return nil
}

// dropIndex forgets what the Repo's index holds and removes its file:
// the next snapshot builds it anew (a temporary one in the same folder).
func (r *Repo) dropIndex() {
	if r.index != "" {
		_ = os.Remove(r.index)
	}
	if r.indexDir != "" {
		r.index = ""
	}
	r.indexed, r.indexSig = nil, indexSig{}
}

// Close ends the Repo's use of its index: a temporary one is removed,
// one in the index directory stays for the next process.
func (r *Repo) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.indexDir == "" && r.index != "" {
		temporaries.remove(filepath.Dir(r.index))
	}
	r.index, r.indexed, r.indexSig = "", nil, indexSig{}
	return nil
}

// temporaries are the temporary index folders of this process's Repos.
var temporaries tempDirs

// tempDirs are folders made for this process alone.
type tempDirs struct {
	mu   sync.Mutex
	dirs map[string]bool
}

// make is a new private folder in the temporary directory.
func (t *tempDirs) make() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	dir, err := os.MkdirTemp("", "gopi-checkpoint-index-*") // 0700
	if err != nil {
		return "", err
	}
	if t.dirs == nil {
		t.dirs = map[string]bool{}
	}
	t.dirs[dir] = true
	return dir, nil
}

// remove removes one of them.
func (t *tempDirs) remove(dir string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dirs[dir] {
		_ = os.RemoveAll(dir)
		delete(t.dirs, dir)
	}
}

// RemoveTemporaryIndexes removes every temporary index this process
// made (see [Options]), also those of Repos never closed: gopi calls it
// on its way out, whatever ends it.
func RemoveTemporaryIndexes() {
	temporaries.mu.Lock()
	defer temporaries.mu.Unlock()
	for dir := range temporaries.dirs {
		_ = os.RemoveAll(dir)
	}
	clear(temporaries.dirs)
}
