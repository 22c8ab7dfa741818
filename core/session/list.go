package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/internal/regularfile"
)

// Info describes a session file for a picker or --resume.
type Info struct {
	Path string
	ID   string
	// Cwd is where the session was started ("" for very old files).
	Cwd string
	// Name is the latest session_info name, "" when unset.
	Name string
	// ParentSession is the file this one was forked from.
	ParentSession string
	Created       time.Time
	// Modified is the time of the last user or assistant message, else
	// the header's time, else the file's modification time.
	Modified time.Time
	// MessageCount counts message entries of every role.
	MessageCount int
	// FirstMessage is the text of the first user message with text; ""
	// when there is none.
	FirstMessage string
}

// List describes the sessions in dir (one cwd's directory), most recently
// active first. A missing dir is an empty list; unreadable files and
// files that are not sessions are skipped.
func List(dir string) ([]Info, error) {
	out, err := listDir(dir)
	if err != nil {
		return nil, err
	}
	sortInfos(out)
	return out, nil
}

// ListAll describes the sessions of every cwd under sessionsDir
// (<agentDir>/sessions), most recently active first.
func ListAll(sessionsDir string) ([]Info, error) {
	des, err := os.ReadDir(sessionsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		infos, err := listDir(filepath.Join(sessionsDir, de.Name()))
		if err != nil {
			continue
		}
		out = append(out, infos...)
	}
	sortInfos(out)
	return out, nil
}

func sortInfos(infos []Info) {
	slices.SortStableFunc(infos, func(a, b Info) int { return b.Modified.Compare(a.Modified) })
}

func listDir(dir string) ([]Info, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, de := range des {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".jsonl") {
			continue
		}
		if info, ok := readInfo(filepath.Join(dir, de.Name())); ok {
			out = append(out, info)
		}
	}
	return out, nil
}

// readInfo streams one file, holding a single line at a time.
func readInfo(path string) (Info, bool) {
	f, err := regularfile.Open(path)
	if err != nil {
		return Info{}, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Info{}, false
	}

	acc := infoScan{info: Info{Path: path}}
	br := bufio.NewReaderSize(f, 64<<10)
	var buf []byte
	for first := true; ; first = false {
		var rerr error
		buf, rerr = readLine(br, buf[:0])
		data := buf
		if first {
			data = trimBOM(data)
		}
		if !acc.line(bytes.TrimSpace(data)) {
			return Info{}, false
		}
		if rerr != nil {
			break
		}
	}
	if !acc.headerSeen {
		return Info{}, false
	}
	info, h := acc.info, acc.header
	info.ID, info.Cwd, info.ParentSession = h.ID, h.Cwd, h.ParentSession
	if t, err := time.Parse(time.RFC3339Nano, h.Timestamp); err == nil {
		info.Created = t
	}
	switch {
	case acc.lastActivity > 0:
		info.Modified = time.UnixMilli(acc.lastActivity)
	case !info.Created.IsZero():
		info.Modified = info.Created
	default:
		info.Modified = st.ModTime()
	}
	return info, true
}

// infoScan accumulates an [Info] line by line.
type infoScan struct {
	info         Info
	headerSeen   bool
	header       Header
	lastActivity int64
}

// line takes one trimmed line; false means the file is not a session.
func (a *infoScan) line(data []byte) bool {
	if len(data) == 0 || data[0] != '{' {
		return true // blank or damaged: pi skips it
	}
	if !a.headerSeen {
		var h struct {
			Type EntryType `json:"type"`
			Header
		}
		if json.Unmarshal(data, &h) != nil {
			return true
		}
		if h.Type != EntrySession {
			return false
		}
		a.headerSeen, a.header = true, h.Header
		return true
	}
	var e struct {
		Type      EntryType `json:"type"`
		Timestamp string    `json:"timestamp"`
		Name      *string   `json:"name"`
		Message   *struct {
			Role      llm.Role        `json:"role"`
			Content   json.RawMessage `json:"content"`
			Timestamp *float64        `json:"timestamp"`
		} `json:"message"`
	}
	if json.Unmarshal(data, &e) != nil {
		return true
	}
	switch e.Type {
	case EntrySessionInfo:
		a.info.Name = ""
		if e.Name != nil {
			a.info.Name = strings.TrimSpace(*e.Name)
		}
	case EntryMessage:
		a.info.MessageCount++
		m := e.Message
		if m == nil || m.Content == nil || (m.Role != llm.RoleUser && m.Role != llm.RoleAssistant) {
			return true
		}
		if m.Timestamp != nil {
			a.lastActivity = max(a.lastActivity, int64(*m.Timestamp))
		} else if t := parseTimeMillis(e.Timestamp); t != 0 {
			a.lastActivity = max(a.lastActivity, t)
		}
		if a.info.FirstMessage == "" && m.Role == llm.RoleUser {
			var cs llm.Contents
			if json.Unmarshal(m.Content, &cs) == nil {
				a.info.FirstMessage = cs.JoinText(" ") // spaces, as pi's session list does
			}
		}
	}
	return true
}

// readLine appends the next line (without its newline) to buf; the error
// is io.EOF after the last line.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == nil {
			buf = buf[:len(buf)-1]
		}
		return buf, err
	}
}

// MostRecent returns the session file in dir modified last (by file
// time), or "" when there is none: what --continue resumes.
func MostRecent(dir string) (string, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var best string
	var bestTime time.Time
	for _, de := range des {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".jsonl") {
			continue
		}
		p := filepath.Join(dir, de.Name())
		if !hasHeader(p) {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			continue
		}
		if best == "" || fi.ModTime().After(bestTime) {
			best, bestTime = p, fi.ModTime()
		}
	}
	return best, nil
}

// IsSessionFile reports whether path is a regular file whose first line
// is a session header.
func IsSessionFile(path string) bool { return hasHeader(path) }

// maxHeaderScan bounds how much of a file readHeader reads for its first
// line, as pi 1.5 bounds it: a header holds the cwd, which may be long.
const maxHeaderScan = 1 << 20

// hasHeader checks the first line of a file, after a byte order mark.
func hasHeader(path string) bool {
	_, ok := readHeader(path)
	return ok
}

// readHeader reads the first line of the file at path (after a byte order
// mark) as a session header; ok when it is one: type "session" and an id
// member, which may be empty.
func readHeader(path string) (Header, bool) {
	f, err := regularfile.Open(path)
	if err != nil {
		return Header{}, false
	}
	defer f.Close()
	first, err := readLine(bufio.NewReader(io.LimitReader(f, maxHeaderScan)), nil)
	if err != nil && err != io.EOF {
		return Header{}, false
	}
	var h struct {
		Type EntryType `json:"type"`
		ID   *string   `json:"id"`
		Header
	}
	if json.Unmarshal(trimBOM(first), &h) != nil || h.Type != EntrySession || h.ID == nil {
		return Header{}, false
	}
	h.Header.ID = *h.ID
	return h.Header, true
}
