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
	report func(error) // see [Options]

	// mu serialises snapshots and restores, and guards the fields below.
	mu sync.Mutex
	// indexDir is [Options.IndexDir] until it proves unusable: then ""
	// and the index is a temporary one.
	indexDir string

	cache map[string]cached // by path relative to the top
	// statsLoaded: the kept stat cache was read (see statcache.go);
	// statsDirty: cache changed since it was read or written.
	statsLoaded, statsDirty bool
	// index is the file of the Repo's own index ("" before the first
	// snapshot), indexed what it holds, indexSig the file as the Repo
	// last saw it.
	index    string
	indexed  map[string]fileEntry
	indexSig indexSig
}

// Options are a Repo's settings.
type Options struct {
	// IndexDir is a folder of the user's alone (the agent directory's
	// [IndexDir]) where the Repo keeps the index it builds snapshots in,
	// one per repository and scope, so the next process starts from it.
	// "" keeps it in a temporary folder of the user's alone that Close
	// (or [RemoveTemporaryIndexes]) removes; so does an IndexDir that
	// cannot be used (a file where a folder must be, no rights).
	IndexDir string
	// Report hears once that IndexDir could not be used and a temporary
	// index is kept instead; nil says nothing.
	Report func(error)
}

// cached is what a file looked like when it was last hashed.
type cached struct {
	size  int64
	mtime int64
	ino   uint64
	mode  string
	id    string
	perm  fs.FileMode // as just seen: not part of what the cache vouches for
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
func Open(ctx context.Context, dir string, o Options) (*Repo, error) {
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
	return &Repo{g: g, cwd: real, prefix: prefix, max: DefaultMaxFileSize, indexDir: o.IndexDir, report: o.Report, cache: map[string]cached{}}, nil
}

// state is the scope's files as a snapshot sees them.
type state struct {
	files map[string]fileEntry // recorded, by path relative to the top
	// skipped are files present but not recorded (too large, LFS): a
	// restore leaves them alone.
	skipped map[string]bool
	// dirs are the permission bits of the folders that hold the files,
	// below the scope's; perms, of a checkpoint read back, the table of
	// its files' and folders' bits (nil when it recorded none).
	dirs  map[string]fs.FileMode
	perms *permTable
}

type fileEntry struct {
	mode string
	id   string
	// perm is a file's permission bits when known: permKnown (a link's
	// are not, nor those of a checkpoint made before gopi recorded them).
	perm      fs.FileMode
	permKnown bool
}

// sameBlob reports whether e and o hold the same bytes as the same git
// mode.
func (e fileEntry) sameBlob(o fileEntry) bool { return e.mode == o.mode && e.id == o.id }

// same reports whether e and o are the same file: bytes, git mode and,
// where both are known, permission bits.
func (e fileEntry) same(o fileEntry) bool {
	return e.sameBlob(o) && (!e.permKnown || !o.permKnown || e.perm == o.perm)
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
	st := state{files: map[string]fileEntry{}, skipped: map[string]bool{}, dirs: map[string]fs.FileMode{}}
	r.loadStats()
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
	// realDir says whether dir is a real folder down from the scope's: a
	// file listed below a link (git still lists a tracked file whose
	// folder became a link) is not there, and is never read through it.
	realDirs := map[string]bool{}
	var realDir func(dir string) bool
	realDir = func(dir string) bool {
		if dir == r.prefix || dir == "" {
			return true
		}
		ok, seen := realDirs[dir]
		if seen {
			return ok
		}
		if ok = realDir(parentOf(dir)); ok {
			info, err := os.Lstat(native(r.g.top, dir))
			if ok = err == nil && info.IsDir(); ok {
				st.dirs[dir] = info.Mode().Perm()
			}
		}
		realDirs[dir] = ok
		return ok
	}
	var toHash []string
	var toHashInfo []cached
	for _, p := range paths {
		if !realDir(parentOf(p)) {
			continue
		}
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
			st.files[p] = fileEntry{mode: modeSymlink, id: id}
		case m.IsRegular():
			if info.Size() > r.max {
				st.skipped[p] = true
				continue
			}
			mode := modeFile
			if m.Perm()&0o111 != 0 {
				mode = modeExec
			}
			c := cached{size: info.Size(), mtime: info.ModTime().UnixNano(), ino: inode(info), mode: mode, perm: m.Perm()}
			if old, ok := r.cache[p]; ok && old.size == c.size && old.mtime == c.mtime && old.ino == c.ino && old.mode == c.mode {
				st.files[p] = fileEntry{mode: mode, id: old.id, perm: c.perm, permKnown: true}
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
				r.statsDirty = true
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
				r.statsDirty = true
				continue
			}
			kept, keptInfo = append(kept, p), append(keptInfo, toHashInfo[i])
		}
		toHash, toHashInfo = kept, keptInfo
	}
	if len(toHash) > 0 {
		ids, err := r.hashPaths(ctx, toHash, write)
		if err != nil && ctx.Err() == nil {
			// git stops at the first file it cannot read (a 0000 key,
			// a file another user owns): those are left out, and left
			// alone, as large ones are, and the rest is hashed again.
			if toHash, toHashInfo = r.readable(toHash, toHashInfo, st.skipped); len(toHash) > 0 {
				ids, err = r.hashPaths(ctx, toHash, write)
			} else {
				ids, err = nil, nil
			}
		}
		if err != nil {
			return st, err
		}
		for i, p := range toHash {
			c := toHashInfo[i]
			c.id = ids[i]
			st.files[p] = fileEntry{mode: c.mode, id: c.id, perm: c.perm, permKnown: true}
			// A file changed within the last moments may change again
			// without its size or time showing it (git's "racily
			// clean" files): it is hashed again next time.
			if write && started.Sub(time.Unix(0, c.mtime)) > racyWindow {
				r.cache[p] = c
				r.statsDirty = true
			}
		}
	}
	return st, nil
}

