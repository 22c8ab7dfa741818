package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gopi-dev/gopi/core/llm"
)

// Tool is something the model can call. Tools are injected into the agent;
// the built-in ones live in core/tools.
type Tool interface {
	// Spec is the name, description and JSON Schema the model sees.
	Spec() llm.ToolSpec
	// Run executes one call. Args have already been validated against the
	// schema. update may be called any number of times with the
	// accumulated partial result (not a delta) while the tool runs.
	//
	// A failure the model should read (no such file, non-unique match)
	// is a Result with IsError set and a nil error. A non-nil error is a
	// broken tool; the agent turns it into an error result too.
	Run(ctx context.Context, call Call, update func(Result)) (Result, error)
}

// callIDKey is the context key of the tool call a tool runs for.
type callIDKey struct{}

// parentKey is the context key of the call that made a nested call.
type parentKey struct{}

// WithParentCallID is ctx for the stages of a nested call made by the
// call parent (a codemode script's): what ParentCallID reads.
func WithParentCallID(ctx context.Context, parent string) context.Context {
	return context.WithValue(ctx, parentKey{}, parent)
}

// ParentCallID is the id of the call that made the nested call whose
// context ctx is; false for the model's own calls.
func ParentCallID(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(parentKey{}).(string)
	return id, ok && id != ""
}

// WithCallID is ctx for running the tool call id outside a run (a nested
// call of a codemode script): what CallID reads.
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// CallID is the id of the tool call whose Run ctx belongs to, so what a
// tool calls (a shell, a file system) can tell its client which call it
// serves; false outside a tool's Run.
func CallID(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(callIDKey{}).(string)
	return id, ok
}

// Call is one tool invocation.
type Call struct {
	ID   string
	Name string
	Args json.RawMessage
	// Bind, when a BeforeToolCall hook sets it, derives the context the
	// tool runs with: how the checks a call passed hand the tool what
	// they decided (the file the user approved, say).
	Bind func(context.Context) context.Context
}

// Result is what a tool returns: content the model reads and details a
// client may show (diffs, truncation notes). It is the "result" and
// "partialResult" object of the tool_execution events.
type Result struct {
	Content llm.Contents `json:"content"`
	Details any          `json:"details,omitempty"`
	// StructuredContent is the result as data, for programs rather than
	// the model (pi 1.5: read's text, bash's output and exit code). It
	// travels on tool_execution_end but is not kept in the toolResult
	// message. A hook that replaces Content should drop or replace it, as
	// it may no longer match.
	StructuredContent any `json:"structuredContent,omitempty"`
	// IsError marks a failure the model should read.
	IsError bool `json:"-"`
	// Terminate hints that the run should stop after this tool batch
	// instead of asking the model again. It takes effect only when every
	// result of the batch sets it.
	Terminate bool `json:"-"`
	// NestedCalls is the record of the calls this call made to other
	// tools, kept on its toolResult message (the host's AfterToolCall
	// sets it).
	NestedCalls *llm.NestedCalls `json:"-"`
}

// ArgumentPreparer is implemented by tools that repair the model's raw
// arguments (legacy shapes, JSON sent as a string) before they are checked
// against the schema. It must return arguments, never fail.
type ArgumentPreparer interface {
	PrepareArguments(args json.RawMessage) json.RawMessage
}

// SequentialTool is implemented by tools that must not run alongside other
// calls of the same batch: when Sequential reports true for any tool of a
// batch, the whole batch runs one call at a time.
type SequentialTool interface {
	Sequential() bool
}

// TextResult is a successful result holding one text block.
func TextResult(text string) Result {
	return Result{Content: llm.Contents{llm.TextContent{Text: text}}}
}

// ErrorResult is a failed result holding one text block.
func ErrorResult(format string, args ...any) Result {
	return Result{Content: llm.Contents{llm.TextContent{Text: fmt.Sprintf(format, args...)}}, IsError: true}
}
