package host

// This file records the system prompt and the tool set in the transcript,
// as pi 1.5 does.

import (
	"fmt"
	"slices"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/host/mcpstate"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// systemRecord keeps the transcript's record of the system prompt and
// the tools up to date. It reads the prompt's sections, the agent's tools
// as codemode declares them, and those the branch's tool_search loaded.
type systemRecord struct {
	prompts  *promptRoom
	codemode *codemodeRoom
	mcp      *mcpstate.State
	agent    *agent.Agent
	log      *transcript
}

// with puts the system message a run's first request needs before
// msg: pi 1.5 records the system prompt and the tool set in the transcript
// as system messages, a whole declaration in a session's first request and
// a patch of what changed later (a new day's date, a tool set changed, a
// session pi wrote whose sections are not ours). Nothing changed: msg
// alone.
func (r *systemRecord) with(msg llm.Message) []llm.Message {
	if patch := r.patch(r.log.current()); patch != nil {
		return []llm.Message{patch, msg}
	}
	return []llm.Message{msg}
}

// patch is the system message that brings store's recorded prompt
// and tools up to date, or nil. The tools are the agent's and those the
// branch's tool_search results loaded, so that the record keeps them
// past a compaction that summarizes the searches (as pi records them as
// a tool change).
func (r *systemRecord) patch(store *session.Store) *llm.SystemMessage {
	sections := r.prompts.currentSections()
	prev, ok := session.SystemStateOf(store.Path())
	// Record codemode's description as its next request sends it.
	r.codemode.refresh()
	tools := r.agent.Tools()
	notes := r.codemode.notesFor(tools)
	specs := make([]llm.ToolSpec, 0, len(tools))
	for _, t := range tools {
		specs = append(specs, declared(t, notes))
	}
	for _, t := range r.mcp.Loaded(r.agent.Messages()) {
		if spec := t.Spec(); !slices.ContainsFunc(specs, func(o llm.ToolSpec) bool { return o.Name == spec.Name }) {
			specs = append(specs, spec)
		}
	}
	if patch := llm.SystemPatch(prev, ok, sections, specs, llm.Now()); patch != nil {
		return patch
	}
	return nil
}

// record appends to store the system message that brings its record
// up to date, if any: before a compaction, whose checkpoint is that
// record, so tools loaded in the run being compacted are kept.
func (r *systemRecord) record(store *session.Store) error {
	patch := r.patch(store)
	if patch == nil {
		return nil
	}
	if _, err := store.AppendMessage(patch); err != nil {
		return fmt.Errorf("recording the tool set: %w", err)
	}
	return nil
}
