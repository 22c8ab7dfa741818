package checkpoint

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
)

// Journal keeps what files held before the agent's own tools changed
// them, for projects outside git: under each checkpoint, the first
// content each file had after it (or that it did not exist), with its
// permission bits, or the target of a link. It cannot see what commands
// change. Everything it writes is private to the user: folders 0700,
// files 0600.
type Journal struct {
	dir  string // blobs/ and records/ live here
	root string // the project's directory, its links followed: paths are relative to it

	// mu guards seen and serialises writes.
	mu   sync.Mutex
	seen map[string]map[string]journalRecord // checkpoint → path → its record
}

// journalRecord is one file's state when a checkpoint's window first
// touched it.
type journalRecord struct {
	Path    string `json:"path"` // relative to the project, slash-separated
	Existed bool   `json:"existed"`
	Blob    string `json:"blob,omitempty"` // sha256 of the content
	Exec    bool   `json:"exec,omitempty"`
	// Perm is a file's permission bits in octal ("600"); "" in records
	// made before the journal kept them.
	Perm string `json:"perm,omitempty"`
	// Link is the target of a path that was a symbolic link.
	Link string `json:"link,omitempty"`
	// TooLarge: the file was over the size limit and was not kept.
	TooLarge bool `json:"tooLarge,omitempty"`
}

// OpenJournal is the journal kept in dir for the project in root.
func OpenJournal(dir, root string) *Journal {
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real // the tools name the files they change with every link followed
	}
	return &Journal{dir: dir, root: root, seen: map[string]map[string]journalRecord{}}
}

func (j *Journal) recordsFile(cp string) string {
	return filepath.Join(j.dir, "records", cp+".jsonl")
}

func (j *Journal) blobFile(sum string) string {
	return filepath.Join(j.dir, "blobs", sum[:2], sum)
}

// Record keeps the content name (an absolute path under the project)
// has now, under checkpoint cp, unless cp already kept it. It reports
// whether this was the checkpoint's first record.
func (j *Journal) Record(cp, name string) (first bool, err error) {
	rel, err := filepath.Rel(j.root, name)
	if err != nil || rel == ".." || len(rel) > 2 && rel[:3] == ".."+string(filepath.Separator) {
		return false, nil // outside the project: not the journal's
	}
	pl, err := openPlacer(j.root)
	if err != nil {
		return false, fmt.Errorf("journal: %w", err)
	}
	defer pl.Close()
	j.mu.Lock()
	defer j.mu.Unlock()
	first, _, err = j.keepPath(pl, cp, filepath.ToSlash(rel), false)
	return first, err
}

// keepPath records what is at rel under checkpoint cp, unless cp has
// it already, and returns the record (nil for what it does not keep: a
// folder, unless dirAbsent records one as no file, a device). first
// says whether it was cp's first record. j.mu is held.
func (j *Journal) keepPath(pl *placer, cp, rel string, dirAbsent bool) (first bool, rec *journalRecord, err error) {
	if j.seen[cp] == nil {
		recs, err := j.records(cp)
		if err != nil {
			return false, nil, err
		}
		j.seen[cp] = map[string]journalRecord{}
		for _, r := range recs {
			j.seen[cp][r.Path] = r
		}
	}
	if r, ok := j.seen[cp][rel]; ok {
		return false, &r, nil
	}
	first = len(j.seen[cp]) == 0
	r := journalRecord{Path: rel}
	info, blocked, err := pl.lstat(rel)
	switch {
	case err != nil:
		return false, nil, fmt.Errorf("journal: %w", err)
	case info == nil || blocked != "":
	case info.Mode()&fs.ModeSymlink != 0:
		if r.Link, err = pl.root.Readlink(osName(rel)); err != nil {
			return false, nil, fmt.Errorf("journal: %w", err)
		}
		r.Existed = true
	case info.IsDir() && dirAbsent:
	case !info.Mode().IsRegular():
		return false, nil, nil
	case info.Size() > DefaultMaxFileSize:
		r.Existed, r.TooLarge = true, true
	default:
		data, err := pl.root.ReadFile(osName(rel))
		if err != nil {
			return false, nil, fmt.Errorf("journal: %w", err)
		}
		perm := info.Mode().Perm()
		r.Existed, r.Exec, r.Perm = true, perm&0o111 != 0, strconv.FormatUint(uint64(perm), 8)
		if r.Blob, err = j.keep(data); err != nil {
			return false, nil, err
		}
	}
	if err := j.append(cp, r); err != nil {
		return false, nil, err
	}
	j.seen[cp][rel] = r
	return first, &r, nil
}

