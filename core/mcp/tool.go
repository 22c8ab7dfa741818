package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
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
	s           *server
	name        string // the model's name
	remote      string // the server's name for it
	description string
	schema      json.RawMessage
	annotations Annotations
	exposure    Exposure
}

var _ agent.Tool = (*Tool)(nil)

func newTool(s *server, t *sdk.Tool) *Tool {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || len(schema) == 0 || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	tool := &Tool{
		s:           s,
		name:        ToolName(s.name, t.Name),
		remote:      t.Name,
		description: t.Description,
		schema:      schema,
		exposure:    toolExposure(s.cfg, t.Name),
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
	token := s.m.watchProgress(func() { timer.Reset(timeout) })
	defer s.m.unwatchProgress(token)

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
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) {
		// Not the server's answer: the connection broke with the call
		// under way. It is not sent again; the server may have acted.
		return agent.ErrorResult("The connection to MCP server %q ended during the call, which is not retried "+
			"(the server reconnects on the next call): %v", s.name, err), nil
	}
	return agent.ErrorResult("MCP tool %s failed: %v", t.name, err), nil
}

// ToolName is a server tool's name for the model: mcp__<server>__<tool>,
// with every character other than an ASCII letter, digit or _ made _.
//
// A minimal form of pi's rule for this step: the configuration side
// (name collisions and their hash suffixes) is to replace it.
func ToolName(server, tool string) string {
	return "mcp__" + nameChars(server) + "__" + nameChars(tool)
}

func nameChars(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// toolExposure is a tool's exposure: its exact toolExposure entry, else
// the first pattern that matches it, else the server's (codemode when
// unset, pi's default; codemode-deferred is codemode).
//
// A private helper of the connection step; the configuration side is to
// own it. pi tries patterns in the file's order; a Go map has none, so
// here the longest pattern is tried first (then name order): the most
// specific one wins, which is what a file lists first in practice.
func toolExposure(s Server, tool string) Exposure {
	norm := func(e Exposure) Exposure {
		switch e {
		case "":
			return ExposureCodemode
		case ExposureCodemodeDeferred:
			return ExposureCodemode
		}
		return e
	}
	if e, ok := s.ToolExposure[tool]; ok {
		return norm(e)
	}
	var patterns []string
	for p := range s.ToolExposure {
		if strings.Contains(p, "*") {
			patterns = append(patterns, p)
		}
	}
	slices.SortFunc(patterns, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	for _, p := range patterns {
		if matchStar(p, tool) {
			return norm(s.ToolExposure[p])
		}
	}
	return norm(s.Exposure)
}

// matchStar matches name against a pattern where * is any run of
// characters and nothing else is special.
func matchStar(pattern, name string) bool {
	// path.Match treats ?, [ and \ specially: escape them first.
	var b strings.Builder
	for _, r := range pattern {
		switch r {
		case '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	// path.Match's * stops at /; tool names with / are matched piecewise.
	ok, err := path.Match(strings.ReplaceAll(b.String(), "/", "\x00"), strings.ReplaceAll(name, "/", "\x00"))
	return err == nil && ok
}

// String names the tool for reports.
func (t *Tool) String() string { return fmt.Sprintf("%s (%s on %s)", t.name, t.remote, t.s.name) }
