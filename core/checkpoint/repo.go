package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Git file modes as trees record them.
const (
	modeFile    = "100644"
	modeExec    = "100755"
	modeSymlink = "120000"
	modeGitlink = "160000"
)

// DefaultMaxFileSize is the largest file a snapshot records; larger ones
// are left out, and left alone by a restore.
const DefaultMaxFileSize = 2 << 20

// RefPrefix is where checkpoints live in a repository: nothing else of
// the user's is ever written.
const RefPrefix = "refs/gopi/checkpoints/"

// Repo records and restores the files under one directory of a git work
// tree. The user's repository is never changed: HEAD, the index, the
// stash, branches and tags stay as they are; snapshots are commit objects
// under [RefPrefix], built through an index of their own.
type Repo struct {
	g      *git
	cwd    string // the scope's directory
	prefix string // cwd relative to the top, slash-separated; "" at the top
	max    int64

	// mu serialises snapshots and restores, and guards the fields below.
	mu    sync.Mutex
	cache map[string]cached // by path relative to the top
	// index is the file of the Repo's own index ("" before the first
	// snapshot), indexed what it holds.
	index   string
	indexed map[string]fileEntry
}

// cached is what a file looked like when it was last hashed.
type cached struct {
	size  int64
	mtime int64
	ino   uint64
	mode  string
	id    string
}

// Change is one file that differs from a checkpoint: what restoring it
// would undo.
type Change struct {
	// Path is relative to the scope's directory, slash-separated.
	Path string `json:"path"`
	// Status is "added" (since the checkpoint: a restore deletes it),
	// "modified" or "deleted" (a restore brings it back).
	Status string `json:"status"`
	Binary bool   `json:"binary,omitempty"`
	// Diff is a unified diff from the checkpoint's version to the
	// current one, for text files.
	Diff string `json:"diff,omitempty"`
}

// Open returns the Repo of the git work tree dir is in, recording the
// files under dir. It fails when dir is not in a work tree.
func Open(ctx context.Context, dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	g, err := openGit(ctx, abs)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	rel, err := filepath.Rel(g.top, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("checkpoint: %s is not under its work tree %s", dir, g.top)
	}
	prefix := filepath.ToSlash(rel)
	if prefix == "." {
		prefix = ""
	}
	return &Repo{g: g, cwd: real, prefix: prefix, max: DefaultMaxFileSize, cache: map[string]cached{}}, nil
}

// state is the scope's files as a snapshot sees them.
type state struct {
	files map[string]fileEntry // recorded, by path relative to the top
	// skipped are files present but not recorded (too large, LFS): a
	// restore leaves them alone.
	skipped map[string]bool
}

type fileEntry struct {
	mode string
	id   string
}

// pathspec limits a git command to the scope.
func (r *Repo) pathspec() string {
	if r.prefix == "" {
		return ":(top)"
	}
	return ":(top,literal)" + r.prefix
}

