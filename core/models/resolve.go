package models

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/gopi-dev/gopi/core/llm"
)

// Resolution is a model picked by a pattern.
type Resolution struct {
	Model llm.Model
	// Thinking is the level named by a ":level" suffix, "" when none.
	// Clamp it to the model with [llm.ClampThinking].
	Thinking llm.ThinkingLevel
	// Warning is a note for the user, e.g. that an unknown id was accepted
	// as a custom model of a known provider.
	Warning string
}

// Resolve resolves a --model pattern with no --provider; see
// [Registry.ResolveCLI].
func (r *Registry) Resolve(pattern string) (Resolution, error) {
	return r.ResolveCLI("", pattern)
}

// ResolveCLI resolves --provider and --model as pi does, over all models
// (so --api-key can supply the missing key):
//   - "provider/id" or --provider with an id or a pattern;
//   - an exact id (or an id containing a slash);
//   - a partial, case-insensitive match on id or name, preferring models
//     with credentials, then undated aliases ("claude-sonnet-4-5" over
//     "claude-sonnet-4-5-20250929"), then the highest id;
//   - an optional ":level" thinking suffix ("sonnet:high").
//
// An unknown id for a known provider resolves to a copy of that provider's
// default model under the new id, with a warning. Failures wrap
// [ErrNoModels], [ErrUnknownProvider] or [ErrModelNotFound].
func (r *Registry) ResolveCLI(provider, pattern string) (Resolution, error) {
	if pattern == "" {
		return Resolution{}, &resolveError{"No model pattern given.", ErrModelNotFound}
	}
	all := r.cur.Load().models
	if len(all) == 0 {
		return Resolution{}, &resolveError{"No models available. Check your installation or add models to models.json.", ErrNoModels}
	}
	canonical := map[string]string{}
	for _, m := range all {
		canonical[strings.ToLower(m.Provider)] = m.Provider
	}

	prov := ""
	if provider != "" {
		var ok bool
		if prov, ok = canonical[strings.ToLower(provider)]; !ok {
			return Resolution{}, &resolveError{fmt.Sprintf("Unknown provider %q. Use --list-models to see available providers/models.", provider), ErrUnknownProvider}
		}
	}

	pat := pattern
	inferred := false
	if prov == "" {
		if before, after, ok := strings.Cut(pattern, "/"); ok {
			if c, ok := canonical[strings.ToLower(before)]; ok {
				prov, pat, inferred = c, after, true
			}
		}
	}
	exactAnywhere := func() (llm.Model, bool) {
		lower := strings.ToLower(pattern)
		for _, m := range all {
			if strings.ToLower(m.ID) == lower || strings.ToLower(m.Provider+"/"+m.ID) == lower {
				return m, true
			}
		}
		return llm.Model{}, false
	}
	if prov == "" {
		if m, ok := exactAnywhere(); ok {
			return Resolution{Model: m}, nil
		}
	}
	if provider != "" && prov != "" {
		if prefix := prov + "/"; strings.HasPrefix(strings.ToLower(pattern), strings.ToLower(prefix)) {
			pat = pattern[len(prefix):]
		}
	}

	candidates := all
	if prov != "" {
		candidates = nil
		for _, m := range all {
			if m.Provider == prov {
				candidates = append(candidates, m)
			}
		}
	}
	res, ok := r.parsePattern(pat, candidates, true)
	if ok {
		return res, nil
	}

	if inferred {
		// "openai/gpt-4o:extended" may be a whole model id on another
		// provider rather than provider "openai".
		if m, ok := exactAnywhere(); ok {
			return Resolution{Model: m}, nil
		}
		if res, ok := r.parsePattern(pattern, all, true); ok {
			return res, nil
		}
	}

	if prov != "" {
		if m, ok := fallbackModel(prov, pat, all); ok {
			return Resolution{Model: m, Warning: fmt.Sprintf("Model %q not found for provider %q. Using custom model id.", pat, prov)}, nil
		}
	}
	display := pattern
	if prov != "" {
		display = prov + "/" + pat
	}
	return Resolution{}, &resolveError{fmt.Sprintf("Model %q not found. Use --list-models to see available models.", display), ErrModelNotFound}
}

// fallbackModel copies provider's default model (or its first) under id.
func fallbackModel(provider, id string, all []llm.Model) (llm.Model, bool) {
	var base *llm.Model
	def := defaultModelID(provider)
	for i := range all {
		m := &all[i]
		if m.Provider != provider {
			continue
		}
		if base == nil || (def != "" && m.ID == def) {
			base = m
		}
		if def != "" && m.ID == def {
			break
		}
	}
	if base == nil {
		return llm.Model{}, false
	}
	m := *base
	m.ID, m.Name = id, id
	return m, true
}

// parsePattern matches pattern, then retries without a trailing ":suffix",
// taking the suffix as a thinking level. strict (the --model flag) rejects
// an invalid suffix; otherwise (--models) it is dropped with a warning.
func (r *Registry) parsePattern(pattern string, models []llm.Model, strict bool) (Resolution, bool) {
	if m, ok := r.match(pattern, models); ok {
		return Resolution{Model: m}, true
	}
	i := strings.LastIndex(pattern, ":")
	if i < 0 {
		return Resolution{}, false
	}
	prefix, suffix := pattern[:i], pattern[i+1:]
	if level, err := llm.ParseThinkingLevel(suffix); err == nil {
		res, ok := r.parsePattern(prefix, models, strict)
		if ok && res.Warning == "" {
			res.Thinking = level
		}
		return res, ok
	}
	if strict {
		return Resolution{}, false
	}
	res, ok := r.parsePattern(prefix, models, strict)
	if ok {
		res.Thinking = ""
		res.Warning = fmt.Sprintf("Invalid thinking level %q in pattern %q. Using default instead.", suffix, pattern)
	}
	return res, ok
}

