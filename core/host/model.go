package host

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/models"
)

// SetModel switches to an available model ("Model not found: p/id"
// otherwise), keeping the thinking level where the model allows it.
func (h *Host) SetModel(ctx context.Context, p api.SetModelParams) (*llm.Model, error) {
	h.ext.first(ctx)
	m, err := h.opts.Registry.FindAvailable(p.Provider, p.ModelID)
	if errors.Is(err, models.ErrModelNotFound) {
		// pi's words, quoting at most a short prefix of each name.
		return nil, models.NotFound(api.Clip(p.Provider, api.ClipName), api.Clip(p.ModelID, api.ClipName))
	}
	if err != nil {
		return nil, err
	}
	prev := h.agent.Model()
	if err := h.setModel(&m, h.levelForSwitch("")); err != nil {
		return nil, err
	}
	h.ext.event(ext.ModelSelectEvent{Model: &m, PreviousModel: prev, Source: "set"})
	return &m, nil
}

// CycleModel moves to the next model of the --models scope, or of every
// available model without one; nil when there is nothing to move to.
func (h *Host) CycleModel(ctx context.Context) (*api.CycleModelResult, error) {
	h.ext.first(ctx)
	reg := h.opts.Registry
	type candidate struct {
		model llm.Model
		level llm.ThinkingLevel
	}
	var list []candidate
	scoped := len(h.opts.Scope) > 0
	if scoped {
		for _, s := range h.opts.Scope {
			if reg.HasAuth(&s.Model) {
				list = append(list, candidate{s.Model, s.Thinking})
			}
		}
	} else {
		for _, m := range reg.Available() {
			list = append(list, candidate{model: m})
		}
	}
	if len(list) <= 1 {
		return nil, nil
	}
	cur := h.agent.Model()
	i := slices.IndexFunc(list, func(c candidate) bool {
		return cur != nil && c.model.Provider == cur.Provider && c.model.ID == cur.ID
	})
	if i < 0 {
		i = 0
	}
	next := list[(i+1)%len(list)]
	m := next.model
	if err := h.setModel(&m, h.levelForSwitch(next.level)); err != nil {
		return nil, err
	}
	h.ext.event(ext.ModelSelectEvent{Model: &m, PreviousModel: cur, Source: "cycle"})
	return &api.CycleModelResult{Model: &m, ThinkingLevel: h.agent.ThinkingLevel(), IsScoped: scoped}, nil
}

// levelForSwitch is the level to ask of the next model: the scope's
// explicit level, else the current one, else (coming from a model without
// reasoning) the default.
func (h *Host) levelForSwitch(explicit llm.ThinkingLevel) llm.ThinkingLevel {
	if explicit != "" {
		return explicit
	}
	if m := h.agent.Model(); m == nil || !m.Reasoning {
		return h.opts.defaultThinkingFor(m)
	}
	return h.agent.ThinkingLevel()
}

// GetAvailableModels lists the models that have credentials (after the
// extensions loaded: they may register providers).
func (h *Host) GetAvailableModels(ctx context.Context) (api.ModelsResult, error) {
	h.ext.first(ctx)
	avail := h.opts.Registry.Available()
	out := make([]*llm.Model, len(avail))
	for i := range avail {
		out[i] = &avail[i]
	}
	return api.ModelsResult{Models: out}, nil
}

// SetThinkingLevel sets the level, clamped to what the model supports.
func (h *Host) SetThinkingLevel(ctx context.Context, p api.ThinkingParams) error {
	h.ext.first(ctx)
	m := h.agent.Model()
	if m == nil {
		h.agent.SetThinkingLevel(llm.ThinkingOff)
		return nil
	}
	return h.setModel(m, p.Level)
}

// CycleThinkingLevel moves to the model's next level; nil for a model
// without reasoning.
func (h *Host) CycleThinkingLevel(ctx context.Context) (*api.LevelResult, error) {
	h.ext.first(ctx)
	m := h.agent.Model()
	if m == nil || !m.Reasoning {
		return nil, nil
	}
	levels := llm.SupportedLevels(m)
	if len(levels) == 0 {
		return nil, nil
	}
	i := slices.Index(levels, h.agent.ThinkingLevel())
	next := levels[(i+1)%len(levels)]
	if err := h.setModel(m, next); err != nil {
		return nil, err
	}
	return &api.LevelResult{Level: h.agent.ThinkingLevel()}, nil
}

// SetSteeringMode sets how many steering messages one interruption
// delivers.
func (h *Host) SetSteeringMode(_ context.Context, p api.ModeParams) error {
	h.agent.SetSteeringMode(agent.QueueMode(p.Mode))
	return nil
}

// SetFollowUpMode sets how many follow-up messages one stop delivers.
func (h *Host) SetFollowUpMode(_ context.Context, p api.ModeParams) error {
	h.agent.SetFollowUpMode(agent.QueueMode(p.Mode))
	return nil
}

