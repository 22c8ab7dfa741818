package host

import (
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
	if err := h.models.set(&m, h.models.levelFor("")); err != nil {
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
	if err := h.models.set(&m, h.models.levelFor(next.level)); err != nil {
		return nil, err
	}
	h.ext.event(ext.ModelSelectEvent{Model: &m, PreviousModel: cur, Source: "cycle"})
	return &api.CycleModelResult{Model: &m, ThinkingLevel: h.agent.ThinkingLevel(), IsScoped: scoped}, nil
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
	return h.models.set(m, p.Level)
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
	if err := h.models.set(m, next); err != nil {
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
