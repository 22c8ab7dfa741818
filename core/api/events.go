package api

import "encoding/json"

// Event is anything sent to the client as an event. Agent events
// (core/agent.Event) and the runtime's own below all satisfy it.
type Event interface {
	EventType() string
}

// Event names added by the runtime around the agent loop.
const (
	EventAutoCompactionStart = "auto_compaction_start"
	EventAutoCompactionEnd   = "auto_compaction_end"
	EventAutoRetryStart      = "auto_retry_start"
	EventAutoRetryEnd        = "auto_retry_end"
	EventExtensionError      = "extension_error"
	EventAgentSettled        = "agent_settled"
	EventBashExecutionUpdate = "bash_execution_update"
	EventCompactionStart     = "compaction_start"
	EventCompactionEnd       = "compaction_end"
	EventQueueUpdate         = "queue_update"
	EventExtensionUIRequest  = "extension_ui_request"
	EventThinkingLevelChange = "thinking_level_changed"
	EventSessionInfoChanged  = "session_info_changed"
	EventEntryAppended       = "entry_appended"
	EventSessionWriteError   = "session_write_error"
	EventSessionSaved        = "session_saved"
)

// AutoCompactionStart: compaction began. Reason is "threshold", "overflow"
// or (manual compact) "manual".
type AutoCompactionStart struct {
	Reason string `json:"reason"`
}

// AutoCompactionEnd: compaction finished, failed or was aborted.
type AutoCompactionEnd struct {
	Result       *CompactionResult `json:"result"`
	Aborted      bool              `json:"aborted"`
	WillRetry    bool              `json:"willRetry"`
	ErrorMessage string            `json:"errorMessage,omitempty"`
}

