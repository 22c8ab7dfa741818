package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// validator checks tool arguments against the tools' JSON Schemas. Each
// distinct schema is compiled once.
type validator struct {
	mu sync.Mutex // guards cache
	// cache maps a schema's bytes to its compiled form.
	cache map[string]*compiledSchema
}

type compiledSchema struct {
	doc    any // the schema as decoded JSON, walked for coercion
	schema *jsonschema.Schema
	err    error // the schema itself is broken
}

var printer = message.NewPrinter(language.English)

func (v *validator) compile(params json.RawMessage) *compiledSchema {
	key := string(params)
	v.mu.Lock()
	defer v.mu.Unlock()
	if c, ok := v.cache[key]; ok {
		return c
	}
	if v.cache == nil {
		v.cache = make(map[string]*compiledSchema)
	}
	c := &compiledSchema{}
	v.cache[key] = c
	if len(bytes.TrimSpace(params)) == 0 {
		params = json.RawMessage(`{"type":"object"}`)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		c.err = fmt.Errorf("decoding schema: %w", err)
		return c
	}
	comp := jsonschema.NewCompiler()
	const url = "mem:///tool-parameters.json"
	if err := comp.AddResource(url, doc); err != nil {
		c.err = fmt.Errorf("loading schema: %w", err)
		return c
	}
	sch, err := comp.Compile(url)
	if err != nil {
		c.err = fmt.Errorf("compiling schema: %w", err)
		return c
	}
	c.doc, c.schema = doc, sch
	return c
}

// validate returns the arguments to run name with: args coerced where the
// schema wants another primitive type (the string "10" for an integer, as
// pi's validator does), then checked. A failure is an error whose text the
// model reads.
func (v *validator) validate(name string, params, args json.RawMessage) (json.RawMessage, error) {
	c := v.compile(params)
	if c.err != nil {
		return nil, fmt.Errorf("Tool %q has an invalid parameter schema: %v", name, c.err)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return nil, fmt.Errorf("Validation failed for tool %q:\n  - root: arguments are not valid JSON: %v\n\nReceived arguments:\n%s", name, err, args)
	}
	if coerced, changed := coerce(inst, c.doc); changed {
		if b, err := json.Marshal(coerced); err == nil {
			inst, args = coerced, b
		}
	}
	err = c.schema.Validate(inst)
	if err == nil {
		return args, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, fmt.Errorf("Validation failed for tool %q: %v", name, err)
	}
	var lines []string
	collectLeaves(ve, &lines)
	if len(lines) == 0 {
		lines = []string{"  - root: " + ve.Error()}
	}
	return nil, fmt.Errorf("Validation failed for tool %q:\n%s\n\nReceived arguments:\n%s", name, strings.Join(lines, "\n"), indentJSON(args))
}

// collectLeaves lists the innermost errors of e as "  - path: message",
// the path dotted, a missing property named in it.
func collectLeaves(e *jsonschema.ValidationError, out *[]string) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collectLeaves(c, out)
		}
		return
	}
	path := strings.Join(e.InstanceLocation, ".")
	if req, ok := e.ErrorKind.(*kind.Required); ok && len(req.Missing) > 0 {
		if path != "" {
			path += "."
		}
		path += req.Missing[0]
	}
	if path == "" {
		path = "root"
	}
	*out = append(*out, fmt.Sprintf("  - %s: %s", path, e.ErrorKind.LocalizedString(printer)))
}

func indentJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// coerce converts primitives in v toward the types schema names, walking
// properties, additionalProperties, items and allOf/anyOf/oneOf. It
// reports whether anything changed. Values come from
// jsonschema.UnmarshalJSON, so numbers are json.Number. A null is left
// alone: the schema check then names it.
func coerce(v any, schema any) (any, bool) {
	s, ok := schema.(map[string]any)
	if !ok {
		return v, false
	}
	changed := false
	if all, ok := s["allOf"].([]any); ok {
		for _, sub := range all {
			var c bool
			v, c = coerce(v, sub)
			changed = changed || c
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		subs, ok := s[kw].([]any)
		if !ok {
			continue
		}
		// The first branch whose types the value already has, or can be
		// converted to, wins.
		for _, sub := range subs {
			if matchesSchemaType(v, sub) {
				break
			}
			if nv, c := coerce(v, sub); c && matchesSchemaType(nv, sub) {
				v, changed = nv, true
				break
			}
		}
	}
	types := schemaTypes(s)
	if len(types) > 0 && !anyTypeMatches(v, types) {
		for _, t := range types {
			if nv, ok := coercePrimitive(v, t); ok {
				v, changed = nv, true
				break
			}
		}
	}
	switch val := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for k, pv := range val {
			var sub any
			if ps, ok := props[k]; ok {
				sub = ps
			} else if ap, ok := s["additionalProperties"].(map[string]any); ok {
				sub = ap
			} else {
				continue
			}
			if nv, c := coerce(pv, sub); c {
				val[k] = nv
				changed = true
			}
		}
	case []any:
		switch items := s["items"].(type) {
		case map[string]any:
			for i, it := range val {
				if nv, c := coerce(it, items); c {
					val[i], changed = nv, true
				}
			}
		case []any:
			for i := 0; i < len(val) && i < len(items); i++ {
				if nv, c := coerce(val[i], items[i]); c {
					val[i], changed = nv, true
				}
			}
		}
	}
	return v, changed
}

func schemaTypes(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

func matchesSchemaType(v any, schema any) bool {
	s, ok := schema.(map[string]any)
	if !ok {
		return false
	}
	types := schemaTypes(s)
	return len(types) > 0 && anyTypeMatches(v, types)
}

func anyTypeMatches(v any, types []string) bool {
	for _, t := range types {
		if matchesType(v, t) {
			return true
		}
	}
	return false
}

func matchesType(v any, t string) bool {
	switch t {
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(n), 64)
		return err == nil && f == math.Trunc(f)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "null":
		return v == nil
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return false
}

// coercePrimitive converts v to type t where the conversion is lossless
// and obvious; ok is false when it is not.
func coercePrimitive(v any, t string) (any, bool) {
	switch t {
	case "number", "integer":
		switch x := v.(type) {
		case string:
			s := strings.TrimSpace(x)
			if s == "" {
				return v, false
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return v, false
			}
			if t == "integer" && f != math.Trunc(f) {
				return v, false
			}
			return json.Number(strconv.FormatFloat(f, 'f', -1, 64)), true
		case bool:
			if x {
				return json.Number("1"), true
			}
			return json.Number("0"), true
		}
	case "boolean":
		switch x := v.(type) {
		case string:
			switch x {
			case "true":
				return true, true
			case "false":
				return false, true
			}
		case json.Number:
			switch f, _ := strconv.ParseFloat(string(x), 64); f {
			case 1:
				return true, true
			case 0:
				return false, true
			}
		}
	case "string":
		switch x := v.(type) {
		case json.Number:
			return string(x), true
		case bool:
			return strconv.FormatBool(x), true
		}
	}
	return v, false
}
