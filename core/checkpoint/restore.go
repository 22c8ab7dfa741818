package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

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
		out, err := r.g.run(ctx, nil, nil, append([]string{"ls-files", "-z", "--"}, r.pathspecs()...)...)
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
