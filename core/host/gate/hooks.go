package gate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gopi-dev/gopi/core/agent"
)

// Hooks are the extensions' handlers a call meets (core/ext's Hooks): with
// no extension they change nothing.
type Hooks interface {
	// ToolCall may give the call other arguments or block it; an error
	// (a handler that failed, a host that is down) blocks it too.
	ToolCall(ctx context.Context, call agent.Call) (args json.RawMessage, blocked bool, reason string, err error)
	// ToolResult returns the result the handlers leave; an error says
	// what of their answer could not be read, beside what could.
	ToolResult(ctx context.Context, call agent.Call, res agent.Result) (agent.Result, error)
}

// The extension events this stage runs, as failures are reported.
const (
	eventToolCall   = "tool_call"
	eventToolResult = "tool_result"
)

// hookStage runs the extensions' tool_call handlers before a call and
// their tool_result handlers after it.
type hookStage struct {
	hooks Hooks
	// failed reports a hook call that failed (an extension_error).
	failed func(event string, err error)
}

// HookStage is the stage of the extensions' tool_call and tool_result
// handlers; failed hears of each call that failed.
func HookStage(h Hooks, failed func(event string, err error)) Stage {
	return hookStage{hooks: h, failed: failed}
}

func (s hookStage) Before(ctx context.Context, c *Call) (bool, string) {
	args, blocked, reason, err := s.hooks.ToolCall(ctx, c.Call)
	if err != nil {
		s.failed(eventToolCall, err)
		return true, fmt.Errorf("%w: %w", ErrExtensionFailed, err).Error()
	}
	if blocked {
		if reason == "" {
			reason = ErrBlocked.Error()
		}
		return true, reason
	}
	c.Args = args
	return false, ""
}

func (s hookStage) After(ctx context.Context, c *Call, res agent.Result) agent.Result {
	out, err := s.hooks.ToolResult(ctx, c.Call, res)
	if err != nil {
		s.failed(eventToolResult, err)
	}
	return out
}
