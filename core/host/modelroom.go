package host

import (
	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/llm"
)

// modelRoom sets the agent's model and thinking level and records them
// in the session.
type modelRoom struct {
	agent *agent.Agent
	log   *transcript
	opts  *Options
	emit  func(api.Event)
	event func(ext.Event) // to the extensions
}

// set switches model and level and records both in the session when
// they change.
func (r *modelRoom) set(m *llm.Model, level llm.ThinkingLevel) error {
	level = llm.ClampThinking(m, level)
	prev := r.agent.ThinkingLevel()
	r.agent.SetModel(m)
	r.agent.SetThinkingLevel(level)
	store := r.log.current()
	ctx := store.Context()
	fresh := store.Len() == 0
	if !fresh && prev != level {
		r.emit(api.ThinkingLevelChanged{Level: string(level)})
	}
	if prev != level {
		r.event(ext.ThinkingLevelSelectEvent{Level: level, PreviousLevel: prev})
	}
	if fresh {
		// A fresh session starts with both, as pi's files do.
		if _, err := store.AppendModelChange(m.Provider, m.ID); err != nil {
			return r.log.saved(store, "the model", err)
		}
		if _, err := store.AppendThinkingLevelChange(level); err != nil {
			return r.log.saved(store, "the thinking level", err)
		}
		return nil
	}
	if ctx.Model == nil || ctx.Model.Provider != m.Provider || ctx.Model.ModelID != m.ID {
		if _, err := store.AppendModelChange(m.Provider, m.ID); err != nil {
			return r.log.saved(store, "the model change", err)
		}
	}
	if ctx.ThinkingLevel != level {
		if _, err := store.AppendThinkingLevelChange(level); err != nil {
			return r.log.saved(store, "the thinking level", err)
		}
	}
	return nil
}

// levelFor is the level to ask of the next model: the scope's
// explicit level, else the current one, else (coming from a model without
// reasoning) the default.
func (r *modelRoom) levelFor(explicit llm.ThinkingLevel) llm.ThinkingLevel {
	if explicit != "" {
		return explicit
	}
	if m := r.agent.Model(); m == nil || !m.Reasoning {
		return r.opts.defaultThinkingFor(m)
	}
	return r.agent.ThinkingLevel()
}
