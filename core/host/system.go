package host

import (
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// withSystem puts the system message a run's first request needs before
// msg: pi 1.5 records the system prompt and the tool set in the transcript
// as system messages, a whole declaration in a session's first request and
// a patch of what changed later (a new day's date, a tool set changed, a
// session pi wrote whose sections are not ours). Nothing changed: msg
// alone.
func (h *Host) withSystem(msg llm.Message) []llm.Message {
	h.mu.Lock()
	sections := h.sections
	store := h.store
	h.mu.Unlock()
	prev, ok := session.SystemStateOf(store.Path())
	tools := h.agent.Tools()
	specs := make([]llm.ToolSpec, len(tools))
	for i, t := range tools {
		specs[i] = t.Spec()
	}
	if patch := llm.SystemPatch(prev, ok, sections, specs, llm.Now()); patch != nil {
		return []llm.Message{patch, msg}
	}
	return []llm.Message{msg}
}
