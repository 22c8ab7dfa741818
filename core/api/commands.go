package api

import (
	"encoding/json"

	"github.com/gopi-dev/gopi/core/llm"
)

// Command names, as pi's "type" field (and, prefixed with "pi/", as
// JSON-RPC methods).
const (
	CmdPrompt              = "prompt"
	CmdSteer               = "steer"
	CmdFollowUp            = "follow_up"
	CmdAbort               = "abort"
	CmdNewSession          = "new_session"
	CmdGetState            = "get_state"
	CmdGetMessages         = "get_messages"
	CmdSetModel            = "set_model"
	CmdCycleModel          = "cycle_model"
	CmdGetAvailableModels  = "get_available_models"
	CmdSetThinkingLevel    = "set_thinking_level"
	CmdCycleThinkingLevel  = "cycle_thinking_level"
	CmdSetSteeringMode     = "set_steering_mode"
	CmdSetFollowUpMode     = "set_follow_up_mode"
	CmdCompact             = "compact"
	CmdSetAutoCompaction   = "set_auto_compaction"
	CmdSetAutoRetry        = "set_auto_retry"
	CmdAbortRetry          = "abort_retry"
	CmdBash                = "bash"
	CmdAbortBash           = "abort_bash"
	CmdGetSessionStats     = "get_session_stats"
	CmdExportHTML          = "export_html"
	CmdSwitchSession       = "switch_session"
	CmdFork                = "fork"
	CmdClone               = "clone"
	CmdGetForkMessages     = "get_fork_messages"
	CmdGetLastAssistantTxt = "get_last_assistant_text"
	CmdSetSessionName      = "set_session_name"
	CmdGetCommands         = "get_commands"
	CmdListSessions        = "list_sessions"
	CmdGetMCPServers       = "get_mcp_servers"
	CmdExtensionUIResponse = "extension_ui_response"

	// pi 1.5's additions.
	CmdClearQueue                 = "clear_queue"
	CmdGetAvailableThinkingLevels = "get_available_thinking_levels"
	CmdGetEntries                 = "get_entries"
	CmdGetTree                    = "get_tree"
)

// Disposition says what became of a prompt, steer or follow_up (pi 1.5's
// data.disposition).
type Disposition string

const (
	DispositionStarted Disposition = "started" // a run started for it
	DispositionQueued  Disposition = "queued"  // it waits in a queue
	DispositionHandled Disposition = "handled" // consumed without a run
)

// DispositionResult is the data of prompt, steer and follow_up.
type DispositionResult struct {
	Disposition Disposition `json:"disposition"`
}

// QueueResult is clear_queue's data: the text of each removed message.
type QueueResult struct {
	Steering []string `json:"steering"`
	FollowUp []string `json:"followUp"`
}

// LevelsResult is get_available_thinking_levels' data.
type LevelsResult struct {
	Levels []llm.ThinkingLevel `json:"levels"`
}

// EntriesParams is get_entries: only entries after Since, when set.
type EntriesParams struct {
	Since *string `json:"since,omitempty"`
}

// EntriesResult is get_entries' data: session entries as stored (each
// already JSON) and the current leaf (null for an empty session).
type EntriesResult struct {
	Entries []json.RawMessage `json:"entries"`
	LeafID  *string           `json:"leafId"`
}

// TreeResult is get_tree's data: the entry forest and the current leaf.
type TreeResult struct {
	Tree   json.RawMessage `json:"tree"`
	LeafID *string         `json:"leafId"`
}

// QueueMode is how queued steering or follow-up messages are delivered.
type QueueMode string

const (
	QueueAll        QueueMode = "all"
	QueueOneAtATime QueueMode = "one-at-a-time"
)

// StreamingBehavior says how a prompt sent during a run is queued.
type StreamingBehavior string

const (
	BehaviorSteer    StreamingBehavior = "steer"
	BehaviorFollowUp StreamingBehavior = "followUp"
)

// PromptParams is the "prompt" command.
type PromptParams struct {
	Message           string             `json:"message"`
	Images            []llm.ImageContent `json:"images,omitempty"`
	StreamingBehavior StreamingBehavior  `json:"streamingBehavior,omitempty"`
}

// MessageParams is "steer" and "follow_up".
type MessageParams struct {
	Message string             `json:"message"`
	Images  []llm.ImageContent `json:"images,omitempty"`
}

// NewSessionParams is "new_session".
type NewSessionParams struct {
	ParentSession string `json:"parentSession,omitempty"`
}

// CancelledResult answers commands an extension may cancel.
type CancelledResult struct {
	Cancelled bool `json:"cancelled"`
}