// match finds the model pattern names: an exact reference first, then a
// partial id or name match.
func (r *Registry) match(pattern string, models []llm.Model) (llm.Model, bool) {
	if m, ok := exactReference(pattern, models); ok {
		return m, true
	}
	lower := strings.ToLower(pattern)
	var matches, withAuth []llm.Model
	for _, m := range models {
		if strings.Contains(strings.ToLower(m.ID), lower) || strings.Contains(strings.ToLower(m.Name), lower) {
			matches = append(matches, m)
			if r.HasAuth(&m) {
				withAuth = append(withAuth, m)
			}
		}
	}
	if len(withAuth) > 0 {
		matches = withAuth
	}
	if len(matches) == 0 {
		return llm.Model{}, false
	}
	best, bestAlias := -1, false
	for i, m := range matches {
		alias := isAlias(m.ID)
		switch {
		case best < 0, alias && !bestAlias:
			best, bestAlias = i, alias
		case alias == bestAlias && idAfter(m.ID, matches[best].ID):
			best = i
		}
	}
	return matches[best], true
}

// exactReference matches "provider/id" or a bare id, case-insensitively;
// a bare id found on several providers matches nothing.
func exactReference(ref string, models []llm.Model) (llm.Model, bool) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return llm.Model{}, false
	}
	lower := strings.ToLower(ref)
	unique := func(pred func(m *llm.Model) bool) (llm.Model, int) {
		var found llm.Model
		n := 0
		for i := range models {
			if pred(&models[i]) {
				found = models[i]
				n++
			}
		}
		return found, n
	}
	if m, n := unique(func(m *llm.Model) bool { return strings.ToLower(m.Provider+"/"+m.ID) == lower }); n > 0 {
		return m, n == 1
	}
	if p, id, ok := strings.Cut(ref, "/"); ok {
		p, id = strings.TrimSpace(p), strings.TrimSpace(id)
		if p != "" && id != "" {
			m, n := unique(func(m *llm.Model) bool {
				return strings.EqualFold(m.Provider, p) && strings.EqualFold(m.ID, id)
			})
			if n > 0 {
				return m, n == 1
			}
		}
	}
	m, n := unique(func(m *llm.Model) bool { return strings.ToLower(m.ID) == lower })
	return m, n == 1
}

var datedID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-\d{8}$`) })

// isAlias reports whether id names a moving alias rather than a dated
// snapshot.
func isAlias(id string) bool {
	return strings.HasSuffix(id, "-latest") || !datedID().MatchString(id)
}

// idAfter orders ids like a case-insensitive locale comparison.
func idAfter(a, b string) bool {
	la, lb := strings.ToLower(a), strings.ToLower(b)
	if la != lb {
		return la > lb
	}
	return a < b // lower case sorts first in a locale order
}

// ScopedModel is one model of a --models scope.
type ScopedModel struct {
	Model llm.Model
	// Thinking is the level the pattern named, "" to keep the session's.
	Thinking llm.ThinkingLevel
}

// Scope resolves --models patterns (each may itself be a comma-separated
// list) against the available models, for model cycling. A pattern with
// *, ? or [ is a case-insensitive glob over "provider/id" and id; others
// resolve like --model. Either may end in ":level". Duplicates are
// dropped; patterns matching nothing produce warnings.
func (r *Registry) Scope(patterns []string) ([]ScopedModel, []string) {
	avail := r.withAuth() // a scope names its models: faux ones too
	var out []ScopedModel
	var warnings []string
	add := func(m llm.Model, level llm.ThinkingLevel) {
		for _, s := range out {
			if s.Model.Provider == m.Provider && s.Model.ID == m.ID {
				return
			}
		}
		out = append(out, ScopedModel{Model: m, Thinking: level})
	}
	for _, p := range splitPatterns(patterns) {
		if strings.ContainsAny(p, "*?[") {
			glob, level := p, llm.ThinkingLevel("")
			if i := strings.LastIndex(p, ":"); i >= 0 {
				if l, err := llm.ParseThinkingLevel(p[i+1:]); err == nil {
					glob, level = p[:i], l
				}
			}
			glob = strings.ToLower(glob)
			n := 0
			for _, m := range avail {
				full, _ := doublestar.Match(glob, strings.ToLower(m.Provider+"/"+m.ID))
				bare, _ := doublestar.Match(glob, strings.ToLower(m.ID))
				if full || bare {
					add(m, level)
					n++
				}
			}
			if n == 0 {
				warnings = append(warnings, fmt.Sprintf("No models match pattern %q", p))
			}
			continue
		}
		res, ok := r.parsePattern(p, avail, false)
		if res.Warning != "" {
			warnings = append(warnings, res.Warning)
		}
		if !ok {
			warnings = append(warnings, fmt.Sprintf("No models match pattern %q", p))
			continue
		}
		add(res.Model, res.Thinking)
	}
	return out, warnings
}

func splitPatterns(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		for _, part := range strings.Split(p, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// Default picks the model to start with when no flag, scope or saved
// setting names one: the first available provider default of
// [DefaultModels] (claude-opus-4-7, then gpt-5.4, then
// gemini-3.1-pro-preview among the built-in providers), else the first
// available model that needs a key, else the first keyless (faux) one.
func (r *Registry) Default() (llm.Model, bool) {
	avail := r.Available()
	if len(avail) == 0 {
		return llm.Model{}, false
	}
	for _, d := range DefaultModels {
		for _, m := range avail {
			if m.Provider == d.Provider && m.ID == d.ModelID {
				return m, true
			}
		}
	}
	for _, m := range avail {
		if m.API != llm.APIFaux {
			return m, true
		}
	}
	return avail[0], true
}
