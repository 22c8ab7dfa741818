package session

// How a session file is written.
//
// A session file only grows. Every write appends whole lines, in one
// write call, to the file opened with O_APPEND, while holding an
// exclusive lock on it (flock). Several processes can therefore write one
// file (two gopi on the same --session, or gopi and pi) and none loses or
// cuts a line of another: each appends after whatever is there.
//
// Holding the lock, the writer looks at the file before it appends:
//
//   - empty (just created, or emptied): the header and every entry go in,
//     so a file removed while gopi runs comes back whole;
//   - the file this store last wrote, no shorter than it left it: the
//     entries not written yet go in, on a fresh line if the file ends in
//     a cut one;
//   - any other file (another process created it first, or it was
//     replaced): unless its first line is a session header, nothing is
//     written and the write fails with ErrNotSession; otherwise the
//     entries whose ids it lacks go in. A second process's conversation
//     thus becomes another root of the same tree, after the first's.
//
// A file gopi creates is 0600 and a directory 0700 (a session holds what
// the agent read); an existing file or directory keeps its mode.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/gopi-dev/gopi/internal/atomicfile"
	"github.com/gopi-dev/gopi/internal/regularfile"
)

const (
	filePerm fs.FileMode = 0o600
	dirPerm  fs.FileMode = 0o700
)

// persist writes what the file lacks, once the session has its file or
// its first assistant message.
func (s *Store) persist() error {
	if s.path == "" || (!s.bound && !s.hasAssistant) {
		return nil
	}
	return s.sync()
}

// Unsaved reports whether the file lacks entries the store holds: a write
// failed (a full disk, a removed directory) and no later write has made
// up for it yet. Every later append retries.
func (s *Store) Unsaved() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unsavedLocked()
}

func (s *Store) unsavedLocked() bool {
	return s.path != "" && (s.bound || s.hasAssistant) && s.written < len(s.nodes)
}

// Save writes what the file lacks (see Unsaved); nil when there was
// nothing to write or the write worked.
func (s *Store) Save() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.unsavedLocked() {
		return nil
	}
	return s.sync()
}

// sync appends to the file what it lacks of the session (see the top of
// this file).
func (s *Store) sync() error {
	f, info, err := openLocked(s.path)
	if err != nil {
		s.file = nil
		return fmt.Errorf("write session: %w", err)
	}
	buf, err := s.missing(f, info)
	if err == nil && len(buf) > 0 {
		_, err = f.Write(buf)
	}
	size := info.Size() + int64(len(buf))
	// Closing the file releases the lock.
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// What the file holds now is not known: the next write reads it.
		s.file = nil
		return fmt.Errorf("write session: %w", err)
	}
	s.bound, s.written, s.file, s.size = true, len(s.nodes), info, size
	return nil
}

// missing is what to append to f (locked, described by info) so it holds
// the whole session.
func (s *Store) missing(f *os.File, info fs.FileInfo) ([]byte, error) {
	size := info.Size()
	if size == 0 {
		return s.contents()
	}
	from := s.written
	var have map[string]bool
	if s.file == nil || !os.SameFile(info, s.file) || size < s.size {
		ids, err := fileIDs(io.NewSectionReader(f, 0, size))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.path, err)
		}
		from, have = 0, ids
	}
	var b []byte
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return nil, err
	}
	if last[0] != '\n' {
		b = append(b, '\n') // after a line cut mid-write
	}
	start := len(b)
	for _, n := range s.nodes[from:] {
		if have[n.entry.Base().ID] {
			continue
		}
		line, err := lineOf(n)
		if err != nil {
			return nil, fmt.Errorf("encode %s entry %s: %w", n.entry.Type(), n.entry.Base().ID, err)
		}
		b = append(append(b, line...), '\n')
	}
	if len(b) == start {
		return nil, nil
	}
	return b, nil
}

