package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	jsonv2 "github.com/go-json-experiment/json"
)

// Role is the wire name of a message's "role" field.
type Role string

const (
	RoleUser              Role = "user"
	RoleAssistant         Role = "assistant"
	RoleToolResult        Role = "toolResult"
	RoleBashExecution     Role = "bashExecution"
	RoleCustom            Role = "custom"
	RoleBranchSummary     Role = "branchSummary"
	RoleCompactionSummary Role = "compactionSummary"
)

// StopReason says why an assistant message ended.
type StopReason string

const (
	StopStop    StopReason = "stop"
	StopLength  StopReason = "length"
	StopToolUse StopReason = "toolUse"
	StopError   StopReason = "error"
	StopAborted StopReason = "aborted"
	// StopPending marks a message still streaming (pi 1.5): every snapshot
	// before the stream ends carries it.
	StopPending StopReason = "pending"
)

// Message is any message pi stores in a session (pi's AgentMessage): the
// three a model understands ([*UserMessage], [*AssistantMessage],
// [*ToolResultMessage]) and the coding agent's own ([*BashExecutionMessage],
// [*CustomMessage], [*BranchSummaryMessage], [*CompactionSummaryMessage]).
// A role gopi does not know decodes as [*UnknownMessage] and is kept as is.
type Message interface {
	MessageRole() Role
	// Time is the message's timestamp in Unix milliseconds.
	Time() int64
}

// Now is the current time in Unix milliseconds, the unit of every message
// timestamp.
func Now() int64 { return time.Now().UnixMilli() }

// UserMessage is what the user (or a steering/follow-up queue) said.
type UserMessage struct {
	Content   Contents `json:"content"`
	Timestamp int64    `json:"timestamp"`
}

// AssistantMessage is one model reply.
type AssistantMessage struct {
	Content    Contents   `json:"content"`
	API        string     `json:"api"`
	Provider   string     `json:"provider"`
	Model      string     `json:"model"`
	ResponseID string     `json:"responseId,omitempty"`
	Usage      Usage      `json:"usage"`
	StopReason StopReason `json:"stopReason"`
	// RawStopReason is the provider's own word for why it stopped
	// ("end_turn", "tool_calls", "STOP"), as pi 1.5 records it.
	RawStopReason string `json:"rawStopReason,omitempty"`
	ErrorMessage  string `json:"errorMessage,omitempty"`
	Timestamp     int64  `json:"timestamp"`
	// DurationMs is how long the response took, from the request until it
	// ended (monotonic clock, whole milliseconds), as pi 1.5 records it;
	// nil for a message that never streamed here (an older session's).
	DurationMs *int64 `json:"durationMs,omitempty"`
	// ThinkingLevel is the thinking level the agent asked this response
	// for (pi 1.5): "off" when it asked for none; empty (left out) for
	// replies made outside the agent loop and older sessions' replies.
	ThinkingLevel ThinkingLevel `json:"thinkingLevel,omitempty"`
	// Failure classifies a StopError reply that a provider produced (see
	// ProviderError); nil for other replies and for replies read back from
	// a session file. It is never written.
	Failure *ProviderError `json:"-"`
	// Refused marks a StopError reply the model declined to write (the
	// provider failed it with [ErrRefused]); false for other replies and
	// for replies read back from a session file, whose stop reason pi
	// records as "error". It is never written.
	Refused bool `json:"-"`
}

// ToolResultMessage is the outcome of one tool call.
type ToolResultMessage struct {
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Content    Contents        `json:"content"`
	Details    json.RawMessage `json:"details,omitempty"`
	IsError    bool            `json:"isError"`
	// DurationMs is how long the tool ran (monotonic clock, whole
	// milliseconds), as pi 1.5 records it; nil when it did not run
	// (unknown tool, invalid arguments, blocked, skipped) and in older
	// sessions.
	DurationMs *int64 `json:"durationMs,omitempty"`
	// NestedCalls records the calls this tool made to other tools (a
	// codemode script's), as pi 1.6 keeps them; nil when it made none.
	NestedCalls *NestedCalls `json:"nestedCalls,omitempty"`
	Timestamp   int64        `json:"timestamp"`
}

// NestedCalls is pi's bounded record of the calls one tool call made to
// other tools: never their results. Complete is false when a call was
// dropped (past [MaxNestedCalls]), lost its arguments (past the size
// limits) or had not finished when the record was taken.
type NestedCalls struct {
	Calls    []NestedCallRecord `json:"calls"`
	Complete bool               `json:"complete"`
}

