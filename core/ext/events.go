package ext

import (
	"bytes"
	"encoding/json"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// The hook events gopi sends that its client never sees (the agent's and
// the runtime's events, which it does see, cross as they are): each is
// pi's event of that type, "type" first and the rest with pi's names.

// Event is a hook event: its type names the handlers that get it.
type Event = api.Event

// Hook event types, as pi names them.
const (
	EventSessionStart          = "session_start"
	EventSessionShutdown       = "session_shutdown"
	EventSessionBeforeSwitch   = "session_before_switch"
	EventSessionBeforeFork     = "session_before_fork"
	EventSessionBeforeTree     = "session_before_tree"
	EventSessionTree           = "session_tree"
	EventSessionBeforeCompact  = "session_before_compact"
	EventSessionCompact        = "session_compact"
	EventSessionCompactFailed  = "session_compact_failed"
	EventModelSelect           = "model_select"
	EventThinkingLevelSelect   = "thinking_level_select"
	EventAfterProviderResponse = "after_provider_response"
	EventProviderStream        = "provider_stream_event"
	EventUserBash              = "user_bash"
	EventToolCall              = "tool_call"
	EventToolResult            = "tool_result"
	EventTurnStart             = "turn_start"
	EventTurnEnd               = "turn_end"
	EventAgentBeforeSettle     = "agent_before_settle"
	// EventMCPServersChange is fired by the extension host itself
	// (nodehost/mcp.mjs), as pi's runtime fires it, when an extension registers
	// or removes an MCP server after loading: gopi only asks who handles
	// it.
	EventMCPServersChange = "mcp_servers_change"
)

// SessionStartEvent: a session starts (reason "startup", "new",
// "resume", "fork" or "reload").
type SessionStartEvent struct {
	Reason              string `json:"reason"`
	PreviousSessionFile string `json:"previousSessionFile,omitempty"`
}

// SessionShutdownEvent: the session ends (reason "quit", "reload", or
// what replaces it).
type SessionShutdownEvent struct {
	Reason            string `json:"reason"`
	TargetSessionFile string `json:"targetSessionFile,omitempty"`
}

// SessionBeforeSwitchEvent asks whether a switch ("new" or "resume") may
// go ahead; the answer is a [CancelResult].
type SessionBeforeSwitchEvent struct {
	Reason            string `json:"reason"`
	TargetSessionFile string `json:"targetSessionFile,omitempty"`
}

// SessionBeforeForkEvent asks whether a fork (or, at position "at", a
// clone) may go ahead; the answer is a [CancelResult].
type SessionBeforeForkEvent struct {
	EntryID  string `json:"entryId"`
	Position string `json:"position,omitempty"`
}

// CancelResult is a session_before_* handler's answer.
type CancelResult struct {
	Cancel bool `json:"cancel"`
}

// SessionBeforeTreeEvent comes before a tree navigation; the answer is a
// [BeforeTreeResult].
type SessionBeforeTreeEvent struct {
	Preparation TreePreparation `json:"preparation"`
}

// TreePreparation is the navigation about to happen. Ids are null when
// there is none.
type TreePreparation struct {
	TargetID            string          `json:"targetId"`
	OldLeafID           *string         `json:"oldLeafId"`
	CommonAncestorID    *string         `json:"commonAncestorId"`
	EntriesToSummarize  []session.Entry `json:"entriesToSummarize"`
	UserWantsSummary    bool            `json:"userWantsSummary"`
	CustomInstructions  *string         `json:"customInstructions"`
	ReplaceInstructions *bool           `json:"replaceInstructions"`
	Label               *string         `json:"label"`
}

// BeforeTreeResult is a session_before_tree handler's answer: cancel, the
// branch summary, or changed instructions or label.
type BeforeTreeResult struct {
	Cancel  bool `json:"cancel"`
	Summary *struct {
		Summary string          `json:"summary"`
		Details json.RawMessage `json:"details"`
	} `json:"summary"`
	CustomInstructions  *string `json:"customInstructions"`
	ReplaceInstructions *bool   `json:"replaceInstructions"`
	Label               *string `json:"label"`
}

// SessionTreeEvent: the leaf moved. SummaryEntry and FromExtension are
// set when a branch summary was written.
type SessionTreeEvent struct {
	NewLeafID     *string         `json:"newLeafId"`
	OldLeafID     *string         `json:"oldLeafId"`
	SummaryEntry  json.RawMessage `json:"summaryEntry,omitempty"`
	FromExtension *bool           `json:"fromExtension,omitempty"`
}

// SessionBeforeCompactEvent comes before a compaction; the answer is a
// [BeforeCompactResult].
type SessionBeforeCompactEvent struct {
	Preparation        CompactPreparation `json:"preparation"`
	BranchEntries      []json.RawMessage  `json:"branchEntries"`
	CustomInstructions string             `json:"customInstructions"`
	Reason             string             `json:"reason"`
	WillRetry          bool               `json:"willRetry"`
}

// CompactPreparation is pi's CompactionPreparation.
type CompactPreparation struct {
	FirstKeptEntryID    string              `json:"firstKeptEntryId"`
	MessagesToSummarize []llm.Message       `json:"messagesToSummarize"`
	TurnPrefixMessages  []llm.Message       `json:"turnPrefixMessages"`
	IsSplitTurn         bool                `json:"isSplitTurn"`
	TokensBefore        int                 `json:"tokensBefore"`
	PreviousSummary     string              `json:"previousSummary"`
	FileOps             FileOps             `json:"fileOps"`
	Settings            compaction.Settings `json:"settings"`
}

// FileOps are the files the summarised messages read and changed.
type FileOps struct {
	Read     []string `json:"read"`
	Modified []string `json:"modified"`
}

// BeforeCompactResult is a session_before_compact handler's answer:
// cancel, or the compaction itself.
type BeforeCompactResult struct {
	Cancel     bool `json:"cancel"`
	Compaction *struct {
		Summary          string             `json:"summary"`
		FirstKeptEntryID string             `json:"firstKeptEntryId"`
		TokensBefore     int                `json:"tokensBefore"`
		Details          compaction.Details `json:"details"`
	} `json:"compaction"`
}

// SessionCompactEvent: a compaction was saved.
type SessionCompactEvent struct {
	CompactionEntry json.RawMessage `json:"compactionEntry"`
	FromExtension   bool            `json:"fromExtension"`
	Reason          string          `json:"reason"`
	WillRetry       bool            `json:"willRetry"`
}

// SessionCompactFailedEvent: a compaction failed or was aborted;
// ErrorMessage is set unless it was aborted.
type SessionCompactFailedEvent struct {
	Reason        string  `json:"reason"`
	Aborted       bool    `json:"aborted"`
	WillRetry     bool    `json:"willRetry"`
	FromExtension bool    `json:"fromExtension"`
	ErrorMessage  *string `json:"errorMessage,omitempty"`
}

// ModelSelectEvent: the model changed.
type ModelSelectEvent struct {
	Model         *llm.Model `json:"model"`
	PreviousModel *llm.Model `json:"previousModel,omitempty"`
	Source        string     `json:"source"`
}

// ThinkingLevelSelectEvent: the thinking level changed.
type ThinkingLevelSelectEvent struct {
	Level         llm.ThinkingLevel `json:"level"`
	PreviousLevel llm.ThinkingLevel `json:"previousLevel"`
}

// AfterProviderResponseEvent: a model call's answer arrived (headers in
// lower case), before its body is read.
type AfterProviderResponseEvent struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
}