// contents is the whole file: the header and every entry.
func (s *Store) contents() ([]byte, error) {
	var b []byte
	h := s.headerRaw
	if h == nil {
		var err error
		if h, err = json.Marshal(s.header); err != nil {
			return nil, fmt.Errorf("encode session header: %w", err)
		}
	}
	b = append(append(b, h...), '\n')
	for _, n := range s.nodes {
		line, err := lineOf(n)
		if err != nil {
			return nil, fmt.Errorf("encode %s entry %s: %w", n.entry.Type(), n.entry.Base().ID, err)
		}
		b = append(append(b, line...), '\n')
	}
	return b, nil
}

// replaceWhole writes the file again from the header on, in one step
// (a migrated file), holding the lock on the file it replaces.
func (s *Store) replaceWhole() error {
	data, err := s.contents()
	if err != nil {
		return err
	}
	f, _, err := openLocked(s.path)
	if err != nil {
		return fmt.Errorf("write session: %w", err)
	}
	defer f.Close()
	if err := atomicfile.Write(s.path, data, ".session-*.tmp"); err != nil {
		return fmt.Errorf("write session: %w", err)
	}
	info, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("write session: %w", err)
	}
	s.bound, s.written, s.file, s.size = true, len(s.nodes), info, info.Size()
	return nil
}

// fileIDs checks that r is a session file (its first usable line is a
// session header) and returns the ids of its entries.
func fileIDs(r io.Reader) (map[string]bool, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	ids := map[string]bool{}
	header := false
	var buf []byte
	for first := true; ; first = false {
		var err error
		buf, err = readLine(br, buf[:0])
		data := buf
		if first {
			data = trimBOM(data)
		}
		if data = bytes.TrimSpace(data); len(data) > 0 && data[0] == '{' {
			if h, herr := decodeHead(data); herr == nil {
				switch {
				case header:
					if h.ID != "" {
						ids[h.ID] = true
					}
				case h.Type != EntrySession || !h.HasID:
					return nil, errNoHeader
				default:
					header = true
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if !header {
		return nil, errNoHeader
	}
	return ids, nil
}

// maxReopen bounds how often openLocked opens the path again because it
// was removed or replaced while waiting for the lock.
const maxReopen = 10

// openLocked opens path for appending, creating it (and its directory)
// if missing, and locks it. The file it returns is the one path names
// once the lock is held: a file removed or replaced meanwhile is opened
// again. A path that is not a regular file is refused before it is
// opened.
func openLocked(path string) (*os.File, fs.FileInfo, error) {
	for range maxReopen {
		if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() {
			return nil, nil, fmt.Errorf("%s is %s: %w", path, regularfile.Kind(info.Mode()), regularfile.ErrNotRegular)
		}
		f, err := openAppend(path)
		if errors.Is(err, fs.ErrNotExist) {
			// The directory is gone: make it again.
			if err = os.MkdirAll(filepath.Dir(path), dirPerm); err == nil {
				f, err = openAppend(path)
			}
		}
		if err != nil {
			return nil, nil, err
		}
		// Described after the lock: the size counts every line written
		// before. What was opened is checked then too (the path may have
		// changed since the Stat above); nothing is written before.
		info, err := lockAndStat(f)
		if err == nil && !info.Mode().IsRegular() {
			err = fmt.Errorf("%s is %s: %w", path, regularfile.Kind(info.Mode()), regularfile.ErrNotRegular)
		}
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		if now, err := os.Stat(path); err == nil && os.SameFile(info, now) {
			return f, info, nil
		}
		f.Close()
	}
	return nil, nil, fmt.Errorf("%s %w %d times while gopi waited to write it", path, ErrReplaced, maxReopen)
}

func lockAndStat(f *os.File) (fs.FileInfo, error) {
	if err := lockFile(f); err != nil {
		return nil, err
	}
	return f.Stat()
}

func openAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, filePerm)
}

// bom is the UTF-8 byte order mark some editors put at the start of a file.
var bom = []byte("\xef\xbb\xbf")

// trimBOM drops a byte order mark from the start of a file's first line.
func trimBOM(b []byte) []byte { return bytes.TrimPrefix(b, bom) }
