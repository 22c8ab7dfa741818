package acp

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/llm"
)

// Sessions are the stored sessions (pi session files) behind
// session/load and session/resume.
type Sessions interface {
	// Open builds the runtime of the stored session id, continuing it
	// in cwd. An id no stored session has is an error wrapping
	// [ErrUnknownSession]; a session of another directory one wrapping
	// [ErrOtherCwd], saying whose it is.
	Open(ctx context.Context, id string, cfg SessionConfig) (Runtime, error)
	// List describes the stored sessions of cwd ("" for every
	// directory's), most recently active first.
	List(cwd string) ([]StoredSession, error)
	// Delete removes the stored session id; an id no stored session has
	// is an error wrapping [ErrUnknownSession].
	Delete(id string) error
}

// StoredSession describes a stored session for session/list.
type StoredSession struct {
	ID  string
	Cwd string
	// Title is the session's name, else its first user message.
	Title string
	// Updated is the time of its last activity.
	Updated time.Time
}

// listPage is how many sessions one session/list answer holds at most.
const listPage = 50

var (
	// ErrUnknownSession: no stored session has the id.
	ErrUnknownSession = errors.New("no stored session has that id")
	// ErrOtherCwd: the stored session works in another directory.
	ErrOtherCwd = errors.New("the session belongs to another directory")
)

// sessionCapabilities are the session methods beyond the baseline that
// this connection serves (loadSession is advertised apart).
func (a *conn) sessionCapabilities() sdk.SessionCapabilities {
	var c sdk.SessionCapabilities
	c.Close = &sdk.SessionCloseCapabilities{}
	c.AdditionalDirectories = &sdk.SessionAdditionalDirectoriesCapabilities{}
	if a.opts.Fork != nil {
		c.Fork = &sdk.SessionForkCapabilities{}
	}
	if a.opts.Sessions != nil {
		c.Resume = &sdk.SessionResumeCapabilities{}
		c.List = &sdk.SessionListCapabilities{}
		c.Delete = &sdk.SessionDeleteCapabilities{}
	}
	return c
}

// load is session/load (replay true) and session/resume: the stored
// session becomes a session of this connection, its history replayed as
// session/update notifications before the answer when replay is set.
func (a *conn) load(m *message, replay bool) error {
	method := *m.Method
	var id sdk.SessionId
	var cwd string
	var moreDirs []string
	servers, err := clientServers(m.Params)
	if err != nil {
		return err
	}
	if replay {
		var p sdk.LoadSessionRequest
		if err := decodeParams(m, &p, "sessionId", "cwd", "mcpServers"); err != nil {
			return err
		}
		id, cwd, moreDirs = p.SessionId, p.Cwd, p.AdditionalDirectories
	} else {
		var p sdk.ResumeSessionRequest
		if err := decodeParams(m, &p, "sessionId", "cwd"); err != nil {
			return err
		}
		id, cwd, moreDirs = p.SessionId, p.Cwd, p.AdditionalDirectories
	}
	if !filepath.IsAbs(cwd) {
		return errorf(codeInvalidParams, "invalid params: \"cwd\" must be an absolute path, not %q", cwd)
	}
	cwd = filepath.Clean(cwd)
	dirs, err := additionalDirs(moreDirs, cwd)
	if err != nil {
		return err
	}
	if a.opts.Sessions == nil {
		return errorf(codeMethodNotFound, "method not found: %s needs stored sessions, and this gopi runs with --no-session", method)
	}
	a.mu.Lock()
	s := a.sessions[string(id)]
	a.mu.Unlock()
	if s == nil {
		cfg := a.lend(SessionConfig{Cwd: cwd, MCPServers: servers, AdditionalDirs: dirs})
		rt, err := a.opts.Sessions.Open(a.ctx, string(id), cfg)
		switch {
		case errors.Is(err, ErrUnknownSession):
			return notFound(string(id), "resource not found: no stored session %q", id)
		case errors.Is(err, ErrOtherCwd):
			return errorf(codeInvalidParams, "invalid params: \"cwd\": %v", err)
		case err != nil:
			return errorf(codeInternalError, "opening session %s: %v", id, err)
		}
		if err := a.needsAuth(a.ctx, rt); err != nil {
			a.discard(rt)
			return err
		}
		s = a.add(string(id), cfg, rt)
	} else if s.cwd != cwd {
		// Already open here: the same rule as for a stored one.
		return errorf(codeInvalidParams, "invalid params: \"cwd\": session %s works in %s, not in %s", id, s.cwd, cwd)
	} else {
		// The request's list is the session's whole list from now on
		// (none when it has none), as the schema has it.
		s.rt.SetAdditionalDirs(dirs)
	}
	modes, opts, err := s.setup(a.ctx)
	if err != nil {
		return err
	}
	if !replay {
		err := a.w.result(m.ID, sdk.ResumeSessionResponse{Modes: modes, ConfigOptions: opts})
		a.announceCommands(s)
		return err
	}
	if err := s.replay(a.ctx); err != nil {
		return err
	}
	err = a.w.result(m.ID, sdk.LoadSessionResponse{Modes: modes, ConfigOptions: opts})
	a.announceCommands(s)
	return err
}