// NestedCallRecord is one nested call: its arguments, or only their size
// when they were too large to keep; its status "ok", "error" or
// "unfinished"; how long it ran in whole milliseconds; the start of its
// error text.
type NestedCallRecord struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	ArgumentsBytes int             `json:"argumentsBytes,omitempty"`
	Status         string          `json:"status"`
	DurationMs     *int64          `json:"durationMs,omitempty"`
	Error          string          `json:"error,omitempty"`
}

// The limits of a [NestedCalls] record, pi's.
const (
	MaxNestedCalls          = 256
	MaxNestedArgumentsBytes = 8 << 10
	MaxNestedArgumentsTotal = 32 << 10
	MaxNestedErrorChars     = 500
)

// BashExecutionMessage records a shell command the user ran (the RPC bash
// command), not one the model ran. ExitCode is nil when the process did not
// exit normally.
type BashExecutionMessage struct {
	Command            string `json:"command"`
	Output             string `json:"output"`
	ExitCode           *int   `json:"exitCode,omitempty"`
	Cancelled          bool   `json:"cancelled"`
	Truncated          bool   `json:"truncated"`
	FullOutputPath     string `json:"fullOutputPath,omitempty"`
	Timestamp          int64  `json:"timestamp"`
	ExcludeFromContext bool   `json:"excludeFromContext,omitempty"`
}

// CustomMessage is a message injected by an extension.
type CustomMessage struct {
	CustomType string          `json:"customType"`
	Content    Contents        `json:"content"`
	Display    bool            `json:"display"`
	Details    json.RawMessage `json:"details,omitempty"`
	Timestamp  int64           `json:"timestamp"`
}

// BranchSummaryMessage stands for a branch the conversation came back from.
type BranchSummaryMessage struct {
	Summary   string `json:"summary"`
	FromID    string `json:"fromId"`
	Timestamp int64  `json:"timestamp"`
}

// CompactionSummaryMessage stands for the compacted part of a conversation.
type CompactionSummaryMessage struct {
	Summary      string `json:"summary"`
	TokensBefore int    `json:"tokensBefore"`
	Timestamp    int64  `json:"timestamp"`
}

// UnknownMessage keeps a message of a role gopi does not know, byte for byte.
type UnknownMessage struct {
	Role Role
	Raw  json.RawMessage
}

func (*UserMessage) MessageRole() Role              { return RoleUser }
func (*AssistantMessage) MessageRole() Role         { return RoleAssistant }
func (*ToolResultMessage) MessageRole() Role        { return RoleToolResult }
func (*BashExecutionMessage) MessageRole() Role     { return RoleBashExecution }
func (*CustomMessage) MessageRole() Role            { return RoleCustom }
func (*BranchSummaryMessage) MessageRole() Role     { return RoleBranchSummary }
func (*CompactionSummaryMessage) MessageRole() Role { return RoleCompactionSummary }
func (m *UnknownMessage) MessageRole() Role         { return m.Role }

func (m *UserMessage) Time() int64              { return m.Timestamp }
func (m *AssistantMessage) Time() int64         { return m.Timestamp }
func (m *ToolResultMessage) Time() int64        { return m.Timestamp }
func (m *BashExecutionMessage) Time() int64     { return m.Timestamp }
func (m *CustomMessage) Time() int64            { return m.Timestamp }
func (m *BranchSummaryMessage) Time() int64     { return m.Timestamp }
func (m *CompactionSummaryMessage) Time() int64 { return m.Timestamp }
func (m *UnknownMessage) Time() int64 {
	var t struct {
		Timestamp int64 `json:"timestamp"`
	}
	_ = json.Unmarshal(m.Raw, &t)
	return t.Timestamp
}

func (m *UserMessage) MarshalJSON() ([]byte, error) {
	type alias UserMessage
	return json.Marshal(struct {
		Role Role `json:"role"`
		*alias
	}{RoleUser, (*alias)(m)})
}

func (m *AssistantMessage) MarshalJSON() ([]byte, error) {
	type alias AssistantMessage
	return json.Marshal(struct {
		Role Role `json:"role"`
		*alias
	}{RoleAssistant, (*alias)(m)})
}

func (m *ToolResultMessage) MarshalJSON() ([]byte, error) {
	type alias ToolResultMessage
	return json.Marshal(struct {
		Role Role `json:"role"`
		*alias
	}{RoleToolResult, (*alias)(m)})
}

