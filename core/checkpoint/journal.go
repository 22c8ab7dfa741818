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
	"sync"
)

// Journal keeps what files held before the agent's own tools changed
// them, for projects outside git: under each checkpoint, the first
// content each file had after it (or that it did not exist). It cannot
// see what commands change. Everything it writes is private to the user.
type Journal struct {
	dir  string // blobs/ and records/ live here
	root string // the project's directory: paths are relative to it

	// mu guards seen and serialises writes.
	mu   sync.Mutex
	seen map[string]map[string]bool // checkpoint → paths recorded
}

// journalRecord is one file's state when a checkpoint's window first
// touched it.
type journalRecord struct {
	Path    string `json:"path"` // relative to the project, slash-separated
	Existed bool   `json:"existed"`
	Blob    string `json:"blob,omitempty"` // sha256 of the content
	Exec    bool   `json:"exec,omitempty"`
	// TooLarge: the file was over the size limit and was not kept.
	TooLarge bool `json:"tooLarge,omitempty"`
}

// OpenJournal is the journal kept in dir for the project in root.
func OpenJournal(dir, root string) *Journal {
	return &Journal{dir: dir, root: root, seen: map[string]map[string]bool{}}
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
	rel = filepath.ToSlash(rel)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.seen[cp] == nil {
		recs, err := j.records(cp)
		if err != nil {
			return false, err
		}
		j.seen[cp] = map[string]bool{}
		for _, r := range recs {
			j.seen[cp][r.Path] = true
		}
	}
	if j.seen[cp][rel] {
		return false, nil
	}
	first = len(j.seen[cp]) == 0
	rec := journalRecord{Path: rel}
	info, err := os.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, fmt.Errorf("journal: %w", err)
	case !info.Mode().IsRegular():
		return false, nil // links and devices are not the file tools' to change
	case info.Size() > DefaultMaxFileSize:
		rec.Existed, rec.TooLarge = true, true
	default:
		data, err := os.ReadFile(name)
		if err != nil {
			return false, fmt.Errorf("journal: %w", err)
		}
		rec.Existed, rec.Exec = true, info.Mode().Perm()&0o111 != 0
		if rec.Blob, err = j.keep(data); err != nil {
			return false, err
		}
	}
	if err := j.append(cp, rec); err != nil {
		return false, err
	}
	j.seen[cp][rel] = true
	return first, nil
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
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return "", fmt.Errorf("journal: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
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
	now    []byte
	was    []byte
}

func (j *Journal) changes(cps []string, withContent bool) ([]journalChange, error) {
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
		now, err := os.ReadFile(native(j.root, p))
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("journal: %w", err)
		}
		var was []byte
		if r.Existed {
			if was, err = os.ReadFile(j.blobFile(r.Blob)); err != nil {
				return nil, fmt.Errorf("journal: the kept content of %s: %w", p, err)
			}
		}
		c := journalChange{rec: r}
		switch {
		case !r.Existed && exists:
			c.status = "added"
		case r.Existed && !exists:
			c.status = "deleted"
		case r.Existed && exists:
			info, _ := os.Stat(native(j.root, p))
			if string(now) == string(was) && (info.Mode().Perm()&0o111 != 0) == r.Exec {
				continue
			}
			c.status = "modified"
		default:
			continue
		}
		if withContent {
			c.now, c.was = now, was
		}
		out = append(out, c)
	}
	return out, nil
}

// Changes says how the files the journal kept under cps differ from
// what they were at the first of them.
func (j *Journal) Changes(cps []string) ([]Change, error) {
	cs, err := j.changes(cps, true)
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
// at the first of them. Unless dryRun, each file it changes is first
// kept under undo ("" for none), so restoring undo reverses it.
func (j *Journal) Restore(cps []string, undo string, dryRun bool) ([]Change, error) {
	cs, err := j.changes(cps, true)
	if err != nil {
		return nil, err
	}
	out := make([]Change, 0, len(cs))
	var errs []error
	for _, c := range cs {
		out = append(out, Change{Path: c.rec.Path, Status: c.status})
		if dryRun {
			continue
		}
		full := native(j.root, c.rec.Path)
		if undo != "" {
			if _, err := j.Record(undo, full); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if c.status == "added" {
			if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("removing %s: %w", c.rec.Path, err))
			}
			continue
		}
		mode := modeFile
		if c.rec.Exec {
			mode = modeExec
		}
		if err := writeEntry(full, mode, c.was); err != nil {
			errs = append(errs, fmt.Errorf("restoring %s: %w", c.rec.Path, err))
		}
	}
	return out, errors.Join(errs...)
}