// replay sends the session's title (a named session's) and its visible
// branch as session/update notifications: user messages, the assistant's text and thoughts, and
// each tool call followed by its final update. A session answering a
// prompt is not replayed (its history is still growing).
func (s *session) replay(ctx context.Context) error {
	st, err := s.rt.GetState(ctx)
	if err != nil {
		return errorf(codeInternalError, "loading session %s: %v", s.id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.turns) > 0 || s.rewinding {
		return errorf(codeInvalidRequest, "session %s is answering a prompt: load it once the prompt is answered", s.id)
	}
	if st.SessionName != "" {
		s.update(titleUpdate(st.SessionName))
	}
	// open are the tool calls sent whose result has not come yet.
	var open []string
	calls := map[string]llm.ToolCall{}
	settle := func() {
		// A tool call the branch has no result for (a run that
		// ended mid-call) is shown failed.
		for _, id := range open {
			s.update(sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateStatus(sdk.ToolCallStatusFailed)))
		}
		open = open[:0]
	}
	for _, msg := range s.rt.History() {
		switch m := msg.(type) {
		case *llm.UserMessage:
			settle()
			for _, b := range userBlocks(m.Content) {
				s.update(sdk.UpdateUserMessage(b))
			}
		case *llm.AssistantMessage:
			settle()
			for _, c := range m.Content {
				switch c := c.(type) {
				case llm.TextContent:
					if c.Text != "" {
						s.update(sdk.UpdateAgentMessageText(c.Text))
					}
				case llm.ThinkingContent:
					if c.Thinking != "" && !c.Redacted {
						s.update(sdk.UpdateAgentThoughtText(c.Thinking))
					}
				case llm.ToolCall:
					s.update(startToolCall(s.cwd, c.ID, c.Name, c.Arguments))
					open = append(open, c.ID)
					calls[c.ID] = c
				}
			}
		case *llm.ToolResultMessage:
			i := indexOf(open, m.ToolCallID)
			if i < 0 {
				continue // a result of no call shown: nothing to update
			}
			open = append(open[:i], open[i+1:]...)
			status := sdk.ToolCallStatusCompleted
			if m.IsError {
				status = sdk.ToolCallStatusFailed
			}
			opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status)}
			content := replayDiffs(s.cwd, calls[m.ToolCallID], m.IsError)
			if text := contentText(m.Content); text != "" {
				content = append(content, sdk.ToolContent(sdk.TextBlock(text)))
			}
			if len(content) > 0 {
				opts = append(opts, sdk.WithUpdateContent(content))
			}
			s.update(sdk.UpdateToolCall(sdk.ToolCallId(m.ToolCallID), opts...))
		}
	}
	settle()
	return nil
}

func indexOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}

// userBlocks are a user message's text (its text blocks joined) and
// images as ACP content blocks.
func userBlocks(cs llm.Contents) []sdk.ContentBlock {
	var out []sdk.ContentBlock
	if text := contentText(cs); text != "" {
		out = append(out, sdk.TextBlock(text))
	}
	for _, c := range cs {
		if img, ok := c.(llm.ImageContent); ok {
			out = append(out, sdk.ImageBlock(img.Data, img.MimeType))
		}
	}
	return out
}

