package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
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
	// exclude are the folders below the scope's that it leaves out (see
	// [Options.Exclude]), relative to the top, slash-separated.
	exclude []string
	max     int64
	report  func(error) // see [Options]

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
	// Exclude are folders below the scope's directory (absolute paths)
	// whose files the Repo leaves to another recorder: a snapshot does not
	// record them, and a restore, of any checkpoint, never touches them.
	// Those not below the scope's directory are ignored.
	Exclude []string
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
	r := &Repo{g: g, cwd: real, prefix: prefix, max: DefaultMaxFileSize, indexDir: o.IndexDir, report: o.Report, cache: map[string]cached{}}
	r.exclude = r.excludes(o.Exclude)
	return r, nil
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
		if r.excluded(p) {
			continue // another recorder's now
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
