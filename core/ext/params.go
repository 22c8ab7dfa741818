package ext

import (
	"encoding/json"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// The params and results of the protocol's methods (protocol.go), with
// their JSON names as the wire has them. Every call gopi makes also
// carries "rid", added on the way out (see [NodeHost.Call]).

// ---- host methods: gopi calls them ----

// ProjectTrustParams are [HostProjectTrust]'s: load paths and run their
// project_trust handlers for cwd. The answer is a [TrustAnswer].
type ProjectTrustParams struct {
	Cwd   string   `json:"cwd"`
	Paths []string `json:"paths"`
}

// TrustAnswer is what the project_trust handlers decided.
type TrustAnswer struct {
	// Trusted is "yes", "no" or "undecided" (no handler decided).
	Trusted string `json:"trusted"`
	// Remember asks for a yes or no to be saved in trust.json.
	Remember bool `json:"remember"`
	// Errors are the handlers that failed.
	Errors []ErrorEvent `json:"errors"`
}

// InitializeParams are [HostInitialize]'s: load the extensions. The
// answer is their [Registrations].
type InitializeParams struct {
	Cwd        string         `json:"cwd"`
	FlagValues map[string]any `json:"flagValues"`
	Paths      []string       `json:"paths"`
	State      InitialState   `json:"state"`
}

// InitialState is the state a host starts with, before the first
// [HostState] update.
type InitialState struct {
	Cwd            string `json:"cwd"`
	ProjectTrusted bool   `json:"projectTrusted"`
}

// StateUpdate is [HostState]'s params: the mirrored fields that changed
// (see [State]), and "entries": {reset, add} for the session's.
type StateUpdate map[string]any

// EventParams carry one hook event: the params of [HostEmit],
// [HostBoundary], [HostUserBash], [HostToolCall] and [HostToolResult].
type EventParams[E any] struct {
	Event E `json:"event"`
}

// Empty is the params or result of a method that has none: {}.
type Empty struct{}

// BoundaryResult is what turn_end or agent_before_settle handlers
// proposed ([HostBoundary]): session entries to append (pi's drafts:
// custom, custom_message, context_edit, compaction) and whether to make
// one more model request. Valid is false when the proposal failed gopi's
// checks; nothing is then appended.
type BoundaryResult struct {
	Entries  []json.RawMessage `json:"entries"`
	Continue bool              `json:"continue"`
	Valid    bool              `json:"valid"`
}

// UserBashResult is how a user_bash handler answered ([HostUserBash]):
// with the command's result, or with operations of its own (JavaScript,
// so only their presence crosses).
type UserBashResult struct {
	Operations json.RawMessage `json:"operations"`
	Result     *api.BashResult `json:"result"`
}

// ToolCallResult is the outcome of the tool_call handlers
// ([HostToolCall]).
type ToolCallResult struct {
	Block  bool            `json:"block"`
	Reason string          `json:"reason,omitempty"`
	Input  json.RawMessage `json:"input,omitempty"`
}

// ToolResultPatch is what tool_result handlers changed
// ([HostToolResult]); nil fields are unchanged.
type ToolResultPatch struct {
	Content json.RawMessage `json:"content,omitempty"`
	Details json.RawMessage `json:"details,omitempty"`
	// StructuredContent: as pi 1.5, content replaced without new
	// structured content drops the old, which may no longer match it.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           *bool           `json:"isError,omitempty"`
}

// InputParams are [HostInput]'s.
type InputParams struct {
	Images            json.RawMessage `json:"images,omitempty"`
	Source            string          `json:"source"`
	StreamingBehavior string          `json:"streamingBehavior,omitempty"`
	Text              string          `json:"text"`
}

// InputResult is what the input handlers decided: "continue",
// "transform" (Text and Images replace the input) or "handled".
type InputResult struct {
	Action string          `json:"action"`
	Text   string          `json:"text,omitempty"`
	Images json.RawMessage `json:"images,omitempty"`
}

// Messages is [HostContext]'s params and result: the messages of a model
// call.
type Messages struct {
	Messages json.RawMessage `json:"messages"`
}

// PayloadParams are [HostBeforeProviderRequest]'s: the provider's JSON
// body. The answer is the body that replaces it, or null.
type PayloadParams struct {
	Payload json.RawMessage `json:"payload"`
}

// HeadersParams are [HostBeforeProviderHeaders]'s: names in lower case.
// The answer maps a name to its value, or to null to remove it.
type HeadersParams struct {
	Headers map[string]*string `json:"headers"`
}

// MessageParams are [HostMessageEnd]'s: the message that ended. The
// answer is its replacement, or null.
type MessageParams struct {
	Message json.RawMessage `json:"message"`
}

// ResourcesDiscoverParams are [HostResourcesDiscover]'s.
type ResourcesDiscoverParams struct {
	Cwd    string `json:"cwd"`
	Reason string `json:"reason"`
}

// ResourcesOffered is what resources_discover handlers offered.
type ResourcesOffered struct {
	SkillPaths  []OfferedPath `json:"skillPaths"`
	PromptPaths []OfferedPath `json:"promptPaths"`
	ThemePaths  []OfferedPath `json:"themePaths"`
}

// OfferedPath is one resource a handler offered.
type OfferedPath struct {
	Path string `json:"path"`
}

// BeforeAgentStartEvent is [HostBeforeAgentStart]'s params: what
// before_agent_start tells the handlers (pi's event less its type), what
// started the run and the system prompt it would have.
type BeforeAgentStartEvent struct {
	// MessageType is "user" (a prompt: Prompt, Images) or "custom" (an
	// extension message that starts a run: Message).
	MessageType string          `json:"messageType"`
	Prompt      string          `json:"prompt,omitempty"`
	Images      json.RawMessage `json:"images,omitempty"`
	Message     json.RawMessage `json:"message,omitempty"`
	// SystemPrompt is the prompt as built; SystemPromptOptions what it is
	// built from, which handlers may change.
	SystemPrompt        string          `json:"systemPrompt"`
	SystemPromptOptions json.RawMessage `json:"systemPromptOptions,omitempty"`
}

// BeforeAgentStartResult is what before_agent_start handlers added: custom
// messages for the prompt, a replacement system prompt (nil when
// unchanged) and the system prompt options as they left them.
type BeforeAgentStartResult struct {
	Messages            []json.RawMessage `json:"messages"`
	SystemPrompt        *string           `json:"systemPrompt,omitempty"`
	SystemPromptOptions json.RawMessage   `json:"systemPromptOptions,omitempty"`
}

// ExecuteToolParams are [HostExecuteTool]'s. The answer is a
// [ToolOutput]; partial results come as [PeerToolUpdate].
type ExecuteToolParams struct {
	Name       string          `json:"name"`
	Params     json.RawMessage `json:"params"`
	ToolCallID string          `json:"toolCallId"`
}

// ToolOutput is an extension tool's result.
type ToolOutput struct {
	Content json.RawMessage `json:"content"`
	Details json.RawMessage `json:"details,omitempty"`
	// StructuredContent is the result as data (pi 1.5), when the tool
	// gave it.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError"`
	Terminate         bool            `json:"terminate"`
}

// CommandParams are [HostCommand]'s: run a slash command to its end.
type CommandParams struct {
	Args string `json:"args"`
	Name string `json:"name"`
}

// CancelParams are [HostCancel]'s: withdraw the call rid.
type CancelParams struct {
	RID int64 `json:"rid"`
}

// ---- peer methods: the extension host calls them ----

// ReadyParams are [PeerReady]'s: the host runs.
type ReadyParams struct {
	PID  int    `json:"pid"`
	Node string `json:"node"`
}

// ErrorEvent is a handler's failure, as the host reports it ([PeerError];
// the fields of pi's extension_error event).
type ErrorEvent struct {
	ExtensionPath string `json:"extensionPath"`
	Event         string `json:"event"`
	Error         string `json:"error"`
	Stack         string `json:"stack,omitempty"`
}

// UIAskParams are [PeerUIAsk]'s: a dialog, and the id ([PeerUICancel])
// that withdraws it. The answer is an [api.UIResponse].
type UIAskParams struct {
	api.UIRequest
	RID string `json:"rid"`
}

// UICancelParams are [PeerUICancel]'s.
type UICancelParams struct {
	RID string `json:"rid"`
}

// BoundaryPreviewParams are [PeerBoundaryPreview]'s: the context a
// boundary's proposal so far would make.
type BoundaryPreviewParams struct {
	Event   string            `json:"event"`
	Entries []json.RawMessage `json:"entries"`
}

// BoundaryPreview is a boundary handler's event.context (pi's
// BoundaryContextPreview).
type BoundaryPreview struct {
	CanContinue     bool                     `json:"canContinue"`
	ContextEntries  []session.ProjectedEntry `json:"contextEntries"`
	ContextMessages []llm.Message            `json:"contextMessages"`
	LLMMessages     []llm.Message            `json:"llmMessages"`
	PendingMessages []llm.Message            `json:"pendingMessages"`
}

// ModelParams name a model: [PeerSetModel]'s and [PeerGetAPIKey]'s.
type ModelParams struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
}