// GetAvailableThinkingLevels lists the levels the current model accepts
// (["off"] for a model without reasoning).
func (h *Host) GetAvailableThinkingLevels(context.Context) (api.LevelsResult, error) {
	return api.LevelsResult{Levels: llm.SupportedLevels(h.agent.Model())}, nil
}

// freshChoice is the model and thinking level a conversation starts
// with when neither the command line nor the session names a model, as
// pi decides them each time it builds a session (at startup, and again
// for new_session): with withScope, the --models scope's entry for the
// settings' default model, else its first entry; else settings.json's
// defaultProvider/defaultModel; else the registry's default. Scope and
// settings entries count only with credentials. The level is --thinking
// (or a :level suffix), else the scope entry's, else the startup level
// for the model under s. The command line's --model, when given, wins
// over all of it.
func (o *Options) freshChoice(s Settings, withScope bool) (*llm.Model, llm.ThinkingLevel, error) {
	reg := o.Registry
	level := o.Thinking
	model := o.Model
	if model == nil {
		var def *llm.Model
		if s.DefaultProvider != "" && s.DefaultModel != "" {
			if m, ok := reg.Find(s.DefaultProvider, s.DefaultModel); ok && reg.HasAuth(&m) {
				def = &m
			}
		}
		if withScope {
			var first, saved *models.ScopedModel
			for i := range o.Scope {
				sm := &o.Scope[i]
				if !reg.HasAuth(&sm.Model) {
					continue
				}
				if first == nil {
					first = sm
				}
				if def != nil && sm.Model.Provider == def.Provider && sm.Model.ID == def.ID {
					saved = sm
					break
				}
			}
			pick := cmp.Or(saved, first)
			if pick != nil {
				m := pick.Model
				model = &m
				if level == "" {
					level = pick.Thinking
				}
			}
		}
		if model == nil {
			model = def
		}
		if model == nil {
			m, ok := reg.Default()
			if !ok {
				return nil, "", errors.New("host: no model is available")
			}
			model = &m
		}
	}
	if level == "" {
		level = thinkingFor(s, model)
	}
	return model, level, nil
}

// freshSettings are the settings a new conversation's model is chosen
// under: read again, as pi does for every session it builds, so a
// default model saved meanwhile (by pi's /model, say) counts.
func (o *Options) freshSettings() Settings {
	if o.AgentDir == "" {
		return o.Settings
	}
	project := o.Cwd
	if o.UntrustedProject {
		project = ""
	}
	s, _ := LoadSettings(o.AgentDir, project)
	return s
}

// setModel switches model and level and records both in the session when
// they change.
func (h *Host) setModel(m *llm.Model, level llm.ThinkingLevel) error {
	level = llm.ClampThinking(m, level)
	prev := h.agent.ThinkingLevel()
	h.agent.SetModel(m)
	h.agent.SetThinkingLevel(level)
	store := h.Store()
	ctx := store.Context()
	fresh := store.Len() == 0
	if !fresh && prev != level {
		h.emit(api.ThinkingLevelChanged{Level: string(level)})
	}
	if prev != level {
		h.ext.event(ext.ThinkingLevelSelectEvent{Level: level, PreviousLevel: prev})
	}
	if fresh {
		// A fresh session starts with both, as pi's files do.
		if _, err := store.AppendModelChange(m.Provider, m.ID); err != nil {
			return h.saved(store, "the model", err)
		}
		if _, err := store.AppendThinkingLevelChange(level); err != nil {
			return h.saved(store, "the thinking level", err)
		}
		return nil
	}
	if ctx.Model == nil || ctx.Model.Provider != m.Provider || ctx.Model.ModelID != m.ID {
		if _, err := store.AppendModelChange(m.Provider, m.ID); err != nil {
			return h.saved(store, "the model change", err)
		}
	}
	if ctx.ThinkingLevel != level {
		if _, err := store.AppendThinkingLevelChange(level); err != nil {
			return h.saved(store, "the thinking level", err)
		}
	}
	return nil
}

// defaultThinkingFor is the startup level for model m (see thinkingFor).
func (o *Options) defaultThinkingFor(m *llm.Model) llm.ThinkingLevel {
	return thinkingFor(o.Settings, m)
}

// thinkingFor is the startup level for model m under settings s:
// settings.json's modelThinkingLevels entry for it, else
// defaultThinkingLevel, else medium.
func thinkingFor(s Settings, m *llm.Model) llm.ThinkingLevel {
	if m != nil {
		if l, err := llm.ParseThinkingLevel(s.ModelThinkingLevels[m.Provider+"/"+m.ID]); err == nil && l != "" {
			return l
		}
	}
	if l, err := llm.ParseThinkingLevel(s.DefaultThinkingLevel); err == nil && l != "" {
		return l
	}
	return models.DefaultThinking
}