// readable are the paths (and their infos) that can be opened for
// reading; those that cannot go into skipped, except those gone since
// they were listed, which are not there at all.
func (r *Repo) readable(paths []string, infos []cached, skipped map[string]bool) ([]string, []cached) {
	keptP, keptI := paths[:0], infos[:0]
	for i, p := range paths {
		if err := canRead(native(r.g.top, p)); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				skipped[p] = true
			}
			continue
		}
		keptP, keptI = append(keptP, p), append(keptI, infos[i])
	}
	return keptP, keptI
}

// racyWindow is how old a file's modification must be for its hash to
// be reused on the strength of its size and time alone.
const racyWindow = 2 * time.Second

// parentOf is the folder of p (slash-separated), "" at the top.
func parentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

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
	var listed []int // paths[i] for each line of in
	ids := make([]string, len(paths))
	for i, p := range paths {
		if strings.ContainsRune(p, '\n') {
			// --stdin-paths reads lines: such a name is hashed alone.
			data, err := os.ReadFile(native(r.g.top, p))
			if err != nil {
				return nil, fmt.Errorf("checkpoint: %w", err)
			}
			if ids[i], err = r.hashBytes(ctx, data, write); err != nil {
				return nil, err
			}
			continue
		}
		in.WriteString(p)
		in.WriteByte('\n')
		listed = append(listed, i)
	}
	if len(listed) == 0 {
		return ids, nil
	}
	out, err := r.g.run(ctx, nil, &in, args...)
	if err != nil {
		return nil, err
	}
	got := strings.Fields(string(out))
	if len(got) != len(listed) {
		return nil, fmt.Errorf("checkpoint: git hash-object gave %d ids for %d files", len(got), len(listed))
	}
	for k, i := range listed {
		ids[i] = got[k]
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
// [RefPrefix]) and returns its id. The message is subject, then the
// permission bits of st's files and folders (see perms.go).
func (r *Repo) commit(ctx context.Context, st state, ref, subject string) (string, error) {
	tree, err := r.writeTree(ctx, st)
	if err != nil {
		return "", err
	}
	message := buildPerms(st.files, st.dirs).message(subject)
	id, err := r.g.run(ctx, []string{
		"GIT_AUTHOR_NAME=gopi", "GIT_AUTHOR_EMAIL=gopi@localhost",
		"GIT_COMMITTER_NAME=gopi", "GIT_COMMITTER_EMAIL=gopi@localhost",
	}, strings.NewReader(message), "commit-tree", tree, "-F", "-")
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
// the Repo's own and outlives the call (see openIndex): the next
// snapshot only updates the entries that changed, and git rewrites only
// the trees above them. When it fails, the index is built anew next
// time.
func (r *Repo) writeTree(ctx context.Context, st state) (string, error) {
	done, err := r.openIndex(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	tree, err := r.updateIndex(ctx, st)
	if err != nil {
		r.dropIndex()
		return "", err
	}
	r.saveStats()
	return tree, nil
}

func (r *Repo) updateIndex(ctx context.Context, st state) (string, error) {
	var in bytes.Buffer
	for p, e := range st.files {
		if !r.indexed[p].sameBlob(e) {
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
	if err := r.wroteIndex(); err != nil {
		return "", err
	}
	return strings.TrimSpace(string(tree)), nil
}

// zeroID is the null object id of id's length.
func zeroID(id string) string { return strings.Repeat("0", len(id)) }

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
		r.statsDirty = true
		if st, err = r.scan(ctx, true); err != nil {
			return "", err
		}
		id, err = r.commit(ctx, st, ref, "gopi checkpoint")
	}
	return id, err
}

// recorded is a checkpoint's files, with the permission bits its
// message keeps.
func (r *Repo) recorded(ctx context.Context, commit string) (state, error) {
	out, err := r.g.run(ctx, nil, nil, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return state{}, fmt.Errorf("checkpoint %s: %w", commit, err)
	}
	raw, err := r.g.run(ctx, nil, nil, "cat-file", "commit", commit)
	if err != nil {
		return state{}, fmt.Errorf("checkpoint %s: %w", commit, err)
	}
	perms, err := parsePerms(raw)
	if err != nil {
		return state{}, fmt.Errorf("checkpoint %s: %w", commit, err)
	}
	st := state{files: map[string]fileEntry{}, perms: perms}
	for _, line := range splitZ(out) {
		meta, p, ok := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[1] != "blob" {
			continue
		}
		e := fileEntry{mode: f[0], id: f[2]}
		if perms != nil && e.mode != modeSymlink {
			e.perm, e.permKnown = perms.fileMode(p, e.mode), true
		}
		st.files[p] = e
	}
	return st, nil
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
		case !o.same(e):
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
	return r.describe(ctx, r.changes(old.files, now), true)
}

// scoped is p (relative to the top) relative to the scope's directory.
func (r *Repo) scoped(p string) string {
	rel, _ := relTo(r.prefix, p)
	return rel
}

// topRel is p (relative to the scope's directory) relative to the top.
func (r *Repo) topRel(p string) string {
	if r.prefix == "" {
		return p
	}
	return r.prefix + "/" + p
}

// describe words changes for a client, with diffs when withDiff.
func (r *Repo) describe(ctx context.Context, cs []change, withDiff bool) ([]Change, error) {
	out := make([]Change, 0, len(cs))
	var cat *catFile
	var root *os.Root
	if withDiff && len(cs) > 0 {
		var err error
		if cat, err = r.g.catFile(ctx); err != nil {
			return nil, err
		}
		defer cat.Close()
		if root, err = os.OpenRoot(r.cwd); err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		defer root.Close()
	}
	for _, c := range cs {
		rel := r.scoped(c.path)
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
				if c.cur.mode == modeSymlink {
					t, _ := root.Readlink(osName(rel))
					after = []byte(t)
				} else if after, err = root.ReadFile(osName(rel)); err != nil {
					return nil, fmt.Errorf("checkpoint: %w", err)
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
// added since are removed, deleted ones come back, links as links. Files a
// snapshot leaves out (ignored, too large, LFS, nested repositories) are
// left alone. Unless dryRun, the files as they were just before are
// recorded first under undoRef ("" for none) and that commit is returned.
// A dry run changes nothing and returns what the restore would do.
//
// Nothing outside the scope's directory changes: every change goes
// through an [os.Root] of it, and a link that lies where a file or folder
// must go is removed as a link, never followed.
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
	cs := r.changes(old.files, now)
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
	pl, err := openPlacer(r.cwd)
	if err != nil {
		return nil, "", err
	}
	defer pl.Close()
	cat, err := r.g.catFile(ctx)
	if err != nil {
		return nil, "", err
	}
	defer cat.Close()
	return described, undo, r.restore(ctx, pl, cat, old, now, cs)
}

// restore makes the changed files cs what old recorded: first what was
// added since goes, deepest first, with the folders only it filled; then
// each file or link comes back, what lies in its way removed (a file or
// link where one of its folders must be, a folder where it must be).
// Something in the way goes only when now, the undo checkpoint, recorded
// it.
func (r *Repo) restore(ctx context.Context, pl *placer, cat *catFile, old, now state, cs []change) error {
	pl.inTheWay = func(p string, _ fs.FileInfo) error {
		if _, ok := now.files[r.topRel(p)]; ok {
			return nil
		}
		return errNotRecorded
	}
	pl.dirMode = func(p string) fs.FileMode {
		if old.perms != nil {
			return old.perms.dirMode(r.topRel(p))
		}
		return pl.boundedDirMode(p)
	}
	var puts []string
	for _, c := range cs {
		if c.status != "added" {
			puts = append(puts, r.scoped(c.path))
		}
	}
	keep := ancestors(puts)
	var errs []error
	for i := len(cs) - 1; i >= 0; i-- {
		if cs[i].status != "added" {
			continue
		}
		p := r.scoped(cs[i].path)
		if err := pl.remove(p); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", p, err))
			continue
		}
		pl.pruneEmpty(parent(p), keep)
	}
	var tracked map[string]bool
	for _, c := range cs {
		if c.status == "added" {
			continue
		}
		p := r.scoped(c.path)
		id := c.old.id
		e := entry{path: p, link: c.old.mode == modeSymlink, perm: c.old.perm, data: func() ([]byte, error) { return cat.blob(id) }}
		if !e.link && !c.old.permKnown {
			var err error
			if e.perm, err = r.unknownPerm(ctx, pl, c, &tracked); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := pl.put(e); err != nil {
			errs = append(errs, fmt.Errorf("restoring %s: %w", p, err))
		}
		delete(r.cache, c.path)
		r.statsDirty = true
	}
	errs = append(errs, pl.settle())
	return errors.Join(errs...)
}

// unknownPerm is the mode of a file that a checkpoint made before gopi
// recorded permission bits brings back: the file's own, never widened
// (see narrowed), when it is there; git's when the user's index tracks
// it; private otherwise.
func (r *Repo) unknownPerm(ctx context.Context, pl *placer, c change, tracked *map[string]bool) (fs.FileMode, error) {
	if info, blocked, err := pl.lstat(r.scoped(c.path)); err == nil && info != nil && blocked == "" && info.Mode().IsRegular() {
		return narrowed(info.Mode(), c.old.mode), nil
	}
	if *tracked == nil {
		out, err := r.g.run(ctx, nil, nil, "ls-files", "-z", "--", r.pathspec())
		if err != nil {
			return 0, err
		}
		*tracked = map[string]bool{}
		for _, p := range splitZ(out) {
			(*tracked)[p] = true
		}
	}
	switch {
	case !(*tracked)[c.path]:
		return private(c.old.mode), nil
	case c.old.mode == modeExec:
		return 0o755, nil
	default:
		return 0o644, nil
	}
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