// State is "get_state"'s data.
type State struct {
	Model                 *llm.Model        `json:"model"`
	ThinkingLevel         llm.ThinkingLevel `json:"thinkingLevel"`
	IsStreaming           bool              `json:"isStreaming"`
	IsCompacting          bool              `json:"isCompacting"`
	SteeringMode          QueueMode         `json:"steeringMode"`
	FollowUpMode          QueueMode         `json:"followUpMode"`
	SessionFile           string            `json:"sessionFile,omitempty"`
	SessionID             string            `json:"sessionId"`
	SessionName           string            `json:"sessionName,omitempty"`
	AutoCompactionEnabled bool              `json:"autoCompactionEnabled"`
	MessageCount          int               `json:"messageCount"`
	PendingMessageCount   int               `json:"pendingMessageCount"`
	// Sandbox is gopi's own (pi has none): the sandbox the model's
	// commands run in. Absent with the mode off (and when the host was
	// given none), so get_state stays pi's.
	Sandbox *SandboxState `json:"sandbox,omitempty"`
}

// SandboxState is get_state's "sandbox": the mode (read-only,
// workspace-write), whether commands reach the network, what confines
// them ("landlock-fs", "landlock-net", "seccomp" on Linux, "seatbelt"
// on macOS; empty when the mode cannot be enforced) and, when it cannot, why (commands are then
// refused).
type SandboxState struct {
	Mode    string   `json:"mode"`
	Network bool     `json:"network"`
	Layers  []string `json:"layers"`
	Problem string   `json:"problem,omitempty"`
}

// MessagesResult is "get_messages"'s data.
type MessagesResult struct {
	Messages llm.Messages `json:"messages"`
}

// SetModelParams is "set_model".
type SetModelParams struct {
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
}

// CycleModelResult is "cycle_model"'s data (nil when there is nothing to
// cycle to).
type CycleModelResult struct {
	Model         *llm.Model        `json:"model"`
	ThinkingLevel llm.ThinkingLevel `json:"thinkingLevel"`
	IsScoped      bool              `json:"isScoped"`
}

// ModelsResult is "get_available_models"'s data.
type ModelsResult struct {
	Models []*llm.Model `json:"models"`
}

// ThinkingParams is "set_thinking_level".
type ThinkingParams struct {
	Level llm.ThinkingLevel `json:"level"`
}

// LevelResult is "cycle_thinking_level"'s data (nil for a model without
// reasoning).
type LevelResult struct {
	Level llm.ThinkingLevel `json:"level"`
}

// ModeParams is "set_steering_mode" and "set_follow_up_mode".
type ModeParams struct {
	Mode QueueMode `json:"mode"`
}

// CompactParams is "compact".
type CompactParams struct {
	CustomInstructions string `json:"customInstructions,omitempty"`
}

// CompactionResult is "compact"'s data and auto_compaction_end's result.
type CompactionResult struct {
	Summary          string `json:"summary"`
	FirstKeptEntryID string `json:"firstKeptEntryId"`
	TokensBefore     int    `json:"tokensBefore"`
	// EstimatedTokensAfter estimates the rebuilt context (pi 1.5), the
	// same four-characters-a-token heuristic as compaction's thresholds.
	EstimatedTokensAfter int `json:"estimatedTokensAfter"`
	// Usage is what the summary calls used (pi 1.5).
	Usage   *llm.Usage      `json:"usage,omitempty"`
	Details json.RawMessage `json:"details,omitempty"`
}

// EnabledParams is "set_auto_compaction" and "set_auto_retry".
type EnabledParams struct {
	Enabled bool `json:"enabled"`
}

// BashParams is "bash".
type BashParams struct {
	Command string `json:"command"`
	// ExcludeFromContext keeps the result in the session but out of the
	// model's context (pi 1.5).
	ExcludeFromContext bool `json:"excludeFromContext,omitempty"`
}

// BashResult is "bash"'s data.
type BashResult struct {
	Output         string `json:"output"`
	ExitCode       *int   `json:"exitCode"`
	Cancelled      bool   `json:"cancelled"`
	Truncated      bool   `json:"truncated"`
	FullOutputPath string `json:"fullOutputPath,omitempty"`
}

// TokenStats are the token totals of get_session_stats.
type TokenStats struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
	Total      int `json:"total"`
}

// ContextUsage is pi 0.73's estimate of how full the context window is.
// Tokens and Percent are null right after a compaction, until a model reply
// reports the new size.
type ContextUsage struct {
	Tokens        *int     `json:"tokens"`
	ContextWindow int      `json:"contextWindow"`
	Percent       *float64 `json:"percent"`
}

// SessionStats is "get_session_stats"'s data.
type SessionStats struct {
	SessionFile       string        `json:"sessionFile,omitempty"`
	SessionID         string        `json:"sessionId"`
	UserMessages      int           `json:"userMessages"`
	AssistantMessages int           `json:"assistantMessages"`
	ToolCalls         int           `json:"toolCalls"`
	ToolResults       int           `json:"toolResults"`
	TotalMessages     int           `json:"totalMessages"`
	Tokens            TokenStats    `json:"tokens"`
	Cost              float64       `json:"cost"`
	ContextUsage      *ContextUsage `json:"contextUsage,omitempty"`
}

// ExportParams is "export_html".
type ExportParams struct {
	OutputPath string `json:"outputPath,omitempty"`
}

// PathResult is "export_html"'s data.
type PathResult struct {
	Path string `json:"path"`
}

// SwitchSessionParams is "switch_session".
type SwitchSessionParams struct {
	SessionPath string `json:"sessionPath"`
}

