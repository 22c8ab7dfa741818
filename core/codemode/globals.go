package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// globals are the script's asynchronous globals: the tool lookups and
// models.*.
func (c *Codemode) globals(tools []Tool, samples map[string]string) map[string]global {
	entry := func(t Tool) map[string]string {
		return map[string]string{"name": identifier(t.Spec.Name), "description": samples[t.Spec.Name]}
	}
	g := map[string]global{
		"searchTools": func(_ context.Context, args []json.RawMessage) (json.RawMessage, error) {
			var query string
			if len(args) < 1 || json.Unmarshal(args[0], &query) != nil {
				return nil, errors.New("searchTools() expects a query string")
			}
			var opts struct {
				Limit     *float64 `json:"limit"`
				Namespace *string  `json:"namespace"`
			}
			if len(args) > 1 && string(args[1]) != "null" {
				if err := json.Unmarshal(args[1], &opts); err != nil {
					return nil, fmt.Errorf("searchTools() options: %w", err)
				}
			}
			limit := defaultSearchLimit
			if opts.Limit != nil {
				if *opts.Limit <= 0 || *opts.Limit != math.Trunc(*opts.Limit) {
					return nil, errors.New("searchTools() limit must be a positive integer")
				}
				limit = int(*opts.Limit)
			}
			var docs []searchDoc
			byName := map[string]Tool{}
			for _, t := range tools {
				if opts.Namespace != nil && *opts.Namespace != "" && (t.Namespace == nil || !isNamespace(t.Namespace, *opts.Namespace)) {
					continue
				}
				docs = append(docs, docOf(t))
				byName[t.Spec.Name] = t
			}
			out := []map[string]string{}
			for _, name := range rank(query, docs, limit) {
				out = append(out, entry(byName[name]))
			}
			return jsonOf(out), nil
		},
		"describeTool": func(_ context.Context, args []json.RawMessage) (json.RawMessage, error) {
			var name string
			if len(args) < 1 || json.Unmarshal(args[0], &name) != nil {
				return nil, errors.New("describeTool() expects a tool name")
			}
			for _, t := range tools {
				if t.Spec.Name == name || identifier(t.Spec.Name) == name {
					return jsonOf(samples[t.Spec.Name]), nil
				}
			}
			return nil, nil
		},
		"describeNamespace": func(_ context.Context, args []json.RawMessage) (json.RawMessage, error) {
			var name string
			if len(args) < 1 || json.Unmarshal(args[0], &name) != nil {
				return nil, errors.New("describeNamespace() expects a namespace name")
			}
			var ns *Namespace
			names := []string{}
			for _, t := range tools {
				if t.Namespace == nil || !isNamespace(t.Namespace, name) {
					continue
				}
				if ns == nil {
					ns = t.Namespace
				}
				names = append(names, identifier(t.Spec.Name))
			}
			if ns == nil {
				return nil, nil
			}
			return jsonOf(struct {
				Namespace
				Tools []string `json:"tools"`
			}{*ns, names}), nil
		},
	}
	for name, f := range c.modelGlobals() {
		g["models."+name] = f
	}
	return g
}

// isNamespace reports whether query names ns: as written, or as the same
// script identifier (dev-radius and dev_radius).
func isNamespace(ns *Namespace, query string) bool {
	return ns.Name == query || identifier(ns.Name) == identifier(query)
}

var modelTypes = map[string]bool{"chat": true, "image": true, "classifier": true}

func modelType(raw []json.RawMessage, i int) (string, error) {
	var t string
	if len(raw) > i {
		_ = json.Unmarshal(raw[i], &t)
	}
	if !modelTypes[t] {
		s := "undefined"
		if len(raw) > i {
			s = string(raw[i])
		}
		return "", fmt.Errorf("unknown model type %s. Use \"chat\", \"image\", or \"classifier\"", s)
	}
	return t, nil
}

func optString(raw []json.RawMessage, i int) string {
	var s string
	if len(raw) > i {
		_ = json.Unmarshal(raw[i], &s)
	}
	return s
}

// modelGlobals are models.*: gopi's catalog holds chat models only, so the
// lists of other types are empty and classify() and generateImages()
// reject with ErrNoModel.
func (c *Codemode) modelGlobals() map[string]global {
	list := func(available bool) []ModelInfo {
		if c.cfg.Models == nil {
			return nil
		}
		if available {
			return c.cfg.Models.Available()
		}
		return c.cfg.Models.List()
	}
	ofType := func(ms []ModelInfo, typ, provider string) []ModelInfo {
		out := []ModelInfo{}
		for _, m := range ms {
			if (m.Type == typ || m.Type == "" && typ == "chat") && (provider == "" || m.Provider == provider) {
				out = append(out, m)
			}
		}
		return out
	}
	noModel := func(fn string) global {
		return func(context.Context, []json.RawMessage) (json.RawMessage, error) {
			return nil, fmt.Errorf("models.%s(): %w; models.list() shows the chat models, which scripts cannot run", fn, ErrNoModel)
		}
	}
	return map[string]global{
		"list": func(context.Context, []json.RawMessage) (json.RawMessage, error) {
			return jsonOf(ofType(list(false), "chat", "")), nil
		},
		"getModelsOfType": func(_ context.Context, a []json.RawMessage) (json.RawMessage, error) {
			t, err := modelType(a, 0)
			if err != nil {
				return nil, err
			}
			return jsonOf(ofType(list(false), t, optString(a, 1))), nil
		},
		"getAvailableOfType": func(_ context.Context, a []json.RawMessage) (json.RawMessage, error) {
			t, err := modelType(a, 0)
			if err != nil {
				return nil, err
			}
			return jsonOf(ofType(list(true), t, optString(a, 1))), nil
		},
		"getModelOfType": func(_ context.Context, a []json.RawMessage) (json.RawMessage, error) {
			t, err := modelType(a, 0)
			if err != nil {
				return nil, err
			}
			provider, id := optString(a, 1), optString(a, 2)
			if provider == "" || id == "" {
				return nil, errors.New("models.getModelOfType(type, provider, id) expects three strings")
			}
			for _, m := range ofType(list(false), t, provider) {
				if m.ID == id {
					return jsonOf(m), nil
				}
			}
			return nil, nil
		},
		"classify":       noModel("classify"),
		"generateImages": noModel("generateImages"),
	}
}
