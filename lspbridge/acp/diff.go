package acp

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/tools"
)

// callExtras is what a session adds to its tool calls beyond their text:
// the diffs of edit and write calls, and the client terminals bash calls
// run in.
//
// A live edit or write is shown as a diff of the whole file: its content
// is read (through the session's file system, so the editor's buffer when
// the client lends it) when the call starts and again when it succeeds.
// A file that did not exist is a new file (no oldText). When the file
// cannot be read whole, the diffs are the call's own replacements, as
// session/load replays them.
type callExtras struct {
	// fs is the session's file system; nil is the local disk.
	fs tools.FS

	mu        sync.Mutex // guards before and terminals
	before    map[string]fileBefore
	terminals map[string]string // terminal id by tool call id
}

// fileBefore is the file an edit or write call changes, as it was when
// the call started.
type fileBefore struct {
	name string // the tool's
	args json.RawMessage
	path string
	old  *string // nil: no such file
	read bool    // the file was read (or found missing): a whole-file diff can be shown
}

// diffLimit bounds the files shown whole in a diff.
const diffLimit = 1 << 20

// diffReadWait bounds each read of a file for a diff.
const diffReadWait = 10 * time.Second

// observe notes the file an edit or write call starts on, and gives the
// diffs of one that ended well. It may ask the client for the file, so
// it must be called without the session's lock: the answer comes through
// the connection's reading goroutine, which may be waiting for that lock.
func (x *callExtras) observe(cwd string, e agent.Event) []sdk.ToolCallContent {
	switch e.Type {
	case agent.EventToolExecutionStart:
		path := editedPath(cwd, e.ToolName, e.Args)
		if path == "" {
			return nil
		}
		b := fileBefore{name: e.ToolName, args: e.Args, path: path}
		b.old, b.read = x.file(path)
		x.mu.Lock()
		if x.before == nil {
			x.before = map[string]fileBefore{}
		}
		x.before[e.ToolCallID] = b
		x.mu.Unlock()
	case agent.EventToolExecutionEnd:
		x.mu.Lock()
		b, ok := x.before[e.ToolCallID]
		delete(x.before, e.ToolCallID)
		x.mu.Unlock()
		if !ok || e.IsError {
			return nil
		}
		if b.read {
			if now, read := x.file(b.path); read && now != nil {
				return []sdk.ToolCallContent{diffContent(b.path, b.old, *now)}
			}
		}
		return callDiffs(cwd, b.name, b.args)
	}
	return nil
}

// file reads the file at path for a diff: its content, nil when there is
// no such file; read is false when it could not be read whole.
func (x *callExtras) file(path string) (content *string, read bool) {
	fsys := x.fs
	if fsys == nil {
		fsys = tools.LocalFS{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), diffReadWait)
	defer cancel()
	info, err := fsys.Stat(ctx, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, true
	case err != nil, !info.Mode().IsRegular(), info.Size() > diffLimit:
		return nil, false
	}
	data, err := fsys.ReadFile(ctx, path)
	if err != nil || len(data) > diffLimit {
		return nil, false
	}
	s := string(data)
	return &s, true
}

// showTerminal embeds the client terminal a bash call runs in into the
// call, so the editor shows it live; its final update keeps it.
func (s *session) showTerminal(callID, terminalID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sending() {
		return
	}
	s.extras.mu.Lock()
	if s.extras.terminals == nil {
		s.extras.terminals = map[string]string{}
	}
	s.extras.terminals[callID] = terminalID
	s.extras.mu.Unlock()
	s.update(sdk.UpdateToolCall(sdk.ToolCallId(callID), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(terminalID)})))
}

// endContent is the content of a call's final update: its terminal, its
// diffs, then the text of its result.
func (x *callExtras) endContent(callID string, diffs []sdk.ToolCallContent, text string) []sdk.ToolCallContent {
	var out []sdk.ToolCallContent
	x.mu.Lock()
	if t, ok := x.terminals[callID]; ok {
		out = append(out, sdk.ToolTerminalRef(t))
		delete(x.terminals, callID)
	}
	x.mu.Unlock()
	out = append(out, diffs...)
	if text != "" {
		out = append(out, sdk.ToolContent(sdk.TextBlock(text)))
	}
	return out
}

// editedPath is the absolute path an edit or write call changes; "" for
// other calls.
func editedPath(cwd, name string, args json.RawMessage) string {
	if name != tools.NameEdit && name != tools.NameWrite {
		return ""
	}
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(args, &a) != nil || a.Path == "" {
		return ""
	}
	return tools.ResolvePath(a.Path, cwd)
}

// callDiffs are the diffs a call's arguments hold, what session/load
// replays: one per replacement of an edit (its oldText and newText, not
// the whole file), and a write's content as a new file, since what the
// file held before is not stored.
func callDiffs(cwd, name string, args json.RawMessage) []sdk.ToolCallContent {
	path := editedPath(cwd, name, args)
	if path == "" {
		return nil
	}
	switch name {
	case tools.NameWrite:
		var a struct {
			Content *string `json:"content"`
		}
		if json.Unmarshal(args, &a) != nil || a.Content == nil {
			return nil
		}
		return []sdk.ToolCallContent{diffContent(path, nil, *a.Content)}
	case tools.NameEdit:
		var out []sdk.ToolCallContent
		for _, r := range replacements(args) {
			out = append(out, diffContent(path, &r.OldText, r.NewText))
		}
		return out
	}
	return nil
}

// replacements are an edit call's replacements in the shapes models send
// them (see the edit tool's PrepareArguments): edits as an array or a
// JSON string holding one, and a top-level oldText/newText after them.
func replacements(args json.RawMessage) []tools.Replacement {
	var a struct {
		Edits   json.RawMessage `json:"edits"`
		OldText *string         `json:"oldText"`
		NewText *string         `json:"newText"`
	}
	if json.Unmarshal(args, &a) != nil {
		return nil
	}
	var out []tools.Replacement
	edits := a.Edits
	var s string
	if json.Unmarshal(edits, &s) == nil {
		edits = json.RawMessage(s)
	}
	_ = json.Unmarshal(edits, &out)
	if a.OldText != nil && a.NewText != nil {
		out = append(out, tools.Replacement{OldText: *a.OldText, NewText: *a.NewText})
	}
	return out
}

// diffContent is a diff of path; old nil is a new file.
func diffContent(path string, old *string, newText string) sdk.ToolCallContent {
	if old == nil {
		return sdk.ToolDiffContent(path, newText)
	}
	return sdk.ToolDiffContent(path, newText, *old)
}

// replayDiffs are the diffs session/load shows for a call that ended
// well.
func replayDiffs(cwd string, call llm.ToolCall, failed bool) []sdk.ToolCallContent {
	if failed {
		return nil
	}
	return callDiffs(cwd, call.Name, call.Arguments)
}