// keep stores data by its hash and returns the hash.
func (j *Journal) keep(data []byte) (string, error) {
	h := sha256.Sum256(data)
	sum := hex.EncodeToString(h[:])
	p := j.blobFile(sum)
	if _, err := os.Stat(p); err == nil {
		return sum, nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("journal: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), sum+".*") // 0600, a name of its own
	if err != nil {
		return "", fmt.Errorf("journal: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("journal: %w", err)
	}
	return sum, nil
}

func (j *Journal) append(cp string, rec journalRecord) error {
	p := j.recordsFile(cp)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	b, _ := json.Marshal(rec)
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

// records reads a checkpoint's records; none when it has no file.
func (j *Journal) records(cp string) ([]journalRecord, error) {
	f, err := os.Open(j.recordsFile(cp))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	var out []journalRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var r journalRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Path != "" {
			out = append(out, r)
		}
	}
	return out, sc.Err()
}

// state is what the files were at the start of the first checkpoint of
// cps (that one, then every later one, oldest first): for each file the
// first record of it.
func (j *Journal) state(cps []string) (map[string]journalRecord, error) {
	want := map[string]journalRecord{}
	for _, cp := range cps {
		recs, err := j.records(cp)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if _, ok := want[r.Path]; !ok {
				want[r.Path] = r
			}
		}
	}
	return want, nil
}

// journalChange is one file whose content differs from its record.
type journalChange struct {
	rec    journalRecord
	status string
	now    []byte // the file's bytes or the link's target
	was    []byte
}

// was is what rec kept: a file's bytes or a link's target.
func (j *Journal) was(r journalRecord) ([]byte, error) {
	switch {
	case !r.Existed:
		return nil, nil
	case r.Link != "":
		return []byte(r.Link), nil
	}
	data, err := os.ReadFile(j.blobFile(r.Blob))
	if err != nil {
		return nil, fmt.Errorf("journal: the kept content of %s: %w", r.Path, err)
	}
	return data, nil
}

// current is what is at p now (info, from pl.lstat): a file's bytes, a
// link's target, nothing for a folder.
func current(pl *placer, p string, info fs.FileInfo) ([]byte, error) {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		t, err := pl.root.Readlink(osName(p))
		return []byte(t), err
	case info.Mode().IsRegular():
		return pl.root.ReadFile(osName(p))
	}
	return nil, nil
}

func (j *Journal) changes(pl *placer, cps []string, withContent bool) ([]journalChange, error) {
	want, err := j.state(cps)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(want))
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []journalChange
	for _, p := range paths {
		r := want[p]
		if r.TooLarge {
			continue
		}
		info, blocked, err := pl.lstat(p)
		if err != nil {
			return nil, fmt.Errorf("journal: %w", err)
		}
		if blocked != "" {
			info = nil // below a link or a file: not there
		}
		was, err := j.was(r)
		if err != nil {
			return nil, err
		}
		var now []byte
		if info != nil {
			if now, err = current(pl, p, info); err != nil {
				return nil, fmt.Errorf("journal: %w", err)
			}
		}
		c := journalChange{rec: r}
		switch {
		case !r.Existed && info == nil:
			continue
		case !r.Existed:
			c.status = "added"
		case info == nil:
			c.status = "deleted"
		case sameAsRecord(r, info, now, was):
			continue
		default:
			c.status = "modified"
		}
		if withContent {
			c.now, c.was = now, was
		}
		out = append(out, c)
	}
	return out, nil
}

// sameAsRecord reports whether what is at a path now (info, now) is what
// r kept (was): the same link, or a file with the same bytes and bits.
func sameAsRecord(r journalRecord, info fs.FileInfo, now, was []byte) bool {
	m := info.Mode()
	if r.Link != "" {
		return m&fs.ModeSymlink != 0 && string(now) == r.Link
	}
	if !m.IsRegular() || string(now) != string(was) {
		return false
	}
	if perm, err := strconv.ParseUint(r.Perm, 8, 32); err == nil {
		return m.Perm() == fs.FileMode(perm)
	}
	return (m.Perm()&0o111 != 0) == r.Exec
}

