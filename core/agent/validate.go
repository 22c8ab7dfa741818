package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kaptinlin/jsonschema"
)

// nested checks the arguments of calls made outside a run.
var nested validator

// Validate checks a call's arguments as a run does before it runs one:
// the tool's ArgumentPreparer first, then its JSON Schema. It returns the
// arguments to run with, or a *ValidationError whose text the model (or
// the script that made the call) reads. For calls made outside a run,
// such as a codemode script's.
func Validate(tool Tool, args json.RawMessage) (json.RawMessage, error) {
	if ap, ok := tool.(ArgumentPreparer); ok {
		args = ap.PrepareArguments(slices.Clone(args))
	}
	return nested.validate(tool.Spec().Name, tool.Spec().Parameters, args)
}

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
	doc, err := decodeNumbers(params)
	if err != nil {
		c.err = fmt.Errorf("decoding schema: %w", err)
		return c
	}
	if _, ok := doc.(map[string]any); !ok {
		if _, isBool := doc.(bool); !isBool {
			c.err = fmt.Errorf("%w, not %s", errSchemaKind, jsonKind(doc))
			return c
		}
	}
	sch, err := jsonschema.NewCompiler().Compile(params)
	if err != nil {
		c.err = fmt.Errorf("compiling schema: %w", err)
		return c
	}
	c.doc, c.schema = doc, sch
	return c
}

// decodeNumbers decodes JSON keeping numbers as json.Number, so an
// integer stays exact and coercion can tell 1 from 1.0.
func decodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errTrailingValue
	}
	return v, nil
}

// validate returns the arguments to run name with: optional properties
// sent as null dropped, primitives coerced where the schema wants another
// type (the string "10" for an integer, as pi's validator does), then
// checked. A failure is an error whose text the model reads: every
// problem found, one per line, as pi words them.
func (v *validator) validate(name string, params, args json.RawMessage) (json.RawMessage, error) {
	c := v.compile(params)
	if c.err != nil {
		return nil, &SchemaError{Tool: name, Err: c.err}
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	inst, err := decodeNumbers(args)
	if err != nil {
		return nil, &ValidationError{Tool: name, Problems: []string{"  - root: arguments are not valid JSON: " + err.Error()}, Arguments: string(args), Err: err}
	}
	received := args
	changed := dropOptionalNulls(inst, c.doc)
	var coerced bool
	inst, coerced = coerce(inst, c.doc)
	if changed || coerced {
		if b, err := json.Marshal(inst); err == nil {
			args = b
		}
	}
	res := c.schema.Validate(inst)
	if res.IsValid() {
		return args, nil
	}
	var lines []string
	collectErrors(res, "", &lines)
	if len(lines) == 0 {
		lines = []string{"  - root: does not match the schema"}
	}
	return nil, &ValidationError{Tool: name, Problems: lines, Arguments: indentJSON(received)}
}

// aggregates are keywords whose failure only says that a part failed;
// the part's own result (a detail) says how, so the aggregate is left out
// when a detail is there to report.
var aggregates = map[string]bool{
	"properties": true, "patternProperties": true, "items": true, "prefixItems": true,
	"allOf": true, "$ref": true, "$dynamicRef": true, "dependentSchemas": true,
	"unevaluatedProperties": true, "unevaluatedItems": true, "contentSchema": true,
	"then": true, "else": true,
}

// alternatives are keywords whose branches failing is expected: only the
// keyword's own line is reported, not every branch's reasons.
var alternatives = []string{"/anyOf/", "/oneOf/", "/not", "/if", "/contains"}

// collectErrors lists the problems in r as "  - path: message", the path
// dotted (items.0.k), a missing property named in it. Each result's
// instance location is relative to its parent's, so base carries the
// path so far.
func collectErrors(r *jsonschema.EvaluationResult, base string, out *[]string) {
	path := joinPath(base, dotted(r.InstanceLocation))
	// The validator also checks a missing required property's schema
	// against null; that says nothing the required line does not.
	var missing []string
	if e, ok := r.Errors["required"]; ok {
		missing = quotedNames(e.Params)
	}
	details := make([]*jsonschema.EvaluationResult, 0, len(r.Details))
	for _, d := range r.Details {
		if d.IsValid() || underAlternative(r.EvaluationPath, d.EvaluationPath) {
			continue
		}
		if rest := strings.TrimPrefix(d.EvaluationPath, r.EvaluationPath); strings.HasPrefix(rest, "/properties/") && slices.Contains(missing, strings.TrimPrefix(rest, "/properties/")) {
			continue
		}
		details = append(details, d)
	}
	sort.SliceStable(details, func(i, j int) bool { return details[i].EvaluationPath < details[j].EvaluationPath })
	keywords := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		keywords = append(keywords, k)
	}
	sort.Strings(keywords)
	for _, k := range keywords {
		e := r.Errors[k]
		if aggregates[k] && (len(details) > 0 || len(missing) > 0) {
			continue
		}
		if k == "required" && len(missing) > 0 {
			*out = append(*out, fmt.Sprintf("  - %s: must have required properties %s", joinPath(path, missing[0]), strings.Join(missing, ", ")))
			continue
		}
		at := path
		if at == "" {
			at = "root"
		}
		*out = append(*out, fmt.Sprintf("  - %s: %s", at, message(e)))
	}
	for _, d := range details {
		collectErrors(d, path, out)
	}
}

