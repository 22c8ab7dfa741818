package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// Annotations are the hints a server declares on a tool (MCP's
// ToolAnnotations); the approval gate and extensions read them. nil
// pointers are hints the server left out.
type Annotations struct {
	ReadOnlyHint    bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// Tool is one tool of a connected server as an agent tool, named
// mcp__<server>__<tool>.
type Tool struct {
	s *server
	// name is the model's name for it, given by Manager.Tools; source is
	// the tool as its server listed it, unnamed.
	name        string
	source      *Tool
	remote      string // the server's name for it
	description string
	schema      json.RawMessage
	annotations Annotations
	exposure    Exposure
}

var _ agent.Tool = (*Tool)(nil)

// newTool is t as s listed it; Manager.Tools names it.
func newTool(s *server, t *sdk.Tool) *Tool {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || len(schema) == 0 || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	tool := &Tool{
		s:           s,
		remote:      t.Name,
		description: t.Description,
		schema:      schema,
		exposure:    s.cfg.ToolExposureOf(t.Name),
	}
	if a := t.Annotations; a != nil {
		tool.annotations = Annotations{
			ReadOnlyHint:    a.ReadOnlyHint,
			DestructiveHint: a.DestructiveHint,
			IdempotentHint:  a.IdempotentHint,
			OpenWorldHint:   a.OpenWorldHint,
		}
	}
	return tool
}

// Spec is the tool as the model sees it: the server's description and
// input schema under the prefixed name.
func (t *Tool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: t.name, Description: t.description, Parameters: t.schema}
}

// Server is the name of the server that offers the tool.
func (t *Tool) Server() string { return t.s.name }

// OutputSchema is the schema of a call's structured content: the
// server's CallToolResult (a codemode script's call resolves to it).
func (t *Tool) OutputSchema() json.RawMessage { return json.RawMessage(resultSchema) }

// RemoteName is the tool's name on its server.
func (t *Tool) RemoteName() string { return t.remote }

// Annotations are the server's hints about the tool.
func (t *Tool) Annotations() Annotations { return t.annotations }

// ReadOnly reports whether the server declares that the tool changes
// nothing (readOnlyHint): the approval gate does not ask about it under
// "writes".
func (t *Tool) ReadOnly() bool { return t.annotations.ReadOnlyHint }

// Exposure is how the tool reaches the model: the server's exposure, or
// its toolExposure entry for this tool.
func (t *Tool) Exposure() Exposure { return t.exposure }

// errTimedOut is the cause of a call's end at the server's timeout.
var errTimedOut = errors.New("mcp: request timed out")

// Run calls the tool once: no retry, since the server may have acted
// already. The call ends at the server's timeout (which each progress
// notification of the call starts again), at ctx's end (the SDK tells the
// server the request is cancelled) or when the manager closes.
func (t *Tool) Run(ctx context.Context, call agent.Call, _ func(agent.Result)) (agent.Result, error) {
	s := t.s
	timeout := s.timeout()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(timeout, func() { cancel(errTimedOut) })
	defer timer.Stop()
	defer context.AfterFunc(s.m.ctx, func() { cancel(context.Canceled) })()
	token := s.m.progress.watch(func() { timer.Reset(timeout) })
	defer s.m.progress.unwatch(token)

	ended := func(err error) agent.Result {
		switch {
		case errors.Is(context.Cause(ctx), errTimedOut):
			return agent.ErrorResult("MCP tool %s timed out after %v", t.name, timeout)
		case ctx.Err() != nil:
			return agent.ErrorResult("Operation aborted")
		}
		return agent.ErrorResult("%v", err)
	}
	sess, err := s.session(ctx)
	if err != nil {
		return ended(err), nil
	}
	var args map[string]any
	if len(call.Args) > 0 {
		if err := json.Unmarshal(call.Args, &args); err != nil {
			return agent.ErrorResult("invalid arguments for %s: %v", t.name, err), nil
		}
	}
	params := &sdk.CallToolParams{Name: t.remote, Arguments: args}
	params.SetProgressToken(token)
	res, err := sess.CallTool(ctx, params)
	if errors.Is(err, sdk.ErrConnectionClosed) && ctx.Err() == nil {
		// The connection had ended before the request went out (the SDK
		// reports a request in flight when the connection ends with the
		// read error instead): the server crashed since the last call and
		// never saw this one, so it goes to a new connection, once.
		s.dropped(sess)
		if sess, err = s.session(ctx); err != nil {
			return ended(err), nil
		}
		res, err = sess.CallTool(ctx, params)
	}
	switch {
	case err == nil:
		return s.m.toResult(s.name, t.remote, res), nil
	case ctx.Err() != nil:
		return ended(err), nil
	case errors.Is(err, sdk.ErrConnectionClosed):
		s.dropped(sess)
		return agent.ErrorResult("MCP server %q disconnected (it reconnects on the next call): %v", s.name, err), nil
	}
	if signIn := s.signedOutOf(sess); signIn != nil {
		// The server turned the token down and no refresh helped.
		return agent.ErrorResult("MCP server %q requires sign-in: run `gopi mcp login %s`, and the next call "+
			"uses the new credentials", s.name, s.name), nil
	}
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) {
		// Not the server's answer: the connection broke with the call
		// under way. It is not sent again; the server may have acted.
		return agent.ErrorResult("The connection to MCP server %q ended during the call, which is not retried "+
			"(the server reconnects on the next call): %v", s.name, err), nil
	}
	return agent.ErrorResult("MCP tool %s failed: %v", t.name, err), nil
}

// String names the tool for reports.
func (t *Tool) String() string { return fmt.Sprintf("%s (%s on %s)", t.name, t.remote, t.s.name) }

// ToolNamespace groups the tools of one server, as pi's namespace does
// (pi.getAllTools() reports it): mcp__<server>, the server's name as an
// alias, its configured description and the instructions it sent when it
// last connected.
type ToolNamespace struct {
	Name         string   `json:"name"`
	Aliases      []string `json:"aliases"`
	Description  string   `json:"description,omitempty"`
	Instructions string   `json:"instructions,omitempty"`
}

// Namespace is the tool's server as pi groups it.
func (t *Tool) Namespace() ToolNamespace {
	s := t.s
	s.mu.Lock()
	instructions := s.instructions
	s.mu.Unlock()
	return ToolNamespace{Name: Namespace(s.name), Aliases: []string{s.name},
		Description: strings.TrimSpace(s.cfg.Description), Instructions: instructions}
}
