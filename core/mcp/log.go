package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// LogFile is the servers' log in the agent directory (pi's name).
const LogFile = "mcp.log"

// maxLogBytes is the size past which mcp.log moves to mcp.log.1 (pi's
// 5 MiB).
const maxLogBytes = 5 << 20

// ServerLog appends the messages servers send with notifications/message
// to one file (pi's mcp.log in the agent directory), one line per
// message: "<RFC 3339 time> [<server>] <level> <logger>: <data>", later
// lines of a message indented. Several gopi (and pi) processes may write
// the same file, so each message is one append. Writing is best effort:
// a log that cannot be written never fails a server. The file is private
// (0600): servers log what they are asked.
type ServerLog struct {
	path string
	now  func() time.Time

	mu   sync.Mutex // one writer at a time; guards size
	size int64      // -1 until the file was looked at
}

// NewServerLog logs to path; "" logs nothing.
func NewServerLog(path string) *ServerLog {
	return &ServerLog{path: path, now: time.Now, size: -1}
}

// Write appends one message from server.
func (l *ServerLog) Write(server, level, logger string, data any) {
	if l == nil || l.path == "" {
		return
	}
	line := formatLogLine(l.now(), server, level, logger, data)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size < 0 {
		_ = os.MkdirAll(filepath.Dir(l.path), 0o700)
		l.size = fileSize(l.path)
	}
	if l.size > maxLogBytes {
		// Another process may have rotated it in the meantime.
		if fileSize(l.path) > maxLogBytes {
			_ = os.Rename(l.path, l.path+".1")
		}
		l.size = fileSize(l.path)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	n, _ := f.WriteString(line)
	_ = f.Close()
	l.size += int64(n)
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// formatLogLine words one message. data that is not a string is written
// as JSON.
func formatLogLine(t time.Time, server, level, logger string, data any) string {
	if level == "" {
		level = "info"
	}
	var text string
	switch d := data.(type) {
	case string:
		text = d
	default:
		b, err := json.Marshal(d)
		if err != nil {
			text = fmt.Sprint(d)
		} else {
			text = string(b)
		}
	}
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\n    ")
	if logger != "" {
		logger = " " + logger + ":"
	}
	return fmt.Sprintf("%s [%s] %s%s %s\n", t.UTC().Format("2006-01-02T15:04:05.000Z"), server, level, logger, text)
}
