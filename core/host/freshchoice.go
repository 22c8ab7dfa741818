package host

// This file chooses the model and thinking level a conversation starts
// with, from the command line, the settings and the --models scope.

import (
	"cmp"
	"errors"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/models"
)

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