func (m *BashExecutionMessage) MarshalJSON() ([]byte, error) {
	type alias BashExecutionMessage
	return json.Marshal(struct {
		Role Role `json:"role"`
		*alias
	}{RoleBashExecution, (*alias)(m)})
}

func (m *CustomMessage) MarshalJSON() ([]byte, error) {
	type alias CustomMessage
	return json.Marshal(struct {
		Role Role `json:"role"`
		*alias
	}{RoleCustom, (*alias)(m)})
}

func (m *BranchSummaryMessage) MarshalJSON() ([]byte, error) {
	type alias BranchSummaryMessage
	return json.Marshal(struct {
		Role Role `json:"role"`
		*alias
	}{RoleBranchSummary, (*alias)(m)})
}

func (m *CompactionSummaryMessage) MarshalJSON() ([]byte, error) {
	type alias CompactionSummaryMessage
	return json.Marshal(struct {
		Role Role `json:"role"`
		*alias
	}{RoleCompactionSummary, (*alias)(m)})
}

func (m *UnknownMessage) MarshalJSON() ([]byte, error) { return m.Raw, nil }

// roles are the roles [RoleOf] returns without a copy.
var roles = []Role{RoleUser, RoleAssistant, RoleToolResult, RoleSystem, RoleBashExecution,
	RoleCustom, RoleBranchSummary, RoleCompactionSummary}

// RoleOf returns the role of the message written in data, reading no
// further than its "role" member; a message without one (or with an
// empty or null one) is an error.
func RoleOf(data []byte) (Role, error) {
	// pi and gopi write the role first: `{"role":"user",...`.
	if r, ok := firstString(data, `{"role":"`); ok {
		for _, known := range roles {
			if string(r) == string(known) {
				return known, nil
			}
		}
		return Role(r), nil
	}
	r, err := memberString(data, "role")
	if err != nil {
		return "", fmt.Errorf("message: %w", err)
	}
	if r == "" {
		return "", fmt.Errorf("message: %w", errNoRole)
	}
	return Role(r), nil
}

// UnmarshalMessage decodes a message by its "role".
func UnmarshalMessage(data []byte) (Message, error) {
	role, err := RoleOf(data)
	if err != nil {
		return nil, err
	}
	var m Message
	switch role {
	case RoleUser:
		m = &UserMessage{}
	case RoleAssistant:
		m = &AssistantMessage{}
	case RoleToolResult:
		m = &ToolResultMessage{}
	case RoleBashExecution:
		m = &BashExecutionMessage{}
	case RoleCustom:
		m = &CustomMessage{}
	case RoleBranchSummary:
		m = &BranchSummaryMessage{}
	case RoleCompactionSummary:
		m = &CompactionSummaryMessage{}
	case RoleSystem:
		m = &SystemMessage{}
	default:
		// Kept as written, so it must be JSON through to its end.
		raw := bytes.TrimSpace(data)
		if !jsontext.Value(raw).IsValid(Lenient) {
			return nil, fmt.Errorf("%s message: %w", role, errNotJSON)
		}
		return &UnknownMessage{Role: role, Raw: append(json.RawMessage(nil), raw...)}, nil
	}
	if err := jsonv2.Unmarshal(data, m, Lenient); err != nil {
		return nil, fmt.Errorf("%s message: %w", role, err)
	}
	if a, ok := m.(*AssistantMessage); ok && a.Content == nil {
		a.Content = Contents{}
	}
	return m, nil
}

// Messages is a list of messages that decodes each element by its role.
type Messages []Message

func (ms Messages) MarshalJSON() ([]byte, error) {
	if ms == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]Message(ms))
}

func (ms *Messages) UnmarshalJSON(data []byte) error {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return err
	}
	out := make(Messages, 0, len(raws))
	for _, r := range raws {
		m, err := UnmarshalMessage(r)
		if err != nil {
			return err
		}
		out = append(out, m)
	}
	*ms = out
	return nil
}

// Clone returns a copy of m whose content slice can be changed without
// touching the original. Strings and raw JSON are shared: they are never
// modified in place.
func (m *AssistantMessage) Clone() *AssistantMessage {
	c := *m
	c.Content = append(Contents(nil), m.Content...)
	if c.Content == nil {
		c.Content = Contents{}
	}
	return &c
}

// UserText returns a user message made of one text block.
func UserText(text string, images ...ImageContent) *UserMessage {
	cs := Contents{TextContent{Text: text}}
	for _, img := range images {
		cs = append(cs, img)
	}
	return &UserMessage{Content: cs, Timestamp: Now()}
}
