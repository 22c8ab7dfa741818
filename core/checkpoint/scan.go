package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// scan lists and hashes the scope's files; write stores their blobs in
// the object database.
func (r *Repo) scan(ctx context.Context, write bool) (state, error) {
	st := state{files: map[string]fileEntry{}, skipped: map[string]bool{}, dirs: map[string]fs.FileMode{}}
	r.loadStats()
	tracked, err := r.g.run(ctx, nil, nil, append([]string{"ls-files", "-z", "-s", "--"}, r.pathspecs()...)...)
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
	others, err := r.g.run(ctx, nil, nil, append([]string{"ls-files", "-z", "-o", "--exclude-standard", "--"}, r.pathspecs()...)...)
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
