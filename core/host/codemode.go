package host

// This file wires pi's codemode tool (core/codemode) into the session: its
// scripts' tool calls go through the tool pipeline, its store is the
// branch's codemode-store entries, models.* reads the catalog.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/codemode"
	"github.com/gopi-dev/gopi/core/host/mcpstate"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/mcp"
	"github.com/gopi-dev/gopi/core/session"
)

// codemodeRoom is codemode's place in the session: the tool (nil without
// Options.Codemode), its mode, which tools scripts can call, and how the
// tools are declared to the model beside it.
type codemodeRoom struct {
	tool *codemode.Codemode // nil: no codemode
	mode string             // codemode.mode ("on" or "only")
	mcp  *mcpstate.State
	// active are the run's tools (the agent's).
	active func() []agent.Tool
	// notes: the next request's declared tools get codemode's note
	// (requestTools decides, toolSpec reads).
	notes atomic.Bool
}

// addCodemode builds the codemode tool and puts it among the built-in
// tools, and among the enabled ones when it is active.
func (h *Host) addCodemode() {
	h.codemode = &codemodeRoom{mcp: h.mcp, active: func() []agent.Tool { return h.agent.Tools() }}
	o := h.opts.Codemode
	if o == nil {
		return
	}
	cm := h.codemode
	cm.mode = o.Mode
	cm.tool = codemode.New(codemode.Config{
		Caller: nestedCaller{h},
		Tools:  cm.listed,
		Store:  codemodeStore{h},
		Models: codemodeModels{h},
		InlineBudget: func() int {
			if o.InlineBudget != nil {
				return *o.InlineBudget
			}
			return codemode.DefaultInlineBudget
		},
		CacheDir: o.CacheDir,
	})
	if h.opts.AllTools == nil {
		h.opts.AllTools = slices.Clone(h.opts.Tools)
	}
	h.opts.AllTools = append(h.opts.AllTools, cm.tool)
	if o.Active {
		h.opts.Tools = append(h.opts.Tools, cm.tool)
	}
}

// refresh brings the tool's description up to date with the tools
// callable now; no lock is held here (Codemode.Spec never calls out).
func (c *codemodeRoom) refresh() {
	if c.tool != nil {
		c.tool.Refresh()
	}
}

// close stops the tool's workers.
func (c *codemodeRoom) close() {
	if c.tool != nil {
		_ = c.tool.Close()
	}
}

// among reports whether codemode is among tools.
func (c *codemodeRoom) among(tools []agent.Tool) bool {
	return c.tool != nil && slices.ContainsFunc(tools, func(t agent.Tool) bool { _, ok := t.(*codemode.Codemode); return ok })
}

// requestTools is the agent's RequestTools: the MCP room's, and with
// codemode.mode "only" the tools scripts can call left out, so the model
// reaches them through codemode.
func (c *codemodeRoom) requestTools(ctx context.Context, msgs []llm.Message, tools []agent.Tool) []agent.Tool {
	tools = c.mcp.RequestTools(ctx, msgs, tools)
	c.notes.Store(c.notesFor(tools))
	c.refresh()
	if c.mode != CodemodeModeOnly || !c.among(tools) {
		return tools
	}
	return slices.DeleteFunc(tools, func(t agent.Tool) bool { return callableByScripts(t) })
}

// notesFor reports whether the declared tools get codemode's note:
// codemode is among tools, with mode "on".
func (c *codemodeRoom) notesFor(tools []agent.Tool) bool {
	return c.mode != CodemodeModeOnly && c.among(tools)
}

// toolSpec is the agent's ToolSpec: a tool as the next request declares
// it ([codemodeRoom.declared]). The request's tools are the ones
// requestTools gave last; whether they get codemode's note was decided
// there.
func (c *codemodeRoom) toolSpec(t agent.Tool) llm.ToolSpec {
	return declared(t, c.notes.Load())
}

// declared is a tool's declaration: its Spec, and with notes (codemode
// on, mode "on") a tool that scripts can call gets pi's line on how a
// script calls it and what the call resolves to.
func declared(t agent.Tool, notes bool) llm.ToolSpec {
	spec := t.Spec()
	if !notes || !callableByScripts(t) {
		return spec
	}
	ct := codemode.Tool{Spec: spec}
	if os, ok := t.(outputSchemer); ok {
		ct.Output = os.OutputSchema()
	}
	spec.Description = strings.TrimSpace(spec.Description) + "\n\n" + codemode.ScriptNote(ct)
	return spec
}