// scan lists and hashes the scope's files; write stores their blobs in
// the object database.
func (r *Repo) scan(ctx context.Context, write bool) (state, error) {
	st := state{files: map[string]fileEntry{}, skipped: map[string]bool{}}
	tracked, err := r.g.run(ctx, nil, nil, "ls-files", "-z", "-s", "--", r.pathspec())
	if err != nil {
		return st, err
	}
	var paths []string
	for _, line := range splitZ(tracked) {
		meta, p, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		if strings.HasPrefix(meta, modeGitlink) {
			continue // a submodule: its own repository
		}
		paths = append(paths, p)
	}
	others, err := r.g.run(ctx, nil, nil, "ls-files", "-z", "-o", "--exclude-standard", "--", r.pathspec())
	if err != nil {
		return st, err
	}
	for _, p := range splitZ(others) {
		if strings.HasSuffix(p, "/") {
			continue // a nested repository
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	paths = compactSorted(paths) // a conflicted file is listed once per stage
	started := time.Now()
	var toHash []string
	var toHashInfo []cached
	for _, p := range paths {
		full := native(r.g.top, p)
		info, err := os.Lstat(full)
		if err != nil {
			continue // deleted from the work tree: not in the snapshot
		}
		switch m := info.Mode(); {
		case m&fs.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return st, fmt.Errorf("checkpoint: %w", err)
			}
			id, err := r.hashBytes(ctx, []byte(target), write)
			if err != nil {
				return st, err
			}
			st.files[p] = fileEntry{modeSymlink, id}
		case m.IsRegular():
			if info.Size() > r.max {
				st.skipped[p] = true
				continue
			}
			mode := modeFile
			if m.Perm()&0o111 != 0 {
				mode = modeExec
			}
			c := cached{size: info.Size(), mtime: info.ModTime().UnixNano(), ino: inode(info), mode: mode}
			if old, ok := r.cache[p]; ok && old.size == c.size && old.mtime == c.mtime && old.ino == c.ino && old.mode == c.mode {
				st.files[p] = fileEntry{mode, old.id}
				continue
			}
			toHash = append(toHash, p)
			toHashInfo = append(toHashInfo, c)
		}
	}
	if len(toHash) > 0 {
		// Whether a file is LFS's is asked of the files hashed now; the
		// cache holds only files that were not, and forgets everything
		// when attributes change.
		for _, p := range toHash {
			if path.Base(p) == ".gitattributes" {
				clear(r.cache)
				break
			}
		}
		lfs, err := r.lfsPaths(ctx, toHash)
		if err != nil {
			return st, err
		}
		kept, keptInfo := toHash[:0], toHashInfo[:0]
		for i, p := range toHash {
			if lfs[p] {
				st.skipped[p] = true
				delete(r.cache, p)
				continue
			}
			kept, keptInfo = append(kept, p), append(keptInfo, toHashInfo[i])
		}
		toHash, toHashInfo = kept, keptInfo
	}
	if len(toHash) > 0 {
		ids, err := r.hashPaths(ctx, toHash, write)
		if err != nil {
			return st, err
		}
		for i, p := range toHash {
			c := toHashInfo[i]
			c.id = ids[i]
			st.files[p] = fileEntry{c.mode, c.id}
			// A file changed within the last moments may change again
			// without its size or time showing it (git's "racily
			// clean" files): it is hashed again next time.
			if write && started.Sub(time.Unix(0, c.mtime)) > racyWindow {
				r.cache[p] = c
			}
		}
	}
	return st, nil
}

// racyWindow is how old a file's modification must be for its hash to
// be reused on the strength of its size and time alone.
const racyWindow = 2 * time.Second

func compactSorted(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// lfsPaths are the paths whose filter attribute is lfs.
func (r *Repo) lfsPaths(ctx context.Context, paths []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(paths) == 0 {
		return out, nil
	}
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	res, err := r.g.run(ctx, nil, &in, "check-attr", "-z", "--stdin", "filter")
	if err != nil {
		return nil, err
	}
	f := splitZ(res)
	for i := 0; i+2 < len(f); i += 3 { // path, attribute, value
		if f[i+2] == "lfs" {
			out[f[i]] = true
		}
	}
	return out, nil
}

// hashPaths hashes files byte for byte (no filters: line ends and
// attributes change nothing).
func (r *Repo) hashPaths(ctx context.Context, paths []string, write bool) ([]string, error) {
	args := []string{"hash-object", "--no-filters", "--stdin-paths"}
	if write {
		args = append(args, "-w")
	}
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte('\n')
	}
	out, err := r.g.run(ctx, nil, &in, args...)
	if err != nil {
		return nil, err
	}
	ids := strings.Fields(string(out))
	if len(ids) != len(paths) {
		return nil, fmt.Errorf("checkpoint: git hash-object gave %d ids for %d files", len(ids), len(paths))
	}
	return ids, nil
}

func (r *Repo) hashBytes(ctx context.Context, data []byte, write bool) (string, error) {
	args := []string{"hash-object", "--no-filters", "--stdin"}
	if write {
		args = append(args, "-w")
	}
	out, err := r.g.run(ctx, nil, bytes.NewReader(data), args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// commit writes st as a commit object under ref (a name below
// [RefPrefix]) and returns its id.
func (r *Repo) commit(ctx context.Context, st state, ref, message string) (string, error) {
	tree, err := r.writeTree(ctx, st)
	if err != nil {
		r.dropIndex()
		return "", err
	}
	id, err := r.g.run(ctx, []string{
		"GIT_AUTHOR_NAME=gopi", "GIT_AUTHOR_EMAIL=gopi@localhost",
		"GIT_COMMITTER_NAME=gopi", "GIT_COMMITTER_EMAIL=gopi@localhost",
	}, nil, "commit-tree", tree, "-m", message)
	if err != nil {
		return "", err
	}
	commit := strings.TrimSpace(string(id))
	if _, err := r.g.run(ctx, nil, nil, "update-ref", "-m", "gopi checkpoint", RefPrefix+ref, commit); err != nil {
		return "", err
	}
	return commit, nil
}

// writeTree writes st as a tree object. The index it builds it in is
// the Repo's own and outlives the call: the next snapshot only updates
// the entries that changed, and git rewrites only the trees above them.
func (r *Repo) writeTree(ctx context.Context, st state) (string, error) {
	if r.index == "" {
		f, err := os.CreateTemp("", "gopi-checkpoint-index-*")
		if err != nil {
			return "", fmt.Errorf("checkpoint: %w", err)
		}
		r.index = f.Name()
		_ = f.Close()
		_ = os.Remove(r.index) // git creates it: an empty file is not an index
		r.indexed = map[string]fileEntry{}
	}
	var in bytes.Buffer
	for p, e := range st.files {
		if r.indexed[p] != e {
			fmt.Fprintf(&in, "%s %s\t%s\x00", e.mode, e.id, p)
		}
	}
	for p := range r.indexed {
		if _, ok := st.files[p]; !ok {
			fmt.Fprintf(&in, "0 %s\t%s\x00", zeroID(r.indexed[p].id), p) // mode 0 removes it
		}
	}
	env := []string{"GIT_INDEX_FILE=" + r.index}
	if in.Len() > 0 {
		if _, err := r.g.run(ctx, env, &in, "update-index", "-z", "--index-info"); err != nil {
			return "", err
		}
	}
	r.indexed = maps.Clone(st.files)
	tree, err := r.g.run(ctx, env, nil, "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(tree)), nil
}

// zeroID is the null object id of id's length.
func zeroID(id string) string { return strings.Repeat("0", len(id)) }

// dropIndex forgets the Repo's index: the next snapshot builds it anew.
func (r *Repo) dropIndex() {
	if r.index != "" {
		_ = os.Remove(r.index)
	}
	r.index, r.indexed = "", nil
}

// Close removes the Repo's own index.
func (r *Repo) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropIndex()
	return nil
}

// Snapshot records the scope's files as a commit under RefPrefix+ref and
// returns the commit's id.
func (r *Repo) Snapshot(ctx context.Context, ref string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.snapshot(ctx, ref)
}

func (r *Repo) snapshot(ctx context.Context, ref string) (string, error) {
	st, err := r.scan(ctx, true)
	if err != nil {
		return "", err
	}
	id, err := r.commit(ctx, st, ref, "gopi checkpoint")
	if err != nil && len(r.cache) > 0 {
		// A blob the cache vouched for may be gone (a gc after its
		// checkpoints were pruned): hash everything again.
		clear(r.cache)
		if st, err = r.scan(ctx, true); err != nil {
			return "", err
		}
		id, err = r.commit(ctx, st, ref, "gopi checkpoint")
	}
	return id, err
}

// recorded is a checkpoint's files.
func (r *Repo) recorded(ctx context.Context, commit string) (map[string]fileEntry, error) {
	out, err := r.g.run(ctx, nil, nil, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", commit, err)
	}
	files := map[string]fileEntry{}
	for _, line := range splitZ(out) {
		meta, p, ok := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[1] != "blob" {
			continue
		}
		files[p] = fileEntry{f[0], f[2]}
	}
	return files, nil
}

// change is one difference between a checkpoint and now.
type change struct {
	path     string // relative to the top
	status   string
	old, cur fileEntry
}

func (r *Repo) changes(old map[string]fileEntry, now state) []change {
	var out []change
	for p, e := range now.files {
		o, ok := old[p]
		switch {
		case !ok:
			out = append(out, change{p, "added", fileEntry{}, e})
		case o != e:
			out = append(out, change{p, "modified", o, e})
		}
	}
	for p, o := range old {
		if _, ok := now.files[p]; ok || now.skipped[p] {
			continue
		}
		out = append(out, change{p, "deleted", o, fileEntry{}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// Changes says how the scope differs from the checkpoint commit: what
// restoring it would undo, with a unified diff for each text file.
func (r *Repo) Changes(ctx context.Context, commit string) ([]Change, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old, err := r.recorded(ctx, commit)
	if err != nil {
		return nil, err
	}
	now, err := r.scan(ctx, false)
	if err != nil {
		return nil, err
	}
	return r.describe(ctx, r.changes(old, now), true)
}

// describe words changes for a client, with diffs when withDiff.
func (r *Repo) describe(ctx context.Context, cs []change, withDiff bool) ([]Change, error) {
	out := make([]Change, 0, len(cs))
	var cat *catFile
	if withDiff && len(cs) > 0 {
		var err error
		if cat, err = r.g.catFile(ctx); err != nil {
			return nil, err
		}
		defer cat.Close()
	}
	for _, c := range cs {
		rel, _ := relTo(r.prefix, c.path)
		ch := Change{Path: rel, Status: c.status}
		if cat != nil {
			var before, after []byte
			var err error
			if c.old.id != "" {
				if before, err = cat.blob(c.old.id); err != nil {
					return nil, err
				}
			}
			if c.status != "deleted" {
				if after, err = os.ReadFile(native(r.g.top, c.path)); err != nil && c.cur.mode != modeSymlink {
					return nil, fmt.Errorf("checkpoint: %w", err)
				}
				if c.cur.mode == modeSymlink {
					t, _ := os.Readlink(native(r.g.top, c.path))
					after = []byte(t)
				}
			}
			if isBinary(before) || isBinary(after) {
				ch.Binary = true
			} else {
				ch.Diff = unified(rel, string(before), string(after))
			}
		}
		out = append(out, ch)
	}
	return out, nil
}

// isBinary reports whether data looks binary, as git decides: a NUL in
// its first 8000 bytes.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// Restore puts the scope's files back as the checkpoint commit recorded
// them: files changed since get their recorded bytes and mode back, files
// added since are removed, deleted ones come back. Files a snapshot leaves
// out (ignored, too large, LFS, nested repositories) are left alone.
// Unless dryRun, the files as they were just before are recorded first
// under undoRef ("" for none) and that commit is returned. A dry run
// changes nothing and returns what the restore would do.
func (r *Repo) Restore(ctx context.Context, commit, undoRef string, dryRun bool) ([]Change, string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old, err := r.recorded(ctx, commit)
	if err != nil {
		return nil, "", err
	}
	now, err := r.scan(ctx, !dryRun)
	if err != nil {
		return nil, "", err
	}
	cs := r.changes(old, now)
	described, err := r.describe(ctx, cs, false)
	if err != nil || dryRun || len(cs) == 0 {
		return described, "", err
	}
	var undo string
	if undoRef != "" {
		if undo, err = r.commit(ctx, now, undoRef, "gopi checkpoint before a restore"); err != nil {
			return nil, "", fmt.Errorf("recording the files before the restore: %w", err)
		}
	}
	cat, err := r.g.catFile(ctx)
	if err != nil {
		return nil, "", err
	}
	defer cat.Close()
	var errs []error
	for _, c := range cs {
		full := native(r.g.top, c.path)
		if c.status == "added" {
			if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("removing %s: %w", c.path, err))
				continue
			}
			r.removeEmptyParents(path.Dir(c.path))
			continue
		}
		data, err := cat.blob(c.old.id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := writeEntry(full, c.old.mode, data); err != nil {
			errs = append(errs, fmt.Errorf("restoring %s: %w", c.path, err))
		}
		delete(r.cache, c.path)
	}
	return described, undo, errors.Join(errs...)
}

// removeEmptyParents removes dir (relative to the top) and its parents
// while they are empty, up to the scope's directory.
func (r *Repo) removeEmptyParents(dir string) {
	for dir != "." && dir != "" && dir != r.prefix {
		if _, inside := relTo(r.prefix, dir); !inside && r.prefix != "" {
			return
		}
		if os.Remove(native(r.g.top, dir)) != nil {
			return // not empty, or gone
		}
		dir = path.Dir(dir)
	}
}

// writeEntry makes name hold data with a git mode: a symbolic link to
// data, or a file with exactly those permission bits.
func writeEntry(name, mode string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	if info, err := os.Lstat(name); err == nil && (info.IsDir() || info.Mode()&fs.ModeSymlink != 0 || mode == modeSymlink) {
		if err := os.RemoveAll(name); err != nil {
			return err
		}
	}
	if mode == modeSymlink {
		return os.Symlink(string(data), name)
	}
	perm := fs.FileMode(0o644)
	if mode == modeExec {
		perm = 0o755
	}
	if err := os.WriteFile(name, data, perm); err != nil {
		return err
	}
	return os.Chmod(name, perm) // an existing file keeps its mode through WriteFile
}

// Prune removes the checkpoints whose refs start with RefPrefix+prefix
// (a session's); their objects go with git's next gc.
func (r *Repo) Prune(ctx context.Context, prefix string) error {
	out, err := r.g.run(ctx, nil, nil, "for-each-ref", "--format=%(refname)", RefPrefix+prefix)
	if err != nil {
		return err
	}
	var in bytes.Buffer
	for _, ref := range strings.Fields(string(out)) {
		fmt.Fprintf(&in, "delete %s\n", ref)
	}
	if in.Len() == 0 {
		return nil
	}
	_, err = r.g.run(ctx, nil, &in, "update-ref", "--stdin")
	return err
}
