package main

import (
	"encoding/json"
	"reflect"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

// union is a Go interface whose values the wire tells apart by one
// member: "type" for events, content blocks and stream events, "role"
// for messages.
type union struct {
	name, doc, tag string
	// iface is the Go interface the union stands for, where there is one.
	iface reflect.Type
	// sliceTypes are named slices of it that write a plain array.
	sliceTypes []reflect.Type
	members    []member
}

// member is one kind of value of a union: a struct of core/api or
// core/llm whose MarshalJSON adds the tag before its fields (goType), or
// one of the objects a value writes by hand for each tag (shape, below).
type member struct {
	goType reflect.Type
	tags   []string

	name, doc string
	shape     reflect.Type
	samples   []any
}

// tagged is a member for a struct whose tag its own method names.
func tagged[T any]() member {
	var tag string
	switch v := any(new(T)).(type) {
	case api.Event:
		tag = v.EventType()
	case llm.Message:
		tag = string(v.MessageRole())
	case llm.Content:
		tag = string(v.ContentType())
	default:
		failf("%T names no tag", v)
	}
	return member{goType: reflect.TypeFor[T](), tags: []string{tag}}
}

// apiEvents are the events core/api declares. The test checks that the
// list names every type there with an EventType method.
func apiEvents() []member {
	return []member{
		tagged[api.AgentSettled](),
		tagged[api.QueueUpdate](),
		tagged[api.AutoCompactionStart](),
		tagged[api.AutoCompactionEnd](),
		tagged[api.AutoRetryStart](),
		tagged[api.AutoRetryEnd](),
		tagged[api.CompactionStart](),
		tagged[api.CompactionEnd](),
		tagged[api.SummarizationRetryScheduled](),
		tagged[api.SummarizationRetryAttemptStart](),
		tagged[api.SummarizationRetryFinished](),
		tagged[api.BashExecutionUpdate](),
		tagged[api.ThinkingLevelChanged](),
		tagged[api.SessionInfoChanged](),
		tagged[api.EntryAppended](),
		tagged[api.ExtensionError](),
		tagged[api.SessionWriteError](),
		tagged[api.SessionSaved](),
		tagged[api.MCPServerState](),
		tagged[api.CheckpointCreated](),
		tagged[api.CheckpointRestored](),
		tagged[api.UIRequest](),
	}
}

// The objects agent.Event.MarshalJSON writes, one for each type, without
// "type"; the test marshals an event of each type to check them.
type (
	messageShape struct {
		Message llm.Message `json:"message"`
	}
	agentEndShape struct {
		Messages  []llm.Message `json:"messages"`
		WillRetry bool          `json:"willRetry"`
	}
	turnEndShape struct {
		Message     llm.Message              `json:"message"`
		ToolResults []*llm.ToolResultMessage `json:"toolResults"`
	}
	// message_update as the JSON-RPC dialect sends it unless the client
	// asks for fullUpdates: no message so far, the usage so far instead.
	messageUpdateShape struct {
		Usage          llm.Usage       `json:"usage"`
		AssistantEvent llm.StreamEvent `json:"assistantMessageEvent"`
	}
	messageUpdateFullShape struct {
		Message        llm.Message     `json:"message,omitempty"`
		AssistantEvent llm.StreamEvent `json:"assistantMessageEvent"`
	}
	toolStartShape struct {
		ToolCallID string          `json:"toolCallId"`
		ToolName   string          `json:"toolName"`
		Args       json.RawMessage `json:"args"`
		Parent     string          `json:"parentToolCallId,omitempty"`
	}
	toolUpdateShape struct {
		ToolCallID    string          `json:"toolCallId"`
		ToolName      string          `json:"toolName"`
		Args          json.RawMessage `json:"args"`
		PartialResult agent.Result    `json:"partialResult"`
		Parent        string          `json:"parentToolCallId,omitempty"`
	}
	toolEndShape struct {
		ToolCallID string       `json:"toolCallId"`
		ToolName   string       `json:"toolName"`
		Result     agent.Result `json:"result"`
		IsError    bool         `json:"isError"`
		DurationMs int64        `json:"durationMs,omitempty"`
		Parent     string       `json:"parentToolCallId,omitempty"`
	}
	emptyShape struct{}
)

func agentShape[S any](typ agent.EventType, name, doc string, samples ...agent.Event) member {
	if len(samples) == 0 {
		samples = []agent.Event{{Type: typ}}
	}
	m := member{name: name, doc: doc, shape: reflect.TypeFor[S](), tags: []string{string(typ)}}
	for _, s := range samples {
		m.samples = append(m.samples, s)
	}
	return m
}

func agentEvents() []member {
	return []member{
		agentShape[emptyShape](agent.EventAgentStart, "AgentStart", "AgentStart: a run began."),
		agentShape[agentEndShape](agent.EventAgentEnd, "AgentEnd", "AgentEnd: a run ended; messages are every message it added, willRetry says the runtime retries the failed reply."),
		agentShape[emptyShape](agent.EventTurnStart, "TurnStart", "TurnStart: one model call and its tool calls began."),
		agentShape[turnEndShape](agent.EventTurnEnd, "TurnEnd", "TurnEnd: the turn's reply and its tool results."),
		agentShape[messageShape](agent.EventMessageStart, "MessageStart", "MessageStart: a message began (an assistant reply streams on in message_update)."),
		agentShape[messageUpdateShape](agent.EventMessageUpdate, "MessageUpdate",
			"MessageUpdate: one step of a streaming reply, as the JSON-RPC dialect sends it by default (lean): the usage so far, no message so far; rebuild the message from the deltas.",
			agent.Event{Type: agent.EventMessageUpdate, Usage: &llm.Usage{}, AssistantEvent: &llm.StreamEvent{}}),
		agentShape[messageUpdateFullShape](agent.EventMessageUpdate, "MessageUpdateFull",
			"MessageUpdateFull: message_update as pi's native dialect (and JSON-RPC with fullUpdates) sends it: the message so far.",
			agent.Event{Type: agent.EventMessageUpdate}),
		agentShape[messageShape](agent.EventMessageEnd, "MessageEnd", "MessageEnd: a message is complete."),
		agentShape[toolStartShape](agent.EventToolExecutionStart, "ToolExecutionStart", "ToolExecutionStart: a tool call began to run; parentToolCallId names the call that made a nested one (a codemode script's).",
			agent.Event{Type: agent.EventToolExecutionStart}, agent.Event{Type: agent.EventToolExecutionStart, ParentToolCallID: "c1"}),
		agentShape[toolUpdateShape](agent.EventToolExecutionUpdate, "ToolExecutionUpdate", "ToolExecutionUpdate: a running tool's output so far."),
		agentShape[toolEndShape](agent.EventToolExecutionEnd, "ToolExecutionEnd", "ToolExecutionEnd: a tool call finished; durationMs is left out when it did not run."),
	}
}

// The objects llm.StreamEvent.MarshalJSON writes, without "type".
type (
	streamStartShape struct {
		Partial *llm.AssistantMessage `json:"partial,omitempty"`
	}
	blockStartShape struct {
		ContentIndex int                   `json:"contentIndex"`
		Partial      *llm.AssistantMessage `json:"partial,omitempty"`
	}
	// toolcall_start names the call in the lean form (id, toolName) and
	// carries the partial message in the full one.
	toolCallStartShape struct {
		ContentIndex int                   `json:"contentIndex"`
		ID           string                `json:"id,omitempty"`
		ToolName     string                `json:"toolName,omitempty"`
		Partial      *llm.AssistantMessage `json:"partial,omitempty"`
	}
	deltaShape struct {
		ContentIndex int                   `json:"contentIndex"`
		Delta        string                `json:"delta"`
		Partial      *llm.AssistantMessage `json:"partial,omitempty"`
	}
	blockEndShape struct {
		ContentIndex int                   `json:"contentIndex"`
		Content      string                `json:"content"`
		Partial      *llm.AssistantMessage `json:"partial,omitempty"`
	}
	toolCallEndShape struct {
		ContentIndex int                   `json:"contentIndex"`
		ToolCall     *llm.ToolCall         `json:"toolCall,omitempty"`
		Partial      *llm.AssistantMessage `json:"partial,omitempty"`
	}
	doneShape struct {
		Reason  llm.StopReason        `json:"reason"`
		Message *llm.AssistantMessage `json:"message,omitempty"`
	}
	errorShape struct {
		Reason llm.StopReason        `json:"reason"`
		Error  *llm.AssistantMessage `json:"error,omitempty"`
	}
)

func streamShape[S any](name, doc string, types ...llm.StreamEventType) member {
	m := member{name: name, doc: doc, shape: reflect.TypeFor[S]()}
	for _, t := range types {
		m.tags = append(m.tags, string(t))
		m.samples = append(m.samples, llm.StreamEvent{Type: t})
	}
	return m
}

func streamEvents() []member {
	return []member{
		streamShape[streamStartShape]("StreamStart", "StreamStart: the reply began.", llm.EventStart),
		streamShape[blockStartShape]("BlockStart", "BlockStart: a text or thinking block began at contentIndex.", llm.EventTextStart, llm.EventThinkingStart),
		streamShape[toolCallStartShape]("ToolCallStart", "ToolCallStart: a tool call block began at contentIndex.", llm.EventToolCallStart),
		streamShape[deltaShape]("BlockDelta", "BlockDelta: more of the block at contentIndex (a tool call's arguments as JSON text).",
			llm.EventTextDelta, llm.EventThinkingDelta, llm.EventToolCallDelta),
		streamShape[blockEndShape]("BlockEnd", "BlockEnd: the block at contentIndex is complete; content is all of it.", llm.EventTextEnd, llm.EventThinkingEnd),
		streamShape[toolCallEndShape]("ToolCallEnd", "ToolCallEnd: the tool call at contentIndex is complete.", llm.EventToolCallEnd),
		streamShape[doneShape]("StreamDone", "StreamDone: the reply ended; message is the final one (full form).", llm.EventDone),
		streamShape[errorShape]("StreamError", "StreamError: the reply failed; error is the failed message (full form).", llm.EventError),
	}
}

// unions are the protocol's unions, each before those that carry it.
func unions() []union {
	return []union{
		{
			name: "Content", tag: "type",
			doc:        "Content is one block of a message's content.",
			iface:      reflect.TypeFor[llm.Content](),
			sliceTypes: []reflect.Type{reflect.TypeFor[llm.Contents]()},
			members: []member{
				tagged[llm.TextContent](), tagged[llm.ThinkingContent](),
				tagged[llm.ImageContent](), tagged[llm.ToolCall](),
			},
		},
		{
			name: "Message", tag: "role",
			doc:        "Message is any message of a session, told apart by its role.",
			iface:      reflect.TypeFor[llm.Message](),
			sliceTypes: []reflect.Type{reflect.TypeFor[llm.Messages]()},
			members: []member{
				tagged[llm.UserMessage](), tagged[llm.AssistantMessage](), tagged[llm.ToolResultMessage](),
				tagged[llm.BashExecutionMessage](), tagged[llm.CustomMessage](),
				tagged[llm.BranchSummaryMessage](), tagged[llm.CompactionSummaryMessage](),
				tagged[llm.SystemMessage](),
			},
		},
		{
			name: "AssistantMessageEvent", tag: "type",
			doc:     "AssistantMessageEvent is one step of a streaming reply (message_update's assistantMessageEvent). The partial message so far is left out in the lean form.",
			iface:   reflect.TypeFor[llm.StreamEvent](),
			members: streamEvents(),
		},
		{
			name: "Event", tag: "type",
			doc:     "Event is anything gopi sends as an event (pi/event in JSON-RPC), told apart by its type.",
			iface:   reflect.TypeFor[api.Event](),
			members: append(agentEvents(), apiEvents()...),
		},
	}
}
