package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/internal/regularfile"
)

// Custom model defaults, as pi fills them for a models.json entry.
const (
	defaultContextWindow = 128000
	defaultMaxTokens     = 16384
)

// providerConfig is one entry of models.json's "providers".
type providerConfig struct {
	Name           *string                  `json:"name"`
	BaseURL        *string                  `json:"baseUrl"`
	APIKey         *string                  `json:"apiKey"`
	API            *string                  `json:"api"`
	Headers        map[string]string        `json:"headers"`
	Compat         json.RawMessage          `json:"compat"`
	AuthHeader     *bool                    `json:"authHeader"`
	Models         []modelDef               `json:"models"`
	ModelOverrides map[string]modelOverride `json:"modelOverrides"`
}

// modelDef is a custom model; only id is required.
type modelDef struct {
	ID               *string                       `json:"id"`
	Name             *string                       `json:"name"`
	API              *string                       `json:"api"`
	BaseURL          *string                       `json:"baseUrl"`
	Reasoning        *bool                         `json:"reasoning"`
	ThinkingLevelMap map[llm.ThinkingLevel]*string `json:"thinkingLevelMap"`
	Input            []string                      `json:"input"`
	Cost             *costDef                      `json:"cost"`
	ContextWindow    *float64                      `json:"contextWindow"`
	MaxTokens        *float64                      `json:"maxTokens"`
	Headers          map[string]string             `json:"headers"`
	Compat           json.RawMessage               `json:"compat"`
}

// modelOverride patches a built-in model; every field is optional.
type modelOverride struct {
	Name             *string                       `json:"name"`
	Reasoning        *bool                         `json:"reasoning"`
	ThinkingLevelMap map[llm.ThinkingLevel]*string `json:"thinkingLevelMap"`
	Input            []string                      `json:"input"`
	Cost             *costDef                      `json:"cost"`
	ContextWindow    *float64                      `json:"contextWindow"`
	MaxTokens        *float64                      `json:"maxTokens"`
	Headers          map[string]string             `json:"headers"`
	Compat           json.RawMessage               `json:"compat"`
}

type costDef struct {
	Input      *float64 `json:"input"`
	Output     *float64 `json:"output"`
	CacheRead  *float64 `json:"cacheRead"`
	CacheWrite *float64 `json:"cacheWrite"`
}

// modelsConfig is a parsed, validated models.json.
type modelsConfig struct {
	order     []string // provider names in file order
	providers map[string]providerConfig
	custom    []llm.Model
}

// requestConfig is what a provider entry adds to each request.
type requestConfig struct {
	apiKey     string
	headers    map[string]string
	authHeader bool
}

// readModelsFile reads and validates path. A missing file is no error; on
// any other problem it returns nil and an error worded as pi words it
// (capitalised: users see these texts as they are).
func readModelsFile(path string, builtins []llm.Model, builtinProvs map[string]bool) (*modelsConfig, error) {
	data, err := regularfile.ReadFile(path)
	if regularfile.Missing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("Failed to load models.json: %w\n\nFile: %s", err, path)
	}
	data = stripJSONComments(data)

	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%w: %v\n\nFile: %s", ErrParseModels, err, path)
	}
	cfg := &modelsConfig{providers: map[string]providerConfig{}}
	var issues []string
	rawProviders, ok := top["providers"]
	if !ok || bytes.Equal(bytes.TrimSpace(rawProviders), []byte("null")) {
		issues = append(issues, "providers: required property is missing")
	} else if order, err := objectKeys(rawProviders); err != nil {
		issues = append(issues, "providers: must be an object")
	} else {
		var raws map[string]json.RawMessage
		_ = json.Unmarshal(rawProviders, &raws)
		cfg.order = order
		for _, name := range order {
			var pc providerConfig
			if err := json.Unmarshal(raws[name], &pc); err != nil {
				issues = append(issues, decodeIssue("providers."+name, err))
				continue
			}
			issues = append(issues, pc.schemaIssues("providers."+name)...)
			cfg.providers[name] = pc
		}
	}
	if len(issues) > 0 {
		return nil, fmt.Errorf("%w:\n  - %s\n\nFile: %s", ErrModelsSchema, strings.Join(issues, "\n  - "), path)
	}
	if err := cfg.validate(builtinProvs); err != nil {
		return nil, fmt.Errorf("Failed to load models.json: %w\n\nFile: %s", err, path)
	}
	cfg.custom = cfg.customModels(builtins)
	return cfg, nil
}

// decodeIssue turns a JSON decoding error into one schema issue line.
func decodeIssue(at string, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := at
		if te.Field != "" {
			field += "." + te.Field
		}
		return fmt.Sprintf("%s: expected %s, got %s", field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	return fmt.Sprintf("%s: %v", at, err)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "float64", "int":
		return "number"
	case "slice":
		return "array"
	case "map", "struct", "ptr":
		return "object"
	}
	return goKind
}