// ProviderStreamEvent is one event of a model call's stream: the
// provider's JSON.
type ProviderStreamEvent struct {
	Provider string          `json:"provider"`
	API      string          `json:"api"`
	Model    string          `json:"model"`
	Data     json.RawMessage `json:"data"`
}

// UserBashEvent: the client's bash command, before it runs; the answer
// is a [UserBashResult].
type UserBashEvent struct {
	Command            string `json:"command"`
	ExcludeFromContext bool   `json:"excludeFromContext"`
	Cwd                string `json:"cwd"`
}

// ToolCallEvent: a tool is about to run; the answer is a
// [ToolCallResult].
type ToolCallEvent struct {
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	Input      json.RawMessage `json:"input"`
	// ParentToolCallID names the call that made a nested call (a
	// codemode script's), as pi sends it; absent for the model's calls.
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
}

// ToolResultEvent: a tool finished; the answer is a [ToolResultPatch].
type ToolResultEvent struct {
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	Input      json.RawMessage `json:"input"`
	Content    json.RawMessage `json:"content"`
	Details    any             `json:"details"`
	// StructuredContent is the result as data (pi 1.5), left out when
	// the tool gave none.
	StructuredContent any  `json:"structuredContent,omitempty"`
	IsError           bool `json:"isError"`
	// ParentToolCallID: as in [ToolCallEvent].
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
}

// TurnStartEvent is turn_start as pi's extensions see it: the turn's
// index in the run (from 0) and when it started (Unix milliseconds).
type TurnStartEvent struct {
	TurnIndex int   `json:"turnIndex"`
	Timestamp int64 `json:"timestamp"`
}

// TurnEndEvent is the actionable turn_end ([HostBoundary]): the turn's
// message and tool results, and their entries.
type TurnEndEvent struct {
	TurnIndex          int                      `json:"turnIndex"`
	Message            *llm.AssistantMessage    `json:"message"`
	ToolResults        []*llm.ToolResultMessage `json:"toolResults"`
	MessageEntryID     string                   `json:"messageEntryId"`
	ToolResultEntryIDs []string                 `json:"toolResultEntryIds"`
	Outcome            string                   `json:"outcome"`
}

// AgentBeforeSettleEvent is the actionable agent_before_settle
// ([HostBoundary]): how the run ended.
type AgentBeforeSettleEvent struct {
	Outcome string `json:"outcome"`
}