// SetModelResult answers [PeerSetModel]: on success the model and the
// level now in use.
type SetModelResult struct {
	OK            bool              `json:"ok"`
	Model         *llm.Model        `json:"model,omitempty"`
	ThinkingLevel llm.ThinkingLevel `json:"thinkingLevel,omitempty"`
}

// APIKeyResult answers [PeerGetAPIKey]. A model without credentials is
// not a failure: pi answers ok without a key.
type APIKeyResult struct {
	OK      bool              `json:"ok"`
	Error   string            `json:"error,omitempty"`
	APIKey  string            `json:"apiKey,omitempty"`
	Headers map[string]string `json:"headers"`
}

// MarshalJSON leaves the headers out of a failure, as pi does.
func (r APIKeyResult) MarshalJSON() ([]byte, error) {
	if !r.OK {
		return json.Marshal(struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}{false, r.Error})
	}
	type wire APIKeyResult
	return json.Marshal(wire(r))
}

// CompactParams are [PeerCompact]'s. The answer is an
// [api.CompactionResult].
type CompactParams struct {
	CustomInstructions string `json:"customInstructions"`
}

// NewSessionParams are [PeerNewSession]'s. The answer is an
// [api.CancelledResult].
type NewSessionParams struct {
	Options struct {
		ParentSession string `json:"parentSession"`
	} `json:"options"`
}