// AutoRetryStart: a transient failure will be retried after DelayMs.
type AutoRetryStart struct {
	Attempt      int    `json:"attempt"`
	MaxAttempts  int    `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// AutoRetryEnd: retrying stopped, with success or the final error.
type AutoRetryEnd struct {
	Success    bool   `json:"success"`
	Attempt    int    `json:"attempt"`
	FinalError string `json:"finalError,omitempty"`
}

// ExtensionError: an extension handler failed.
type ExtensionError struct {
	ExtensionPath string `json:"extensionPath"`
	Event         string `json:"event"`
	Error         string `json:"error"`
}

func (AutoCompactionStart) EventType() string { return EventAutoCompactionStart }
func (AutoCompactionEnd) EventType() string   { return EventAutoCompactionEnd }
func (AutoRetryStart) EventType() string      { return EventAutoRetryStart }
func (AutoRetryEnd) EventType() string        { return EventAutoRetryEnd }
func (ExtensionError) EventType() string      { return EventExtensionError }

// typed adds "type" as the first field of an event's JSON.
func typed[T any](name string, v T) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	head := `{"type":` + quote(name)
	if string(body) == "{}" {
		return []byte(head + "}"), nil
	}
	return []byte(head + "," + string(body[1:])), nil
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (e AutoCompactionStart) MarshalJSON() ([]byte, error) {
	type alias AutoCompactionStart
	return typed(e.EventType(), alias(e))
}

func (e AutoCompactionEnd) MarshalJSON() ([]byte, error) {
	type alias AutoCompactionEnd
	return typed(e.EventType(), alias(e))
}

func (e AutoRetryStart) MarshalJSON() ([]byte, error) {
	type alias AutoRetryStart
	return typed(e.EventType(), alias(e))
}

func (e AutoRetryEnd) MarshalJSON() ([]byte, error) {
	type alias AutoRetryEnd
	return typed(e.EventType(), alias(e))
}

func (e ExtensionError) MarshalJSON() ([]byte, error) {
	type alias ExtensionError
	return typed(e.EventType(), alias(e))
}

// AgentSettled: the prompt is over. No retry, compaction recovery or
// queued message will continue it; Aborted says it ended by an abort
// (pi 1.5). Every prompt that started a run ends with one.
type AgentSettled struct {
	Aborted bool `json:"aborted"`
}

// QueueUpdate: the steering or follow-up queue changed; both fields hold
// the whole queue, as the text of each message.
type QueueUpdate struct {
	Steering []string `json:"steering"`
	FollowUp []string `json:"followUp"`
}

func (AgentSettled) EventType() string { return EventAgentSettled }
func (QueueUpdate) EventType() string  { return EventQueueUpdate }

func (e AgentSettled) MarshalJSON() ([]byte, error) {
	type alias AgentSettled
	return typed(e.EventType(), alias(e))
}

func (e QueueUpdate) MarshalJSON() ([]byte, error) {
	type alias QueueUpdate
	if e.Steering == nil {
		e.Steering = []string{}
	}
	if e.FollowUp == nil {
		e.FollowUp = []string{}
	}
	return typed(e.EventType(), alias(e))
}

// BashExecutionUpdate: a piece of a running bash command's output, as it
// arrives (pi 1.5). ID repeats the bash command's id when it had one.
type BashExecutionUpdate struct {
	ID    json.RawMessage `json:"id,omitempty"`
	Delta string          `json:"delta"`
}

func (BashExecutionUpdate) EventType() string { return EventBashExecutionUpdate }

func (e BashExecutionUpdate) MarshalJSON() ([]byte, error) {
	type alias BashExecutionUpdate
	return typed(e.EventType(), alias(e))
}

// CompactionStart: a compaction began (pi 1.5; manual ones too). Reason is
// "manual", "threshold" or "overflow".
type CompactionStart struct {
	Reason string `json:"reason"`
}

// CompactionEnd: a compaction finished (Result), failed (ErrorMessage) or
// was aborted; WillRetry says the overflowed prompt is tried again.
type CompactionEnd struct {
	Reason       string            `json:"reason"`
	Result       *CompactionResult `json:"result,omitempty"`
	Aborted      bool              `json:"aborted"`
	WillRetry    bool              `json:"willRetry"`
	ErrorMessage string            `json:"errorMessage,omitempty"`
}

func (CompactionStart) EventType() string { return EventCompactionStart }
func (CompactionEnd) EventType() string   { return EventCompactionEnd }

func (e CompactionStart) MarshalJSON() ([]byte, error) {
	type alias CompactionStart
	return typed(e.EventType(), alias(e))
}

func (e CompactionEnd) MarshalJSON() ([]byte, error) {
	type alias CompactionEnd
	return typed(e.EventType(), alias(e))
}

// ThinkingLevelChanged: the active thinking level changed (pi 1.5), by a
// command or because a model switch clamped it.
type ThinkingLevelChanged struct {
	Level string `json:"level"`
}

// SessionInfoChanged: the session's display name changed (pi 1.5); a nil
// Name means it was cleared.
type SessionInfoChanged struct {
	Name *string `json:"name,omitempty"`
}

// EntryAppended: an extension appended a custom entry (pi.appendEntry);
// Entry is the session entry as saved.
type EntryAppended struct {
	Entry json.RawMessage `json:"entry"`
}

func (EntryAppended) EventType() string { return EventEntryAppended }

func (e EntryAppended) MarshalJSON() ([]byte, error) {
	type alias EntryAppended
	return typed(e.EventType(), alias(e))
}

func (ThinkingLevelChanged) EventType() string { return EventThinkingLevelChange }
func (SessionInfoChanged) EventType() string   { return EventSessionInfoChanged }

func (e ThinkingLevelChanged) MarshalJSON() ([]byte, error) {
	type alias ThinkingLevelChanged
	return typed(e.EventType(), alias(e))
}

func (e SessionInfoChanged) MarshalJSON() ([]byte, error) {
	type alias SessionInfoChanged
	return typed(e.EventType(), alias(e))
}

// Event names of a summary request's retries (pi 1.5).
const (
	EventSummarizationRetryScheduled    = "summarization_retry_scheduled"
	EventSummarizationRetryAttemptStart = "summarization_retry_attempt_start"
	EventSummarizationRetryFinished     = "summarization_retry_finished"
)

// SummarizationRetryScheduled: a compaction's summary request failed
// transiently and is tried again after DelayMs.
type SummarizationRetryScheduled struct {
	Attempt      int    `json:"attempt"`
	MaxAttempts  int    `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// SummarizationRetryAttemptStart: the next attempt begins. Source is
// "compaction" (or "branchSummary"); Reason is the compaction's.
type SummarizationRetryAttemptStart struct {
	Source string `json:"source"`
	Reason string `json:"reason,omitempty"`
}

// SummarizationRetryFinished: retrying is over, whatever the outcome.
type SummarizationRetryFinished struct{}

func (SummarizationRetryScheduled) EventType() string { return EventSummarizationRetryScheduled }
func (SummarizationRetryAttemptStart) EventType() string {
	return EventSummarizationRetryAttemptStart
}
func (SummarizationRetryFinished) EventType() string { return EventSummarizationRetryFinished }

func (e SummarizationRetryScheduled) MarshalJSON() ([]byte, error) {
	type alias SummarizationRetryScheduled
	return typed(e.EventType(), alias(e))
}

func (e SummarizationRetryAttemptStart) MarshalJSON() ([]byte, error) {
	type alias SummarizationRetryAttemptStart
	return typed(e.EventType(), alias(e))
}

func (e SummarizationRetryFinished) MarshalJSON() ([]byte, error) {
	return typed(e.EventType(), struct{}{})
}

// SessionWriteError: the session file could not be written (gopi only;
// clients that do not know it ignore it). The entries stay in memory and
// every later write, and exit, tries again; SessionSaved says when one
// worked.
type SessionWriteError struct {
	Error       string `json:"error"`
	SessionFile string `json:"sessionFile"`
}

// SessionSaved: after a SessionWriteError, the file holds every entry
// again.
type SessionSaved struct {
	SessionFile string `json:"sessionFile"`
}

func (SessionWriteError) EventType() string { return EventSessionWriteError }
func (SessionSaved) EventType() string      { return EventSessionSaved }

func (e SessionWriteError) MarshalJSON() ([]byte, error) {
	type alias SessionWriteError
	return typed(e.EventType(), alias(e))
}

func (e SessionSaved) MarshalJSON() ([]byte, error) {
	type alias SessionSaved
	return typed(e.EventType(), alias(e))
}

// EventMCPServerState is gopi's own event (pi has none like it).
const EventMCPServerState = "mcp_server_state"

// MCPServerState: an MCP server's state or tools changed (gopi only;
// clients that do not know it ignore it): it connected, failed to, dropped,
// is connecting again, or listed changed tools. Server is the server as
// "get_mcp_servers" lists it now.
type MCPServerState struct {
	Server MCPServer `json:"server"`
}

func (MCPServerState) EventType() string { return EventMCPServerState }

func (e MCPServerState) MarshalJSON() ([]byte, error) {
	type alias MCPServerState
	return typed(e.EventType(), alias(e))
}