// schemaIssues reports what pi's schema rejects beyond JSON types: empty
// strings, unknown input kinds, non-object compat.
func (pc *providerConfig) schemaIssues(at string) []string {
	var out []string
	nonEmpty := func(field string, v *string) {
		if v != nil && *v == "" {
			out = append(out, fmt.Sprintf("%s.%s: must not be empty", at, field))
		}
	}
	nonEmpty("name", pc.Name)
	nonEmpty("baseUrl", pc.BaseURL)
	nonEmpty("apiKey", pc.APIKey)
	nonEmpty("api", pc.API)
	out = append(out, compatIssue(at+".compat", pc.Compat)...)
	for i, md := range pc.Models {
		mat := fmt.Sprintf("%s.models.%d", at, i)
		if md.ID == nil {
			out = append(out, mat+".id: required property is missing")
		} else {
			nonEmpty(fmt.Sprintf("models.%d.id", i), md.ID)
		}
		nonEmpty(fmt.Sprintf("models.%d.name", i), md.Name)
		nonEmpty(fmt.Sprintf("models.%d.api", i), md.API)
		nonEmpty(fmt.Sprintf("models.%d.baseUrl", i), md.BaseURL)
		out = append(out, inputIssues(mat+".input", md.Input)...)
		out = append(out, compatIssue(mat+".compat", md.Compat)...)
		if c := md.Cost; c != nil {
			for _, f := range []struct {
				name string
				v    *float64
			}{{"input", c.Input}, {"output", c.Output}, {"cacheRead", c.CacheRead}, {"cacheWrite", c.CacheWrite}} {
				if f.v == nil {
					out = append(out, fmt.Sprintf("%s.cost.%s: required property is missing", mat, f.name))
				}
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(pc.ModelOverrides)) {
		mo := pc.ModelOverrides[id]
		mat := at + ".modelOverrides." + id
		if mo.Name != nil && *mo.Name == "" {
			out = append(out, mat+".name: must not be empty")
		}
		out = append(out, inputIssues(mat+".input", mo.Input)...)
		out = append(out, compatIssue(mat+".compat", mo.Compat)...)
	}
	return out
}

func inputIssues(at string, in []string) []string {
	var out []string
	for i, v := range in {
		if v != "text" && v != "image" {
			out = append(out, fmt.Sprintf("%s.%d: must be \"text\" or \"image\", got %q", at, i, v))
		}
	}
	return out
}

func compatIssue(at string, raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return []string{at + ": must be an object"}
	}
	return nil
}

// validate applies pi's semantic checks, failing on the first problem.
func (cfg *modelsConfig) validate(builtinProvs map[string]bool) error {
	for _, name := range cfg.order {
		pc := cfg.providers[name]
		builtIn := builtinProvs[name]
		if len(pc.Models) == 0 {
			if pc.BaseURL == nil && pc.Headers == nil && len(pc.Compat) == 0 && len(pc.ModelOverrides) == 0 {
				return fmt.Errorf("Provider %s: %w", name, errEmptyProvider)
			}
		} else if !builtIn {
			if pc.BaseURL == nil {
				return fmt.Errorf("Provider %s: %w", name, errNoBaseURL)
			}
			if pc.APIKey == nil {
				return fmt.Errorf("Provider %s: %w", name, errNoKey)
			}
		}
		for _, md := range pc.Models {
			id := *md.ID
			if pc.API == nil && md.API == nil && !builtIn {
				return fmt.Errorf("Provider %s, model %s: %w", name, id, errNoAPI)
			}
			if md.ContextWindow != nil && *md.ContextWindow <= 0 {
				return fmt.Errorf("Provider %s, model %s: %w", name, id, ErrInvalidContextWindow)
			}
			if md.MaxTokens != nil && *md.MaxTokens <= 0 {
				return fmt.Errorf("Provider %s, model %s: %w", name, id, ErrInvalidMaxTokens)
			}
		}
	}
	return nil
}

// customModels builds the models.json models with pi's defaults; a model on
// a built-in provider inherits that provider's api and baseUrl.
func (cfg *modelsConfig) customModels(builtins []llm.Model) []llm.Model {
	var out []llm.Model
	for _, name := range cfg.order {
		pc := cfg.providers[name]
		var defAPI, defURL string
		for _, b := range builtins {
			if b.Provider == name {
				defAPI, defURL = b.API, b.BaseURL
				break
			}
		}
		for _, md := range pc.Models {
			api := firstOf(md.API, pc.API, defAPI)
			baseURL := firstOf(md.BaseURL, pc.BaseURL, defURL)
			if api == "" || baseURL == "" {
				continue
			}
			m := llm.Model{
				ID:               *md.ID,
				Name:             firstOf(md.Name, nil, *md.ID),
				API:              api,
				Provider:         name,
				BaseURL:          baseURL,
				Reasoning:        md.Reasoning != nil && *md.Reasoning,
				ThinkingLevelMap: md.ThinkingLevelMap,
				Input:            md.Input,
				ContextWindow:    defaultContextWindow,
				MaxTokens:        defaultMaxTokens,
				Compat:           mergeCompat(pc.Compat, md.Compat),
			}
			if m.Input == nil {
				m.Input = []string{"text"}
			}
			if md.Cost != nil {
				m.Cost = llm.ModelCost{Input: *md.Cost.Input, Output: *md.Cost.Output, CacheRead: *md.Cost.CacheRead, CacheWrite: *md.Cost.CacheWrite}
			}
			if md.ContextWindow != nil {
				m.ContextWindow = int(*md.ContextWindow)
			}
			if md.MaxTokens != nil {
				m.MaxTokens = int(*md.MaxTokens)
			}
			out = append(out, m)
		}
	}
	return out
}

func firstOf(a, b *string, def string) string {
	if a != nil {
		return *a
	}
	if b != nil {
		return *b
	}
	return def
}

// view is one consistent state of the registry's models and what their
// requests add; lookups read it without locks, changes build a new one.
type view struct {
	models       []llm.Model
	reqConfigs   map[string]requestConfig
	modelHeaders map[modelKey]map[string]string
}

// buildView layers the providers extensions registered over the built-in
// models, then models.json over both (pi: an extension's provider is the
// base that models.json overrides). file may be nil.
func buildView(builtins []llm.Model, dynamic []dynamicProvider, file *modelsConfig) *view {
	v := &view{reqConfigs: map[string]requestConfig{}, modelHeaders: map[modelKey]map[string]string{}}
	models := builtins
	for _, d := range dynamic {
		models = v.applyProvider(models, d.name, d.config)
	}
	v.models = v.applyFile(models, file)
	return v
}

// applyProvider applies one registered provider: with models, they
// replace every model the provider had; without, its baseUrl, headers and
// compat apply to the models it has.
func (v *view) applyProvider(models []llm.Model, name string, pc providerConfig) []llm.Model {
	v.addRequestConfig(name, pc)
	if len(pc.Models) == 0 {
		out := slices.Clone(models)
		for i := range out {
			if out[i].Provider == name {
				if pc.BaseURL != nil {
					out[i].BaseURL = *pc.BaseURL
				}
				out[i].Compat = mergeCompat(out[i].Compat, pc.Compat)
			}
		}
		return out
	}
	one := &modelsConfig{order: []string{name}, providers: map[string]providerConfig{name: pc}}
	custom := one.customModels(models)
	out := slices.DeleteFunc(slices.Clone(models), func(m llm.Model) bool { return m.Provider == name })
	return append(out, custom...)
}

// addRequestConfig records the key and headers pc adds to its provider's
// requests (and its models').
func (v *view) addRequestConfig(name string, pc providerConfig) {
	if pc.APIKey != nil || pc.Headers != nil || (pc.AuthHeader != nil && *pc.AuthHeader) {
		rc := requestConfig{headers: pc.Headers, authHeader: pc.AuthHeader != nil && *pc.AuthHeader}
		if pc.APIKey != nil {
			rc.apiKey = *pc.APIKey
		}
		v.reqConfigs[name] = rc
	}
	for id, mo := range pc.ModelOverrides {
		v.setModelHeaders(name, id, mo.Headers)
	}
	for _, md := range pc.Models {
		v.setModelHeaders(name, *md.ID, md.Headers)
	}
}

// applyFile applies models.json to the models and merges its custom ones
// in (a custom model replaces one with the same provider and id),
// recording the per-request keys and headers. cfg may be nil.
func (v *view) applyFile(models []llm.Model, cfg *modelsConfig) []llm.Model {
	if cfg == nil {
		return models
	}
	for _, name := range cfg.order {
		v.addRequestConfig(name, cfg.providers[name])
	}

	out := make([]llm.Model, 0, len(models)+len(cfg.custom))
	for _, m := range models {
		if pc, ok := cfg.providers[m.Provider]; ok {
			if pc.BaseURL != nil {
				m.BaseURL = *pc.BaseURL
			}
			m.Compat = mergeCompat(m.Compat, pc.Compat)
			if mo, ok := pc.ModelOverrides[m.ID]; ok {
				m = applyOverride(m, mo)
			}
		}
		out = append(out, m)
	}
	index := map[modelKey]int{}
	for i, m := range out {
		index[modelKey{m.Provider, m.ID}] = i
	}
	for _, m := range cfg.custom {
		k := modelKey{m.Provider, m.ID}
		if i, ok := index[k]; ok {
			out[i] = m
			continue
		}
		index[k] = len(out)
		out = append(out, m)
	}
	return out
}

func (v *view) setModelHeaders(provider, id string, h map[string]string) {
	k := modelKey{provider, id}
	if len(h) == 0 {
		delete(v.modelHeaders, k)
		return
	}
	v.modelHeaders[k] = h
}

// applyOverride merges a modelOverrides entry into m: scalar fields
// replace, cost and thinkingLevelMap merge key by key, compat deep-merges.
func applyOverride(m llm.Model, mo modelOverride) llm.Model {
	if mo.Name != nil {
		m.Name = *mo.Name
	}
	if mo.Reasoning != nil {
		m.Reasoning = *mo.Reasoning
	}
	if mo.ThinkingLevelMap != nil {
		merged := maps.Clone(m.ThinkingLevelMap)
		if merged == nil {
			merged = map[llm.ThinkingLevel]*string{}
		}
		maps.Copy(merged, mo.ThinkingLevelMap)
		m.ThinkingLevelMap = merged
	}
	if mo.Input != nil {
		m.Input = mo.Input
	}
	if mo.ContextWindow != nil {
		m.ContextWindow = int(*mo.ContextWindow)
	}
	if mo.MaxTokens != nil {
		m.MaxTokens = int(*mo.MaxTokens)
	}
	if c := mo.Cost; c != nil {
		set := func(dst *float64, v *float64) {
			if v != nil {
				*dst = *v
			}
		}
		set(&m.Cost.Input, c.Input)
		set(&m.Cost.Output, c.Output)
		set(&m.Cost.CacheRead, c.CacheRead)
		set(&m.Cost.CacheWrite, c.CacheWrite)
	}
	m.Compat = mergeCompat(m.Compat, mo.Compat)
	return m
}

// nestedCompat are the compat keys whose objects merge rather than replace.
var nestedCompat = []string{"openRouterRouting", "vercelGatewayRouting"}

// mergeCompat shallow-merges override onto base (override wins), merging
// the routing objects one level deeper, as pi does.
func mergeCompat(base, override json.RawMessage) json.RawMessage {
	if len(override) == 0 {
		return base
	}
	var b, o map[string]json.RawMessage
	_ = json.Unmarshal(base, &b)
	if err := json.Unmarshal(override, &o); err != nil {
		return base
	}
	merged := maps.Clone(b)
	if merged == nil {
		merged = map[string]json.RawMessage{}
	}
	maps.Copy(merged, o)
	for _, k := range nestedCompat {
		if _, inB := b[k]; !inB {
			continue
		}
		if _, inO := o[k]; !inO {
			continue
		}
		var nb, no map[string]json.RawMessage
		_ = json.Unmarshal(b[k], &nb)
		_ = json.Unmarshal(o[k], &no)
		nm := maps.Clone(nb)
		if nm == nil {
			nm = map[string]json.RawMessage{}
		}
		maps.Copy(nm, no)
		if raw, err := json.Marshal(nm); err == nil {
			merged[k] = raw
		}
	}
	raw, err := json.Marshal(merged)
	if err != nil {
		return base
	}
	return raw
}

// objectKeys returns the keys of a JSON object in document order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// stripJSONComments removes // line comments and trailing commas before }
// or ], leaving string literals alone, so models.json may be written as
// JSON with comments.
func stripJSONComments(in []byte) []byte {
	out := make([]byte, 0, len(in))
	inString := false
	for i := 0; i < len(in); i++ {
		c := in[i]
		if inString {
			out = append(out, c)
			if c == '\\' && i+1 < len(in) {
				i++
				out = append(out, in[i])
			} else if c == '"' {
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '/' && i+1 < len(in) && in[i+1] == '/':
			for i < len(in) && in[i] != '\n' {
				i++
			}
			i-- // keep the newline
		default:
			out = append(out, c)
		}
	}
	return stripTrailingCommas(out)
}

func stripTrailingCommas(in []byte) []byte {
	out := make([]byte, 0, len(in))
	inString := false
	for i := 0; i < len(in); i++ {
		c := in[i]
		if inString {
			out = append(out, c)
			if c == '\\' && i+1 < len(in) {
				i++
				out = append(out, in[i])
			} else if c == '"' {
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
		}
		if c == ',' {
			j := i + 1
			for j < len(in) && (in[j] == ' ' || in[j] == '\t' || in[j] == '\n' || in[j] == '\r') {
				j++
			}
			if j < len(in) && (in[j] == '}' || in[j] == ']') {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}