// contentText joins the text blocks of cs with newlines.
func contentText(cs llm.Contents) string {
	var parts []string
	for _, c := range cs {
		if t, ok := c.(llm.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// list is session/list: the stored sessions, of one directory or all,
// newest first, listPage at a time; the cursor is where the next page
// starts.
func (a *conn) list(m *message) error {
	var p sdk.ListSessionsRequest
	if len(m.Params) == 0 || string(m.Params) == "null" {
		m.Params = []byte("{}") // every field is optional
	}
	if err := decodeParams(m, &p); err != nil {
		return err
	}
	if a.opts.Sessions == nil {
		return errorf(codeMethodNotFound, "method not found: session/list needs stored sessions, and this gopi runs with --no-session")
	}
	cwd := ""
	if p.Cwd != nil {
		if !filepath.IsAbs(*p.Cwd) {
			return errorf(codeInvalidParams, "invalid params: \"cwd\" must be an absolute path, not %q", *p.Cwd)
		}
		cwd = filepath.Clean(*p.Cwd)
	}
	from := 0
	if p.Cursor != nil {
		n, err := strconv.Atoi(*p.Cursor)
		if err != nil || n < 0 {
			return errorf(codeInvalidParams, "invalid params: \"cursor\" %q is not one gopi gave", *p.Cursor)
		}
		from = n
	}
	all, err := a.opts.Sessions.List(cwd)
	if err != nil {
		return errorf(codeInternalError, "listing sessions: %v", err)
	}
	res := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	for i := from; i < len(all) && i < from+listPage; i++ {
		in := all[i]
		info := sdk.SessionInfo{SessionId: sdk.SessionId(in.ID), Cwd: in.Cwd}
		if in.Title != "" {
			info.Title = sdk.Ptr(in.Title)
		}
		if !in.Updated.IsZero() {
			info.UpdatedAt = sdk.Ptr(in.Updated.UTC().Format(time.RFC3339Nano))
		}
		res.Sessions = append(res.Sessions, info)
	}
	if from+listPage < len(all) {
		res.NextCursor = sdk.Ptr(strconv.Itoa(from + listPage))
	}
	return a.w.result(m.ID, res)
}

// closeSession is session/close: the session's run is cancelled, its
// prompt answered, and its runtime released (its file stays) before the
// answer.
func (a *conn) closeSession(m *message) error {
	var p sdk.CloseSessionRequest
	if err := decodeParams(m, &p, "sessionId"); err != nil {
		return err
	}
	s, err := a.session(p.SessionId)
	if err != nil {
		return err
	}
	a.remove(s)
	id := m.ID
	a.work.Go(func() {
		a.release(s)
		_ = a.w.result(id, sdk.CloseSessionResponse{})
	})
	return nil
}

// deleteSession is session/delete: a session open on this connection is
// closed first, then its stored file removed.
func (a *conn) deleteSession(m *message) error {
	var p sdk.UnstableDeleteSessionRequest
	if err := decodeParams(m, &p, "sessionId"); err != nil {
		return err
	}
	if a.opts.Sessions == nil {
		return errorf(codeMethodNotFound, "method not found: session/delete needs stored sessions, and this gopi runs with --no-session")
	}
	a.mu.Lock()
	s := a.sessions[string(p.SessionId)]
	a.mu.Unlock()
	if s != nil {
		a.remove(s)
	}
	id := m.ID
	a.work.Go(func() {
		if s != nil {
			a.release(s)
		}
		err := a.opts.Sessions.Delete(string(p.SessionId))
		switch {
		case errors.Is(err, ErrUnknownSession):
			_ = a.w.fail(id, notFound(string(p.SessionId), "resource not found: no stored session %q", p.SessionId))
		case err != nil:
			_ = a.w.fail(id, errorf(codeInternalError, "deleting session %s: %v", p.SessionId, err))
		default:
			_ = a.w.result(id, sdk.UnstableDeleteSessionResponse{})
		}
	})
	return nil
}

// remove takes s off the connection: requests naming it are answered as
// for an unknown session from now on.
func (a *conn) remove(s *session) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.sessions, s.id)
	if i := slices.Index(a.order, s); i >= 0 {
		a.order = slices.Delete(a.order, i, i+1)
	}
}

// release cancels what s runs, waits for its prompt to be answered, and
// closes its runtime.
func (a *conn) release(s *session) {
	s.stop(a.opts.Report)
	s.work.Wait()
	s.close(a.opts.Report)
}