// ForkParams are [PeerFork]'s.
type ForkParams struct {
	EntryID string `json:"entryId"`
}

// ForkResult answers [PeerFork].
type ForkResult struct {
	Cancelled    bool   `json:"cancelled"`
	SelectedText string `json:"selectedText"`
}

// SwitchSessionParams are [PeerSwitchSession]'s. The answer is an
// [api.CancelledResult].
type SwitchSessionParams struct {
	SessionPath string `json:"sessionPath"`
}

// NavigateTreeParams are [PeerNavigateTree]'s.
type NavigateTreeParams struct {
	TargetID string          `json:"targetId"`
	Options  NavigateOptions `json:"options"`
}

// NavigateOptions are ctx.navigateTree's options.
type NavigateOptions struct {
	Summarize           bool    `json:"summarize"`
	CustomInstructions  *string `json:"customInstructions"`
	ReplaceInstructions *bool   `json:"replaceInstructions"`
	Label               *string `json:"label"`
}

// NavigateResult is what ctx.navigateTree resolves to.
type NavigateResult struct {
	Cancelled    bool            `json:"cancelled"`
	Aborted      bool            `json:"aborted,omitempty"`
	EditorText   *string         `json:"editorText,omitempty"`
	SummaryEntry json.RawMessage `json:"summaryEntry,omitempty"`
}

// CustomMessage is a custom message as an extension sends it.
type CustomMessage struct {
	CustomType string          `json:"customType"`
	Content    json.RawMessage `json:"content"`
	Display    bool            `json:"display"`
	Details    json.RawMessage `json:"details"`
}

// SendMessageParams are [PeerSendMessage]'s (pi.sendMessage).
type SendMessageParams struct {
	Message CustomMessage `json:"message"`
	Options struct {
		TriggerTurn *bool  `json:"triggerTurn"`
		DeliverAs   string `json:"deliverAs"`
	} `json:"options"`
}

// SendUserMessageParams are [PeerSendUserMessage]'s (pi.sendUserMessage):
// content is a string or content blocks.
type SendUserMessageParams struct {
	Content json.RawMessage `json:"content"`
	Options struct {
		DeliverAs string `json:"deliverAs"`
	} `json:"options"`
}

// AppendEntryParams are [PeerAppendEntry]'s.
type AppendEntryParams struct {
	CustomType string          `json:"customType"`
	Data       json.RawMessage `json:"data"`
}

// NameParams are [PeerSetSessionName]'s and [PeerUnregisterProvider]'s.
type NameParams struct {
	Name string `json:"name"`
}

// SetLabelParams are [PeerSetLabel]'s.
type SetLabelParams struct {
	EntryID string `json:"entryId"`
	Label   string `json:"label"`
}

// SetActiveToolsParams are [PeerSetActiveTools]'s.
type SetActiveToolsParams struct {
	Names []string `json:"names"`
}

// SetThinkingLevelParams are [PeerSetThinkingLevel]'s.
type SetThinkingLevelParams struct {
	Level string `json:"level"`
}

// CallToolParams are [PeerCallTool]'s: the tool ParentToolCallID's tool
// calls, with the id the extension host gave the call
// ("<parent id>/<n>", as pi numbers them). The answer is a [ToolOutput].
type CallToolParams struct {
	ToolCallID       string          `json:"toolCallId"`
	ParentToolCallID string          `json:"parentToolCallId"`
	Name             string          `json:"name"`
	Args             json.RawMessage `json:"args"`
}

// CallToolCancelParams are [PeerCallToolCancel]'s.
type CallToolCancelParams struct {
	ToolCallID string `json:"toolCallId"`
}

// CallToolUpdateParams are [HostCallToolUpdate]'s: a partial result of
// the call ToolCallID.
type CallToolUpdateParams struct {
	ToolCallID string `json:"toolCallId"`
	Partial    any    `json:"partial"`
}

// ToolUpdateParams are [PeerToolUpdate]'s: a tool's partial result.
type ToolUpdateParams struct {
	ToolCallID string          `json:"toolCallId"`
	Partial    json.RawMessage `json:"partial"`
}

// RegisterProviderParams are [PeerRegisterProvider]'s: the config's JSON,
// and the names of its members that are functions (which do not cross).
type RegisterProviderParams struct {
	Name      string          `json:"name"`
	Config    json.RawMessage `json:"config"`
	Functions []string        `json:"functions"`
}

// ValidateMCPServerResult is [PeerValidateMCPServer]'s answer to an
// [MCPServer] (its params): Error is the message the extension's
// pi.registerMcpServer throws; otherwise Config is the config as pi's
// validation leaves it (exposure aliases resolved), which the host keeps.
type ValidateMCPServerResult struct {
	Config json.RawMessage `json:"config,omitempty"`
	Error  string          `json:"error,omitempty"`
}