func (SessionStartEvent) EventType() string          { return EventSessionStart }
func (SessionShutdownEvent) EventType() string       { return EventSessionShutdown }
func (SessionBeforeSwitchEvent) EventType() string   { return EventSessionBeforeSwitch }
func (SessionBeforeForkEvent) EventType() string     { return EventSessionBeforeFork }
func (SessionBeforeTreeEvent) EventType() string     { return EventSessionBeforeTree }
func (SessionTreeEvent) EventType() string           { return EventSessionTree }
func (SessionBeforeCompactEvent) EventType() string  { return EventSessionBeforeCompact }
func (SessionCompactEvent) EventType() string        { return EventSessionCompact }
func (SessionCompactFailedEvent) EventType() string  { return EventSessionCompactFailed }
func (ModelSelectEvent) EventType() string           { return EventModelSelect }
func (ThinkingLevelSelectEvent) EventType() string   { return EventThinkingLevelSelect }
func (AfterProviderResponseEvent) EventType() string { return EventAfterProviderResponse }
func (ProviderStreamEvent) EventType() string        { return EventProviderStream }
func (UserBashEvent) EventType() string              { return EventUserBash }
func (ToolCallEvent) EventType() string              { return EventToolCall }
func (ToolResultEvent) EventType() string            { return EventToolResult }
func (TurnStartEvent) EventType() string             { return EventTurnStart }
func (TurnEndEvent) EventType() string               { return EventTurnEnd }
func (AgentBeforeSettleEvent) EventType() string     { return EventAgentBeforeSettle }

func (e SessionStartEvent) MarshalJSON() ([]byte, error) {
	type wire SessionStartEvent
	return typed(e.EventType(), wire(e))
}

func (e SessionShutdownEvent) MarshalJSON() ([]byte, error) {
	type wire SessionShutdownEvent
	return typed(e.EventType(), wire(e))
}

func (e SessionBeforeSwitchEvent) MarshalJSON() ([]byte, error) {
	type wire SessionBeforeSwitchEvent
	return typed(e.EventType(), wire(e))
}

func (e SessionBeforeForkEvent) MarshalJSON() ([]byte, error) {
	type wire SessionBeforeForkEvent
	return typed(e.EventType(), wire(e))
}

func (e SessionBeforeTreeEvent) MarshalJSON() ([]byte, error) {
	type wire SessionBeforeTreeEvent
	return typed(e.EventType(), wire(e))
}

func (e SessionTreeEvent) MarshalJSON() ([]byte, error) {
	type wire SessionTreeEvent
	return typed(e.EventType(), wire(e))
}

func (e SessionBeforeCompactEvent) MarshalJSON() ([]byte, error) {
	type wire SessionBeforeCompactEvent
	return typed(e.EventType(), wire(e))
}

func (e SessionCompactEvent) MarshalJSON() ([]byte, error) {
	type wire SessionCompactEvent
	return typed(e.EventType(), wire(e))
}

func (e SessionCompactFailedEvent) MarshalJSON() ([]byte, error) {
	type wire SessionCompactFailedEvent
	return typed(e.EventType(), wire(e))
}

func (e ModelSelectEvent) MarshalJSON() ([]byte, error) {
	type wire ModelSelectEvent
	return typed(e.EventType(), wire(e))
}

func (e ThinkingLevelSelectEvent) MarshalJSON() ([]byte, error) {
	type wire ThinkingLevelSelectEvent
	return typed(e.EventType(), wire(e))
}

func (e AfterProviderResponseEvent) MarshalJSON() ([]byte, error) {
	type wire AfterProviderResponseEvent
	return typed(e.EventType(), wire(e))
}

func (e ProviderStreamEvent) MarshalJSON() ([]byte, error) {
	type wire ProviderStreamEvent
	return typed(e.EventType(), wire(e))
}

func (e UserBashEvent) MarshalJSON() ([]byte, error) {
	type wire UserBashEvent
	return typed(e.EventType(), wire(e))
}

func (e ToolCallEvent) MarshalJSON() ([]byte, error) {
	type wire ToolCallEvent
	return typed(e.EventType(), wire(e))
}

func (e ToolResultEvent) MarshalJSON() ([]byte, error) {
	type wire ToolResultEvent
	return typed(e.EventType(), wire(e))
}

func (e TurnStartEvent) MarshalJSON() ([]byte, error) {
	type wire TurnStartEvent
	return typed(e.EventType(), wire(e))
}

func (e TurnEndEvent) MarshalJSON() ([]byte, error) {
	type wire TurnEndEvent
	return typed(e.EventType(), wire(e))
}

func (e AgentBeforeSettleEvent) MarshalJSON() ([]byte, error) {
	type wire AgentBeforeSettleEvent
	return typed(e.EventType(), wire(e))
}

// Marshal is v's JSON as the pipe's codec writes it: <, > and & are
// left as they are.
func Marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// typed adds "type" as the first field of an event's JSON.
func typed[T any](name string, v T) ([]byte, error) {
	body, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	head, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	out := append([]byte(`{"type":`), head...)
	if string(body) == "{}" {
		return append(out, '}'), nil
	}
	out = append(out, ',')
	return append(out, body[1:]...), nil
}
