package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// The stat cache (what each file looked like when it was last hashed,
// and its blob) is kept beside the index in the index directory, so the
// next process that works in the project hashes only the files changed
// since, as a warm snapshot does. It vouches for facts about files, not
// for the index: two processes may each write it, and whichever wrote
// last is as right as the other. A blob it names that is gone (a gc
// after the checkpoints that held it were pruned) fails the snapshot's
// tree, and the snapshot is taken again with the cache forgotten.
//
// The file is a line naming its format, then one record per file,
// NUL-terminated: size, modification time (ns), inode, git mode and
// blob id, separated by spaces, then the path (which may hold any byte
// but NUL).
const statMagic = "gopi-stat-cache 1\n"

// statFile is where the Repo's stat cache is kept; "" without an index
// directory.
func (r *Repo) statFile() string {
	if r.indexDir == "" {
		return ""
	}
	return r.indexName() + ".stat"
}

// loadStats reads the kept stat cache into the Repo's, once, before its
// first scan. A file that is missing or not understood is ignored: the
// files are hashed.
func (r *Repo) loadStats() {
	if r.statsLoaded {
		return
	}
	r.statsLoaded = true
	name := r.statFile()
	if name == "" || len(r.cache) > 0 {
		return
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return
	}
	rest, ok := bytes.CutPrefix(data, []byte(statMagic))
	if !ok {
		return
	}
	got := map[string]cached{}
	for len(rest) > 0 {
		rec, after, ok := bytes.Cut(rest, []byte{0})
		if !ok {
			return
		}
		rest = after
		f := bytes.SplitN(rec, []byte{' '}, 6)
		if len(f) != 6 {
			return
		}
		size, err1 := strconv.ParseInt(string(f[0]), 10, 64)
		mtime, err2 := strconv.ParseInt(string(f[1]), 10, 64)
		ino, err3 := strconv.ParseUint(string(f[2]), 10, 64)
		mode := string(f[3])
		if err1 != nil || err2 != nil || err3 != nil || mode != modeFile && mode != modeExec || len(f[4]) == 0 {
			return
		}
		got[string(f[5])] = cached{size: size, mtime: mtime, ino: ino, mode: mode, id: string(f[4])}
	}
	r.cache = got
}

// saveStats writes the Repo's stat cache beside its index when it
// changed since it was read or written: through a private temporary
// file renamed over the old one. It is only a cache: a write that fails
// is not the snapshot's failure, and the next process hashes more.
func (r *Repo) saveStats() {
	name := r.statFile()
	if name == "" || !r.statsDirty {
		return
	}
	buf := make([]byte, 0, len(statMagic)+len(r.cache)*96)
	buf = append(buf, statMagic...)
	for p, c := range r.cache {
		buf = strconv.AppendInt(buf, c.size, 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, c.mtime, 10)
		buf = append(buf, ' ')
		buf = strconv.AppendUint(buf, c.ino, 10)
		buf = append(buf, ' ')
		buf = append(buf, c.mode...)
		buf = append(buf, ' ')
		buf = append(buf, c.id...)
		buf = append(buf, ' ')
		buf = append(buf, p...)
		buf = append(buf, 0)
	}
	f, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+"-*") // 0600
	if err != nil {
		return
	}
	_, err = f.Write(buf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return
	}
	r.statsDirty = false
}