func underAlternative(parent, child string) bool {
	rest := strings.TrimPrefix(child, parent)
	for _, a := range alternatives {
		if strings.HasPrefix(rest, a) {
			return true
		}
	}
	return false
}

func dotted(pointer string) string {
	p := strings.TrimPrefix(pointer, "#")
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return ""
	}
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return strings.Join(parts, ".")
}

func joinPath(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}

// quotedNames reads the property names the validator quoted ('a', 'b')
// in a required or additionalProperties failure.
func quotedNames(params map[string]any) []string {
	s, _ := params["property"].(string)
	if s == "" {
		s, _ = params["properties"].(string)
	}
	if s == "" {
		return nil
	}
	var names []string
	for _, q := range strings.Split(s, "', '") {
		if n := strings.Trim(q, "'"); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// message words a failure as pi's validator does for the keywords a
// model meets, and falls back to the validator's own sentence.
func message(e *jsonschema.EvaluationError) string {
	p := func(k string) string { return fmt.Sprint(e.Params[k]) }
	switch e.Keyword {
	case "type":
		if e.Code == "type_mismatch" {
			return "must be " + strings.ReplaceAll(p("expected"), ", ", ",")
		}
	case "minimum":
		return "must be >= " + p("minimum")
	case "maximum":
		return "must be <= " + p("maximum")
	case "exclusiveMinimum":
		return "must be > " + p("exclusive_minimum")
	case "exclusiveMaximum":
		return "must be < " + p("exclusive_maximum")
	case "minLength":
		return "must not have fewer than " + p("min_length") + " characters"
	case "maxLength":
		return "must not have more than " + p("max_length") + " characters"
	case "minItems":
		return "must not have fewer than " + p("min_items") + " items"
	case "maxItems":
		return "must not have more than " + p("max_items") + " items"
	case "enum":
		return "must be equal to one of the allowed values: " + p("expected")
	case "const":
		return "must be equal to constant"
	case "pattern":
		if e.Code == "pattern_mismatch" {
			return fmt.Sprintf("must match pattern %q", p("pattern"))
		}
	case "additionalProperties":
		if names := quotedNames(e.Params); len(names) > 0 {
			return "must not have additional properties: " + strings.Join(names, ", ")
		}
		return "must not have additional properties"
	case "anyOf":
		return "must match a schema in anyOf"
	case "oneOf":
		return "must match exactly one schema in oneOf"
	case "not":
		return "must not be valid"
	case "schema":
		return "schema is false"
	}
	return e.Error()
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// dropOptionalNulls removes, as pi does, properties sent as null that the
// schema does not require and whose own schema does not allow null: a
// model's way of leaving an optional argument out. It reports whether it
// removed any.
func dropOptionalNulls(v any, schema any) bool {
	s, ok := schema.(map[string]any)
	if !ok {
		return false
	}
	changed := false
	switch val := v.(type) {
	case []any:
		switch items := s["items"].(type) {
		case map[string]any:
			for _, it := range val {
				changed = dropOptionalNulls(it, items) || changed
			}
		case []any:
			for i := 0; i < len(val) && i < len(items); i++ {
				changed = dropOptionalNulls(val[i], items[i]) || changed
			}
		}
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		required := map[string]bool{}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if name, ok := r.(string); ok {
					required[name] = true
				}
			}
		}
		for k, ps := range props {
			pv, ok := val[k]
			if !ok {
				continue
			}
			sub, _ := ps.(map[string]any)
			if pv == nil && !required[k] && sub != nil && sub["$ref"] == nil && !allowsNull(sub) {
				delete(val, k)
				changed = true
				continue
			}
			changed = dropOptionalNulls(pv, ps) || changed
		}
	}
	return changed
}

// allowsNull reports whether a schema can accept null, judged from its
// type, enum, const and alternatives; a schema that names none of them
// accepts anything.
func allowsNull(s map[string]any) bool {
	if types := schemaTypes(s); len(types) > 0 {
		if !anyTypeMatches(nil, types) {
			return false
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || e == nil
		}
		if !found {
			return false
		}
	}
	if c, ok := s["const"]; ok && c != nil {
		return false
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if subs, ok := s[kw].([]any); ok {
			some := false
			for _, sub := range subs {
				if m, ok := sub.(map[string]any); ok && allowsNull(m) {
					some = true
				}
				if b, ok := sub.(bool); ok && b {
					some = true
				}
			}
			if !some {
				return false
			}
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, sub := range all {
			if m, ok := sub.(map[string]any); ok && !allowsNull(m) {
				return false
			}
		}
	}
	return true
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
// decodeNumbers, so numbers are json.Number. A null left after
// dropOptionalNulls becomes the type's zero value, as in pi.
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
	if v == nil {
		switch t {
		case "number", "integer":
			return json.Number("0"), true
		case "boolean":
			return false, true
		case "string":
			return "", true
		}
		return v, false
	}
	switch t {
	case "null":
		switch x := v.(type) {
		case string:
			return nil, x == ""
		case bool:
			return nil, !x
		case json.Number:
			f, err := strconv.ParseFloat(string(x), 64)
			return nil, err == nil && f == 0
		}
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