// callableByScripts reports whether a script may call t: every tool but
// codemode itself and tool_search (which only loads tools for the model).
// It never asks codemode for its Spec, whose description lists the
// callable tools.
func callableByScripts(t agent.Tool) bool {
	if _, ok := t.(*codemode.Codemode); ok {
		return false
	}
	return !mcpstate.IsToolSearch(t)
}

// callable are the tools scripts may call now: the active ones, then the
// MCP tools reached through tool_search (exposure codemode or deferred).
func (c *codemodeRoom) callable() []agent.Tool {
	var out []agent.Tool
	seen := map[string]bool{}
	for _, t := range append(c.active(), c.mcp.Searchable()...) {
		if !callableByScripts(t) {
			continue
		}
		if name := t.Spec().Name; !seen[name] {
			seen[name] = true
			out = append(out, t)
		}
	}
	return out
}

// outputSchemer is a tool that says what its structured content is (bash
// and read): a script's call resolves to that content.
type outputSchemer interface{ OutputSchema() json.RawMessage }

// listed are the callable tools as codemode lists them: with mode "on"
// the tools declared to the model are not listed in its description
// (scripts still call them), MCP tools never are (scripts find them with
// searchTools()), each MCP server's tools are a namespace.
func (c *codemodeRoom) listed() []codemode.Tool {
	only := c.mode == CodemodeModeOnly
	var out []codemode.Tool
	for _, t := range c.callable() {
		ct := codemode.Tool{Spec: t.Spec(), Unlisted: !only}
		if os, ok := t.(outputSchemer); ok {
			ct.Output = os.OutputSchema()
		}
		if mt, ok := t.(*mcp.Tool); ok {
			ct.Namespace = &codemode.Namespace{Name: mt.Server()}
			ct.Unlisted = true
		} else if mcpstate.IsMCPTool(t) {
			ct.Unlisted = true
		}
		out = append(out, ct)
	}
	return out
}

// codemodeStore keeps store() values in codemode-store custom entries:
// each branch sees the values written on its path.
type codemodeStore struct{ h *Host }

func (s codemodeStore) Load(context.Context) (map[string]json.RawMessage, error) {
	var entries []codemode.StoreEntry
	for _, e := range s.h.Store().Path() {
		c, ok := e.(*session.CustomEntry)
		if !ok || c.CustomType != codemode.StoreEntryType {
			continue
		}
		var se codemode.StoreEntry
		if json.Unmarshal(c.Data, &se) == nil && se.Set != nil && se.Delete != nil {
			entries = append(entries, se)
		}
	}
	return codemode.FoldStore(entries), nil
}

func (s codemodeStore) Save(_ context.Context, e codemode.StoreEntry) error {
	store := s.h.Store()
	id, err := store.AppendCustom(codemode.StoreEntryType, e)
	if err := s.h.log.saved(store, "codemode's store", err); err != nil {
		return fmt.Errorf("codemode store: %w", err)
	}
	if entry, ok := store.Entry(id); ok {
		if b, err := json.Marshal(entry); err == nil {
			s.h.emit(api.EntryAppended{Entry: b})
		}
	}
	return nil
}

// codemodeModels is the catalog as models.* lists it: chat models.
type codemodeModels struct{ h *Host }

func modelInfos(ms []llm.Model) []codemode.ModelInfo {
	out := make([]codemode.ModelInfo, 0, len(ms))
	for _, m := range ms {
		out = append(out, codemode.ModelInfo{Type: "chat", Provider: m.Provider, ID: m.ID, Name: m.Name, API: m.API,
			Input: m.Input, ContextWindow: m.ContextWindow, Reasoning: m.Reasoning})
	}
	return out
}

func (m codemodeModels) List() []codemode.ModelInfo { return modelInfos(m.h.opts.Registry.All()) }
func (m codemodeModels) Available() []codemode.ModelInfo {
	return modelInfos(m.h.opts.Registry.Available())
}
