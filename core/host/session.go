package host

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// GetState reports the session's state; it is cheap and safe during a run.
func (h *Host) GetState(ctx context.Context) (api.State, error) {
	st := h.Store()
	steer, follow := h.agent.QueueCounts()
	return api.State{
		Model:                 h.agent.Model(),
		ThinkingLevel:         h.agent.ThinkingLevel(),
		IsStreaming:           h.run.Settle(ctx),
		IsCompacting:          h.run.Compacting(),
		SteeringMode:          api.QueueMode(h.agent.SteeringMode()),
		FollowUpMode:          api.QueueMode(h.agent.FollowUpMode()),
		SessionFile:           st.File(),
		SessionID:             st.ID(),
		SessionName:           st.Name(),
		AutoCompactionEnabled: h.run.AutoCompaction(),
		MessageCount:          len(h.agent.Messages()),
		PendingMessageCount:   steer + follow,
		Sandbox:               sandboxState(h.opts.Sandbox),
	}, nil
}

// GetMessages returns the transcript the model sees, bash executions
// included.
func (h *Host) GetMessages(_ context.Context) (api.MessagesResult, error) {
	msgs := h.agent.Messages()
	if msgs == nil {
		msgs = []llm.Message{}
	}
	return api.MessagesResult{Messages: msgs}, nil
}

// GetSessionStats counts messages, tokens and cost over the transcript.
//
// As in pi 1.5 the counts and totals cover the whole session file: every
// branch, what a compaction summarised, and the usage of summaries and of
// pi's usage entries; the context usage is the current context's.
func (h *Host) GetSessionStats(_ context.Context) (api.SessionStats, error) {
	st := h.Store()
	msgs := h.agent.Messages()
	s := api.SessionStats{SessionFile: st.File(), SessionID: st.ID()}
	add := func(u *llm.Usage) {
		if u == nil {
			return
		}
		s.Tokens.Input += u.Input
		s.Tokens.Output += u.Output
		s.Tokens.CacheRead += u.CacheRead
		s.Tokens.CacheWrite += u.CacheWrite
		s.Cost += u.Cost.Total
	}
	for _, e := range st.Entries() {
		switch e := e.(type) {
		case *session.UsageEntry:
			add(&e.Usage)
		case *session.CompactionEntry:
			add(e.Usage)
		case *session.BranchSummaryEntry:
			add(e.Usage)
		case *session.MessageEntry:
			s.TotalMessages++
			switch m := e.Message().(type) {
			case *llm.UserMessage:
				s.UserMessages++
			case *llm.ToolResultMessage:
				s.ToolResults++
			case *llm.AssistantMessage:
				s.AssistantMessages++
				for _, c := range m.Content {
					if _, ok := c.(llm.ToolCall); ok {
						s.ToolCalls++
					}
				}
				add(&m.Usage)
			}
		}
	}
	s.Tokens.Total = s.Tokens.Input + s.Tokens.Output + s.Tokens.CacheRead + s.Tokens.CacheWrite
	s.ContextUsage = contextUsage(h.agent.Model(), h.Store().Path(), msgs)
	return s, nil
}

// GetLastAssistantText is the text of the latest assistant message, null
// when there is none.
func (h *Host) GetLastAssistantText(_ context.Context) (api.TextResult, error) {
	if text, ok := h.LastAssistantText(); ok {
		return api.TextResult{Text: &text}, nil
	}
	return api.TextResult{}, nil
}

// SetSessionName records a display name; an empty name is refused.
func (h *Host) SetSessionName(_ context.Context, p api.NameParams) error {
	name := strings.TrimSpace(p.Name)
	if name == "" {
		return errEmptySessionName
	}
	store := h.Store()
	if _, err := store.AppendSessionInfo(name); err != nil {
		return h.log.saved(store, "the session name", err)
	}
	h.emit(api.SessionInfoChanged{Name: &name})
	return nil
}

// GetForkMessages lists the user messages a fork can start from.
func (h *Host) GetForkMessages(_ context.Context) (api.ForkMessagesResult, error) {
	points := h.Store().ForkPoints()
	out := make([]api.ForkMessage, len(points))
	for i, p := range points {
		out[i] = api.ForkMessage{EntryID: p.EntryID, Text: p.Text}
	}
	return api.ForkMessagesResult{Messages: out}, nil
}

// NewSession aborts any run and starts an empty session next to the
// current one (in memory when the current one is), recording
// parentSession in its header.
func (h *Host) NewSession(ctx context.Context, p api.NewSessionParams) (api.CancelledResult, error) {
	if h.ext.sessionBefore(ctx, ext.SessionBeforeSwitchEvent{Reason: "new"}) {
		return api.CancelledResult{Cancelled: true}, nil
	}
	if err := h.Abort(ctx); err != nil {
		return api.CancelledResult{}, err
	}
	old := h.Store()
	var next *session.Store
	if old.Persisted() || old.Dir() != "" {
		var err error
		next, err = session.Create(old.Dir(), h.opts.Cwd, session.Options{ParentSession: p.ParentSession})
		if err != nil {
			return api.CancelledResult{}, fmt.Errorf("creating the new session: %w", err)
		}
	} else {
		next = session.InMemory(h.opts.Cwd)
	}
	if err := h.adopt(next); err != nil {
		return api.CancelledResult{}, err
	}
	h.ext.sessionReplaced(ctx, "new", old.File(), "")
	return api.CancelledResult{}, nil
}

// ListSessions lists saved sessions of the cwd (or of every directory),
// newest first: gopi's extension to the protocol.
func (h *Host) ListSessions(_ context.Context, p api.ListSessionsParams) (api.SessionsResult, error) {
	var infos []session.Info
	var err error
	if p.All {
		infos, err = session.ListAll(filepath.Join(h.opts.AgentDir, "sessions"))
	} else {
		dir := h.Store().Dir()
		if dir == "" {
			dir = session.DefaultDir(h.opts.AgentDir, h.opts.Cwd)
		}
		infos, err = session.List(dir)
	}
	if err != nil {
		return api.SessionsResult{}, fmt.Errorf("listing sessions: %w", err)
	}
	out := make([]api.SessionInfo, len(infos))
	for i, in := range infos {
		out[i] = api.SessionInfo{
			ID:           in.ID,
			Path:         in.Path,
			Cwd:          in.Cwd,
			Name:         in.Name,
			FirstMessage: in.FirstMessage,
			MessageCount: in.MessageCount,
			Modified:     in.Modified.UTC().Format(time.RFC3339Nano),
		}
	}
	return api.SessionsResult{Sessions: out}, nil
}