// ForkParams is "fork".
type ForkParams struct {
	EntryID string `json:"entryId"`
}

// ForkResult is "fork"'s data.
type ForkResult struct {
	Text      string `json:"text"`
	Cancelled bool   `json:"cancelled"`
}

// ForkMessage is one entry of "get_fork_messages".
type ForkMessage struct {
	EntryID string `json:"entryId"`
	Text    string `json:"text"`
}

// ForkMessagesResult is "get_fork_messages"'s data.
type ForkMessagesResult struct {
	Messages []ForkMessage `json:"messages"`
}

// TextResult is "get_last_assistant_text"'s data; Text is nil when there
// is no assistant message.
type TextResult struct {
	Text *string `json:"text"`
}

// NameParams is "set_session_name".
type NameParams struct {
	Name string `json:"name"`
}

// SlashCommand is one entry of "get_commands".
type SlashCommand struct {
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Source      string      `json:"source"`
	Location    string      `json:"location,omitempty"`
	Path        string      `json:"path,omitempty"`
	SourceInfo  *SourceInfo `json:"sourceInfo,omitempty"`
	// Input hints at the arguments the command takes ("" when it takes
	// none), for dialects whose clients show it; pi's get_commands has no
	// such field.
	Input string `json:"-"`
}

// SourceInfo is pi 0.73's description of where a resource came from.
type SourceInfo struct {
	Path    string `json:"path"`
	Source  string `json:"source"`
	Scope   string `json:"scope"`
	Origin  string `json:"origin"`
	BaseDir string `json:"baseDir,omitempty"`
}

// CommandsResult is "get_commands"'s data.
type CommandsResult struct {
	Commands []SlashCommand `json:"commands"`
}

// ListSessionsParams is gopi's "list_sessions" (not in pi).
type ListSessionsParams struct {
	// All lists the sessions of every directory, not only the cwd's.
	All bool `json:"all,omitempty"`
}

// SessionInfo is one entry of "list_sessions".
type SessionInfo struct {
	ID           string `json:"id"`
	Path         string `json:"path"`
	Cwd          string `json:"cwd,omitempty"`
	Name         string `json:"name,omitempty"`
	FirstMessage string `json:"firstMessage"`
	MessageCount int    `json:"messageCount"`
	Modified     string `json:"modified"`
}

// SessionsResult is "list_sessions"'s data.
type SessionsResult struct {
	Sessions []SessionInfo `json:"sessions"`
}

// MCPState is where an MCP server's connection stands.
type MCPState string

const (
	MCPConnecting   MCPState = "connecting"   // the session started it; it has not answered yet
	MCPConnected    MCPState = "connected"    // its tools are offered
	MCPFailed       MCPState = "failed"       // the last attempt to connect failed (see error)
	MCPDisconnected MCPState = "disconnected" // the connection dropped; the next call reconnects
	MCPDisabled     MCPState = "disabled"     // enabled: false in mcp.json
	MCPClosed       MCPState = "closed"       // the session is ending
	// MCPNeedsAuth: the server wants an OAuth sign-in (`gopi mcp login
	// NAME`); pi's "needs-auth", which its lists show as "needs sign-in".
	MCPNeedsAuth MCPState = "needs-auth"
)

// MCPServersResult is gopi's "get_mcp_servers" (not in pi): the MCP
// servers of the session, in mcp.json's order then those extensions
// registered, and their state.
type MCPServersResult struct {
	Servers []MCPServer `json:"servers"`
}

// MCPServer is one server of "get_mcp_servers".
type MCPServer struct {
	Name string `json:"name"`
	// Scope is "global" (the agent directory's mcp.json), "project"
	// (.pi/mcp.json) or "extension" (an extension registered it); Source
	// is that file or the extension's, Override the project file whose
	// bare entry changed a global server.
	Scope    string `json:"scope"`
	Source   string `json:"source"`
	Override string `json:"override,omitempty"`
	Enabled  bool   `json:"enabled"`
	// Exposure is the server's: codemode, deferred, direct or hidden.
	Exposure string `json:"exposure"`
	// Type is "stdio" or "http"; Transport the command line or the URL.
	Type      string   `json:"type"`
	Transport string   `json:"transport"`
	State     MCPState `json:"state"`
	// Error says why the server failed or dropped, with the end of a stdio
	// server's stderr, or how to sign in to one that needs it.
	Error string `json:"error,omitempty"`
	// Resources reports whether the connected server offers resources.
	Resources bool `json:"resources,omitempty"`
	// Tools are the server's tools as last listed (none before it first
	// connects).
	Tools []MCPTool `json:"tools"`
}

// MCPTool is one tool of an MCP server.
type MCPTool struct {
	// Name is the model's name for it (mcp__<server>__<tool>); RemoteName
	// the server's.
	Name       string `json:"name"`
	RemoteName string `json:"remoteName"`
	// Exposure is the tool's own: the server's or its toolExposure entry.
	Exposure string `json:"exposure"`
	// ReadOnly is the server's readOnlyHint: the approval gate does not
	// ask about the tool under "writes".
	ReadOnly bool `json:"readOnly"`
}
