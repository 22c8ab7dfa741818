package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gopi-dev/gopi/internal/regularfile"
)

// LoadReport says what [Open] found wrong with a file and what it did.
type LoadReport struct {
	// Damaged lists the lines that were skipped: not a JSON object (such
	// as a last line cut mid-write), an entry without an id, or a second
	// header.
	Damaged []LineError
	// Kept lists entries of a known type that did not decode; they stay
	// in the tree as [*UnknownEntry] and are left out of the context.
	Kept []LineError
	// MigratedFrom is the version of a file that was migrated (1 or 2),
	// 0 when the file was current.
	MigratedFrom int
	// Rewritten reports that the migrated file was written back.
	Rewritten bool
	// Fresh reports a file with no usable line at all (empty, or every
	// line damaged): a new session starts at its path, as in pi.
	Fresh bool
}

// LineError is a problem with one line of a session file.
type LineError struct {
	Line int // 1-based
	Err  error
}

func (e LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e LineError) Unwrap() error { return e.Err }

// OK reports a file that loaded without damage.
func (r LoadReport) OK() bool { return len(r.Damaged) == 0 && len(r.Kept) == 0 }

// Open loads the session file at path. Damaged lines are skipped and
// reported, not fatal; a UTF-8 byte order mark before the header is
// skipped. A file with anything in it whose first usable line is not a
// session header (notes, someone else's JSON) fails with [ErrNotSession]
// and is never written, as pi 1.5 refuses it. A version-1 or -2 file is
// migrated and written back as version 3 (dropping damaged lines), as pi
// does. An empty file starts a fresh session at path, also as pi does,
// written once the new conversation is. New sessions made from the store
// (forks) go to the file's directory.
func Open(path string) (*Store, LoadReport, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	s, rep, err := load(path)
	if err != nil {
		return nil, rep, err
	}
	if rep.MigratedFrom != 0 {
		if err := s.replaceWhole(); err != nil {
			return nil, rep, fmt.Errorf("upgrade %s: %w", path, err)
		}
		rep.Rewritten = true
	}
	return s, rep, nil
}