// Changes says how the files the journal kept under cps differ from
// what they were at the first of them.
func (j *Journal) Changes(cps []string) ([]Change, error) {
	pl, err := openPlacer(j.root)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	defer pl.Close()
	cs, err := j.changes(pl, cps, true)
	if err != nil {
		return nil, err
	}
	out := make([]Change, 0, len(cs))
	for _, c := range cs {
		ch := Change{Path: c.rec.Path, Status: c.status}
		if isBinary(c.was) || isBinary(c.now) {
			ch.Binary = true
		} else {
			ch.Diff = unified(c.rec.Path, string(c.was), string(c.now))
		}
		out = append(out, ch)
	}
	return out, nil
}

// Restore puts the files the journal kept under cps back as they were
// at the first of them: their bytes and permission bits, links as links.
// Unless dryRun, each file it changes, and anything it removes from the
// way, is first kept under undo ("" for none: then nothing in the way is
// removed), so restoring undo reverses it. As for [Repo.Restore], nothing
// outside the project's directory changes and no link is followed.
func (j *Journal) Restore(cps []string, undo string, dryRun bool) ([]Change, error) {
	pl, err := openPlacer(j.root)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	defer pl.Close()
	cs, err := j.changes(pl, cps, true)
	if err != nil {
		return nil, err
	}
	out := make([]Change, 0, len(cs))
	for _, c := range cs {
		out = append(out, Change{Path: c.rec.Path, Status: c.status})
	}
	if dryRun {
		return out, nil
	}
	// keepForUndo keeps what is at p under undo; a folder is kept as no
	// file (what is in it is kept as it is cleared).
	keepForUndo := func(p string) error {
		if undo == "" {
			return errCannotKeep
		}
		j.mu.Lock()
		defer j.mu.Unlock()
		_, rec, err := j.keepPath(pl, undo, p, true)
		switch {
		case err != nil:
			return err
		case rec == nil || rec.TooLarge:
			return errCannotKeep
		}
		return nil
	}
	pl.inTheWay = func(p string, _ fs.FileInfo) error { return keepForUndo(p) }
	pl.dirMode = pl.boundedDirMode
	var errs []error
	var todo []journalChange
	for _, c := range cs {
		if undo != "" {
			if err := keepForUndo(c.rec.Path); err != nil {
				errs = append(errs, fmt.Errorf("restoring %s: %w", c.rec.Path, err))
				continue
			}
		}
		todo = append(todo, c)
	}
	for i := len(todo) - 1; i >= 0; i-- { // what was added goes first, deepest first
		if c := todo[i]; c.status == "added" {
			if err := pl.remove(c.rec.Path); err != nil {
				errs = append(errs, fmt.Errorf("removing %s: %w", c.rec.Path, err))
			}
		}
	}
	for _, c := range todo {
		if c.status == "added" {
			continue
		}
		perm, err := j.perm(pl, c.rec)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		was := c.was
		e := entry{path: c.rec.Path, link: c.rec.Link != "", perm: perm, data: func() ([]byte, error) { return was, nil }}
		if err := pl.put(e); err != nil {
			errs = append(errs, fmt.Errorf("restoring %s: %w", c.rec.Path, err))
		}
	}
	errs = append(errs, pl.settle())
	return out, errors.Join(errs...)
}

// perm is the mode a file comes back with: its recorded bits; for a
// record made before the journal kept them, the file's own bits never
// widened when it is there, else the user's alone.
func (j *Journal) perm(pl *placer, r journalRecord) (fs.FileMode, error) {
	if r.Perm != "" {
		perm, err := strconv.ParseUint(r.Perm, 8, 32)
		if err != nil {
			return 0, fmt.Errorf("journal: %s: its mode %q: %w", r.Path, r.Perm, err)
		}
		return fs.FileMode(perm) & fs.ModePerm, nil
	}
	mode := modeFile
	if r.Exec {
		mode = modeExec
	}
	if info, blocked, err := pl.lstat(r.Path); err == nil && info != nil && blocked == "" && info.Mode().IsRegular() {
		return narrowed(info.Mode(), mode), nil
	}
	return private(mode), nil
}
