package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gopi-dev/gopi/core/llm"
)

// dynamicProvider is a provider declared at run time, in models.json's
// form: what a pi extension passes to pi.registerProvider(name, config).
type dynamicProvider struct {
	name   string
	config providerConfig
}

// RegisterProvider adds the provider name, or replaces what an earlier
// call registered under it, from config: models.json's provider form
// (baseUrl, apiKey, api, headers, authHeader, compat, models,
// modelOverrides; pi's legacy registerProvider config). With models, they
// replace every model the provider had; without, baseUrl, headers and
// compat apply to its existing models. models.json still applies over
// it. The change is seen by every lookup that starts after it returns; a
// config pi's schema or checks reject changes nothing and says why.
func (r *Registry) RegisterProvider(name string, config json.RawMessage) error {
	if strings.TrimSpace(name) == "" {
		return errNoProviderName
	}
	if len(bytes.TrimSpace(config)) == 0 {
		config = json.RawMessage("{}")
	}
	var pc providerConfig
	if err := json.Unmarshal(config, &pc); err != nil {
		return fmt.Errorf("provider %s: %s", name, decodeIssue("config", err))
	}
	if issues := pc.schemaIssues("config"); len(issues) > 0 {
		return fmt.Errorf("provider %s: %s", name, strings.Join(issues, "; "))
	}
	if err := pc.validateDynamic(name, r.knows(name)); err != nil {
		return err
	}

	r.dynMu.Lock()
	defer r.dynMu.Unlock()
	i := slices.IndexFunc(r.dynamic, func(d dynamicProvider) bool { return d.name == name })
	if i >= 0 {
		r.dynamic[i].config = pc
	} else {
		r.dynamic = append(r.dynamic, dynamicProvider{name, pc})
	}
	r.cur.Store(buildView(r.builtins, r.dynamic, r.file))
	r.rev.Add(1)
	return nil
}

// UnregisterProvider removes what RegisterProvider added under name; the
// built-in models it had overridden come back. It reports whether there
// was such a provider.
func (r *Registry) UnregisterProvider(name string) bool {
	r.dynMu.Lock()
	defer r.dynMu.Unlock()
	i := slices.IndexFunc(r.dynamic, func(d dynamicProvider) bool { return d.name == name })
	if i < 0 {
		return false
	}
	r.dynamic = slices.Delete(r.dynamic, i, i+1)
	r.cur.Store(buildView(r.builtins, r.dynamic, r.file))
	r.rev.Add(1)
	return true
}

// Revision counts the changes RegisterProvider and UnregisterProvider
// made: a consumer that copied the model list knows when to copy again.
func (r *Registry) Revision() uint64 { return r.rev.Load() }

// knows reports whether a built-in model has the provider, so a
// registration may leave out what the catalog already says.
func (r *Registry) knows(provider string) bool {
	return slices.ContainsFunc(r.builtins, func(m llm.Model) bool { return m.Provider == provider })
}

// validateDynamic is models.json's semantic check for a registered
// provider. Unlike models.json, the key may be left out (pi: users then
// give one with --api-key or auth.json).
func (pc *providerConfig) validateDynamic(name string, builtIn bool) error {
	if len(pc.Models) == 0 {
		if pc.BaseURL == nil && pc.Headers == nil && len(pc.Compat) == 0 && len(pc.ModelOverrides) == 0 && pc.APIKey == nil {
			return fmt.Errorf("provider %s: %w", name, errEmptyDynamic)
		}
		return nil
	}
	for _, md := range pc.Models {
		id := *md.ID
		if md.BaseURL == nil && pc.BaseURL == nil && !builtIn {
			return fmt.Errorf("provider %s, model %s: %w", name, id, errDynamicNoBaseURL)
		}
		if pc.API == nil && md.API == nil && !builtIn {
			return fmt.Errorf("provider %s, model %s: %w", name, id, errDynamicNoAPI)
		}
		if md.ContextWindow != nil && *md.ContextWindow <= 0 {
			return fmt.Errorf("provider %s, model %s: %w", name, id, ErrInvalidContextWindow)
		}
		if md.MaxTokens != nil && *md.MaxTokens <= 0 {
			return fmt.Errorf("provider %s, model %s: %w", name, id, ErrInvalidMaxTokens)
		}
	}
	return nil
}