// load reads path into a Store without writing anything.
func load(path string) (*Store, LoadReport, error) {
	defer holdGC()()
	var rep LoadReport
	f, err := regularfile.Open(path)
	if err != nil {
		return nil, rep, fmt.Errorf("open session: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, rep, fmt.Errorf("open session: %w", err)
	}
	raw, err := readLines(f, &rep)
	if err != nil {
		return nil, rep, fmt.Errorf("read session %s: %w", path, err)
	}

	// The header is the first line whose head decodes; its version says
	// whether the entries can be decoded as they are, in the same pass as
	// their heads, or only after a migration.
	var header line
	var head entryHead
	for len(raw) > 0 && header.data == nil {
		l := raw[0]
		raw = raw[1:]
		h, err := decodeHead(l.data)
		if err != nil {
			rep.Damaged = append(rep.Damaged, LineError{l.no, err})
			continue
		}
		header, head = l, h
	}
	if header.data == nil {
		if info.Size() > 0 {
			return nil, rep, fmt.Errorf("%s: %w", path, errNoHeader)
		}
		// pi starts over in an empty file.
		cwd, _ := os.Getwd()
		s := newStore(cwd, Options{})
		s.dir, s.path = filepath.Dir(path), path
		rep.Fresh = true
		return s, rep, nil
	}
	if head.Type != EntrySession || !head.HasID {
		return nil, rep, fmt.Errorf("%s: %w", path, errNoHeader)
	}
	version := 1
	if v := head.Version; len(v) > 0 {
		var n float64
		if json.Unmarshal(v, &n) == nil {
			version = int(n)
		}
	}
	body := raw
	ds := decodeAll(body, version >= CurrentVersion)
	if version < CurrentVersion {
		// Lines whose heads do not decode are left out of the migration
		// (and reported below); the rest are migrated and decoded again.
		lines := make([]line, 0, len(body)+1)
		lines = append(lines, header)
		for i, d := range ds {
			if d.headErr != nil {
				rep.Damaged = append(rep.Damaged, LineError{body[i].no, d.headErr})
			} else {
				lines = append(lines, body[i])
			}
		}
		if err := migrateLines(lines, version); err != nil {
			return nil, rep, fmt.Errorf("migrate %s from version %d: %w", path, version, err)
		}
		rep.MigratedFrom = version
		header, body = lines[0], lines[1:]
		ds = decodeAll(body, true)
	}

	s := &Store{now: time.Now, dir: filepath.Dir(path), path: path}
	s.reset()
	s.byID = make(map[string]int, len(body))
	s.nodes = make([]node, 0, len(body))
	if err := json.Unmarshal(header.data, &s.header); err != nil {
		return nil, rep, fmt.Errorf("%s: header: %w", path, ErrNotSession)
	}
	s.headerRaw = header.data
	lineOf := make([]int, 0, len(body))
	for i, d := range ds {
		l := body[i]
		if d.headErr != nil {
			rep.Damaged = append(rep.Damaged, LineError{l.no, d.headErr})
			continue
		}
		if err := d.head.notEntry(); err != nil {
			rep.Damaged = append(rep.Damaged, LineError{l.no, err})
			continue
		}
		if d.err != nil {
			rep.Kept = append(rep.Kept, LineError{l.no, d.err})
		}
		s.push(node{entry: d.entry, raw: l.data})
		lineOf = append(lineOf, l.no)
	}
	slices.SortStableFunc(rep.Damaged, func(a, b LineError) int { return a.Line - b.Line })
	// pi resumes at the last entry of the file.
	if n := len(s.nodes); n > 0 {
		s.leaf = s.nodes[n-1].entry.Base().ID
	}
	s.decodeContext(lineOf, &rep)
	// The file holds every entry; the next write appends to it.
	s.bound, s.written, s.file, s.size = true, len(s.nodes), info, info.Size()
	return s, rep, nil
}

// gcHold counts the loads under way; while there is one, the garbage
// collector waits.
var gcHold struct {
	sync.Mutex
	n       int
	percent int
}

// holdGC stops garbage collection until the function it returns is
// called. Nearly everything a load allocates is kept (the file's bytes,
// the entries), so collecting while it runs finds almost no garbage and
// costs a third of a fresh process's load time; the collector resumes, with
// its setting as before, once the last load ends. A memory limit
// (GOMEMLIMIT) still applies meanwhile.
func holdGC() (release func()) {
	gcHold.Lock()
	if gcHold.n == 0 {
		gcHold.percent = debug.SetGCPercent(-1)
	}
	gcHold.n++
	gcHold.Unlock()
	return func() {
		gcHold.Lock()
		gcHold.n--
		if gcHold.n == 0 {
			debug.SetGCPercent(gcHold.percent)
		}
		gcHold.Unlock()
	}
}

// decodeContext decodes, on every core, the messages the context at the
// leaf is made of (from the last compaction's first kept entry on), so
// they are ready for the first turn and a message among them that does not
// decode is found now: it is kept as an [*UnknownEntry] and reported, as
// any entry that does not decode. The other messages wait for their first
// use. lineOf holds each node's line number.
func (s *Store) decodeContext(lineOf []int, rep *LoadReport) {
	path := s.pathTo(s.leaf)
	from, _ := contextStart(path)
	var todo []int // node indexes
	for _, e := range path[from:] {
		if _, ok := e.(*MessageEntry); ok {
			todo = append(todo, s.byID[e.Base().ID])
		}
	}
	errs := make([]error, len(todo))
	parallel(len(todo), func(k int) {
		n := &s.nodes[todo[k]]
		me := n.entry.(*MessageEntry)
		if err := me.decodeNow(); err != nil {
			n.entry = &UnknownEntry{Meta: me.Meta, EntryType: EntryMessage, Raw: json.RawMessage(n.raw)}
			errs[k] = fmt.Errorf("message entry: %w", err)
		}
	})
	for k, err := range errs {
		if err != nil {
			rep.Kept = append(rep.Kept, LineError{lineOf[todo[k]], err})
		}
	}
	slices.SortStableFunc(rep.Kept, func(a, b LineError) int { return a.Line - b.Line })
}

// parallel runs fn(0) … fn(n-1), on every core (in contiguous ranges)
// when n is at least parallelFrom.
func parallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), 8)
	if n < parallelFrom || workers < 2 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for start := 0; start < n; start += per {
		end := min(start+per, n)
		wg.Go(func() {
			for i := start; i < end; i++ {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// decoded is one line's head, or why it did not decode (the line is then
// damaged), and its entry, or why that did not decode (it is then kept as
// an UnknownEntry).
type decoded struct {
	head    entryHead
	headErr error
	entry   Entry
	err     error
}

// parallelFrom is the number of lines from which lines are decoded on
// every core: below it, starting the goroutines costs more than it saves.
const parallelFrom = 2048

// decodeAll decodes the lines after the header: each line's head and,
// with withEntries, the entry of a line that is one (not a second header,
// with an id), reading the line once for both.
// A long session is mostly messages, each decoded on its own, so the work
// is split across the cores in contiguous ranges; the caller adds the
// entries in file order.
func decodeAll(lines []line, withEntries bool) []decoded {
	out := make([]decoded, len(lines))
	one := func(i int) {
		l := lines[i]
		d := &out[i]
		if d.head, d.headErr = decodeHead(l.data); d.headErr != nil {
			return
		}
		if !withEntries || d.head.notEntry() != nil {
			return
		}
		d.entry, d.err = decodeEntry(l.data, d.head)
	}
	parallel(len(lines), one)
	return out
}

// line is one line of a session file: its number (from 1) and its bytes.
type line struct {
	no   int
	data []byte
}

// notEntry says why a line after the header is skipped as damaged (a
// second header, an entry without an id), or nil for an entry.
func (h entryHead) notEntry() error {
	if h.Type == EntrySession {
		return errSecondHeader
	}
	if h.ID == "" {
		return errNoID
	}
	return nil
}

// readChunk is how much of a session file is read at a time. Lines are
// kept as slices of these chunks, not copied; a chunk the size of the
// whole file would be one huge zeroed allocation, which stalls the
// garbage collector (it cannot stop the goroutine clearing it).
const readChunk = 1 << 20

// readLines reads r in chunks and splits it into lines, keeping those
// that start like JSON objects as slices of the chunks (a session's lines
// are all kept anyway; their heads are decoded later, on every core) and
// reporting the rest. A byte order mark at the start is skipped.
func readLines(r io.Reader, rep *LoadReport) (lines []line, err error) {
	no := 0
	take := func(b []byte) {
		no++
		if no == 1 {
			b = trimBOM(b)
		}
		data := bytes.TrimSpace(b)
		if len(data) == 0 {
			return
		}
		if data[0] != '{' {
			rep.Damaged = append(rep.Damaged, LineError{no, errNotObject})
			return
		}
		lines = append(lines, line{no: no, data: data})
	}
	var carry []byte // the start of a line the last chunk cut
	for {
		buf := make([]byte, max(readChunk, 2*len(carry)))
		n := copy(buf, carry)
		m, rerr := io.ReadFull(r, buf[n:])
		buf = buf[:n+m]
		eof := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
		if rerr != nil && !eof {
			return nil, rerr
		}
		end := len(buf)
		if !eof {
			end = bytes.LastIndexByte(buf, '\n') + 1
		}
		lines = slices.Grow(lines, bytes.Count(buf[:end], []byte{'\n'})+1)
		for rest := buf[:end]; len(rest) > 0; {
			b := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				b, rest = rest[:i:i], rest[i+1:]
			} else {
				rest = nil
			}
			take(b)
		}
		if eof {
			return lines, nil
		}
		carry = buf[end:]
	}
}

// migrateLines runs [migrate] over the lines, replacing their bytes.
func migrateLines(lines []line, version int) error {
	objs := make([]object, len(lines))
	for i, l := range lines {
		o, err := parseObject(l.data)
		if err != nil {
			return fmt.Errorf("line %d: %w", l.no, err)
		}
		objs[i] = o
	}
	if err := migrate(objs, version); err != nil {
		return err
	}
	for i, o := range objs {
		b, err := o.MarshalJSON()
		if err != nil {
			return err
		}
		lines[i].data = b
	}
	return nil
}

// DefaultDir is where pi keeps the sessions of cwd:
// <agentDir>/sessions/--<cwd without its leading separator, with / \ and :
// turned into ->--. A name longer than a file system allows (a cwd over
// about 250 bytes, where pi 1.5 fails to start) is shortened: see
// [shortDirName].
func DefaultDir(agentDir, cwd string) string {
	p := cwd
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) {
		p = p[1:]
	}
	p = strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(p)
	name := "--" + p + "--"
	if len(name) > maxDirName {
		name = shortDirName(cwd, p)
	}
	return filepath.Join(agentDir, "sessions", name)
}

// maxDirName is the longest file name most file systems take (NAME_MAX,
// 255 bytes on Linux, macOS and Windows).
const maxDirName = 255

// shortDirName names the session directory of a cwd whose pi name would
// be too long: "--", the start of that name (p, cut on a character
// boundary), "-", 32 hex digits of the SHA-256 of the whole cwd and "--",
// 255 bytes in all. Two long cwds with the same start get directories of
// their own, and the name still shows where the sessions come from.
func shortDirName(cwd, p string) string {
	sum := sha256.Sum256([]byte(cwd))
	suffix := "-" + hex.EncodeToString(sum[:16]) + "--"
	keep := maxDirName - len("--") - len(suffix)
	for keep > 0 && !utf8.RuneStart(p[keep]) {
		keep--
	}
	return "--" + p[:keep] + suffix
}
