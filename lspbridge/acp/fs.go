package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/tools"
)

// lent is what the client lends one session, as initialize declared it:
// its file system (fs/read_text_file, fs/write_text_file) and its
// terminals (terminal/*). Those requests name the session, whose id is
// known only once the connection adds it ([lent.bind]); until then the
// local disk and shell serve.
type lent struct {
	a    *conn
	caps sdk.ClientCapabilities

	mu sync.Mutex // guards s
	s  *session
}

// lend gives cfg the file system and shell of what the client declared
// in initialize; nothing when it declared neither.
func (a *conn) lend(cfg SessionConfig) SessionConfig {
	l := &lent{a: a, caps: a.caps.get()}
	cfg.lent = l
	cfg.ToolStarting = l.toolStarting
	if l.caps.Fs.ReadTextFile || l.caps.Fs.WriteTextFile {
		cfg.FS = clientFS{l: l}
	}
	if l.caps.Terminal {
		cfg.Shell = clientShell{l: l}
	}
	return cfg
}

// bind makes s the session the lent file system and shell serve; l may
// be nil (a config not made by lend).
func (l *lent) bind(s *session) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.s = s
}

// toolStarting tells the session that a tool call starts running.
func (l *lent) toolStarting(callID string) {
	if s := l.session(); s != nil {
		s.toolStarting(callID)
	}
}

// session is the session served, nil before bind.
func (l *lent) session() *session {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s
}

// clientFS is a session's file system when the client lends its own.
// Text files are read and written through the client, so the tools see
// the editor's buffers (unsaved changes included) and their writes land
// in the editor, which can undo them. What ACP cannot do is the local
// disk's: Stat, ReadDir, MkdirAll, and binary files (images read needs as
// bytes). So the disk decides whether a file exists and what it is; a
// file the editor has but the disk does not is not found.
type clientFS struct {
	l     *lent
	local tools.LocalFS
}

var _ tools.OnLocalDisk = clientFS{}

// OnLocalDisk says the files are this machine's: grep and find search
// the disk (with rg and fd), not the editor's buffers.
func (clientFS) OnLocalDisk() bool { return true }

func (f clientFS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	return f.local.Stat(ctx, name)
}

func (f clientFS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	return f.local.ReadDir(ctx, name)
}

func (f clientFS) MkdirAll(ctx context.Context, dir string) error {
	return f.local.MkdirAll(ctx, dir)
}

// ReadFile reads a text file through the client. The disk's size is not
// checked against the client's content, which may differ (unsaved).
func (f clientFS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	s := f.l.session()
	if s == nil || !f.l.caps.Fs.ReadTextFile {
		return f.local.ReadFile(ctx, name)
	}
	if bin, err := f.binary(ctx, name); err != nil {
		return nil, err
	} else if bin {
		return f.local.ReadFile(ctx, name)
	}
	text, err := f.read(ctx, s, name)
	if err != nil {
		return nil, err
	}
	return []byte(text), nil
}

// Open streams what ReadFile reads: a text file the client's whole
// content, held in memory (an editor's buffer is), a binary one from the
// disk.
func (f clientFS) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	s := f.l.session()
	if s == nil || !f.l.caps.Fs.ReadTextFile {
		return f.local.Open(ctx, name)
	}
	if bin, err := f.binary(ctx, name); err != nil {
		return nil, err
	} else if bin {
		return f.local.Open(ctx, name)
	}
	text, err := f.read(ctx, s, name)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(strings.NewReader(text)), nil
}

// WriteFile writes text through the client; bytes that are not UTF-8
// text go to the disk. The file an approved call was pinned to (see
// tools.Pin) must still be that file when the client is asked.
func (f clientFS) WriteFile(ctx context.Context, name string, data []byte) error {
	s := f.l.session()
	if s == nil || !f.l.caps.Fs.WriteTextFile || !utf8.Valid(data) {
		return f.local.WriteFile(ctx, name, data)
	}
	if err := tools.CheckPin(ctx, name); err != nil {
		return err
	}
	p := sdk.WriteTextFileRequest{SessionId: sdk.SessionId(s.id), Path: name, Content: string(data)}
	if err := f.l.a.call(ctx, sdk.ClientMethodFsWriteTextFile, p, nil); err != nil {
		return clientFailed("write", err)
	}
	return nil
}

func (f clientFS) read(ctx context.Context, s *session, name string) (string, error) {
	var res sdk.ReadTextFileResponse
	p := sdk.ReadTextFileRequest{SessionId: sdk.SessionId(s.id), Path: name}
	if err := f.l.a.call(ctx, sdk.ClientMethodFsReadTextFile, p, &res); err != nil {
		return "", clientFailed("read", err)
	}
	if len(res.Content) > tools.MaxWholeFile {
		return "", fmt.Errorf("the editor's %s is over the %s read whole: %w", name, tools.FormatSize(tools.MaxWholeFile), tools.ErrTooLarge)
	}
	return res.Content, nil
}

// sniffLen is how much of a file's start decides whether it is text.
const sniffLen = 512

// binary reports whether the file on disk is not text (an image, any
// file with NUL bytes or bytes that are not UTF-8 near its start), which
// the client's text reads cannot carry. The disk's errors (no such file,
// not a regular file) are ReadFile's.
func (f clientFS) binary(ctx context.Context, name string) (bool, error) {
	r, err := f.local.Open(ctx, name)
	if err != nil {
		return false, err
	}
	defer r.Close()
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, err
	}
	return !isText(head[:n], n == sniffLen), nil
}

// isText reports whether head, a file's start, is UTF-8 text; cut says it
// may end inside a character.
func isText(head []byte, cut bool) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	if cut {
		// Drop a character the sniff cut in two.
		for i := 0; i < utf8.UTFMax && len(head) > 0; i++ {
			r, size := utf8.DecodeLastRune(head)
			if r != utf8.RuneError || size != 1 {
				break
			}
			head = head[:len(head)-1]
		}
	}
	return utf8.Valid(head)
}

// clientFailed is the error a tool reports when the client could not do
// what it asked.
func clientFailed(op string, err error) error {
	var ce *ClientError
	switch {
	case errors.As(err, &ce):
		return fmt.Errorf("the editor could not %s it: %s (error %d)", op, ce.Message, ce.Code)
	case errors.Is(err, errConnectionEnded):
		return fmt.Errorf("the editor disconnected before it could %s it", op)
	}
	return fmt.Errorf("asking the editor to %s it: %w", op, err)
}
