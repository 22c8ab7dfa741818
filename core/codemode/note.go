package codemode

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// ScriptNote is what codemode.mode "on" appends to the description of a
// tool that is declared to the model and callable from scripts (pi's
// note): how a script calls it and what the call resolves to, in one
// line, so the tool's full output type is not sent with every request.
func ScriptNote(t Tool) string {
	return "Codemode: `tools." + identifier(t.Spec.Name) + "(args)` resolves to " + describeOutput(t) + "."
}

// describeOutput is what a call resolves to: "a string", the field names
// of an object (one level of nested objects, const values shown), the
// field names of each object of a union, the type when it fits on a
// line, or a pointer to describeTool().
func describeOutput(t Tool) string {
	if t.Output == nil {
		return "a string"
	}
	root := parseSchema(t.Output)
	typ := (&renderer{root: root}).render(root, 0)
	if typ == "string" {
		return "a string"
	}
	if f, ok := fieldNames(t.Output, root, 1); ok {
		return "`" + f + "`"
	}
	if f, ok := unionFieldNames(t.Output, root); ok {
		return "`" + f + "`"
	}
	if !strings.Contains(typ, "\n") {
		return "`" + typ + "`"
	}
	b, _ := json.Marshal(t.Spec.Name)
	return "a value; `await describeTool(" + string(b) + ")` shows its type"
}

// rawSchema is a schema with its properties in the order written.
type rawSchema struct {
	Type       any             `json:"type"`
	Properties json.RawMessage `json:"properties"`
	Required   []string        `json:"required"`
	Const      json.RawMessage `json:"const"`
	Ref        string          `json:"$ref"`
}

// follow resolves a local $ref of raw against root's definitions.
func follow(raw json.RawMessage, root *schema) json.RawMessage {
	for range 8 {
		var s rawSchema
		if json.Unmarshal(raw, &s) != nil || s.Ref == "" || root == nil {
			return raw
		}
		name, ok := strings.CutPrefix(s.Ref, "#/$defs/")
		defs := root.Defs
		if !ok {
			name, _ = strings.CutPrefix(s.Ref, "#/definitions/")
			defs = root.Definitions
		}
		d := defs[name]
		if d == nil {
			return raw
		}
		b, err := json.Marshal(d)
		if err != nil {
			return raw
		}
		raw = b
	}
	return raw
}

// fieldNames are an object schema's fields as `{ a, b?, c: { d } }`.
func fieldNames(raw json.RawMessage, root *schema, depth int) (string, bool) {
	raw = follow(raw, root)
	var s rawSchema
	if json.Unmarshal(raw, &s) != nil || s.Type != "object" || len(s.Properties) == 0 {
		return "", false
	}
	keys, vals := orderedObject(s.Properties)
	if keys == nil {
		return "", false
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		f := k
		if !slices.Contains(s.Required, k) {
			f += "?"
		}
		var p rawSchema
		_ = json.Unmarshal(follow(vals[i], root), &p)
		switch {
		case len(p.Const) > 0:
			f += ": " + string(p.Const)
		case depth > 0:
			if nested, ok := fieldNames(vals[i], root, depth-1); ok {
				f += ": " + nested
			}
		}
		parts[i] = f
	}
	return "{ " + strings.Join(parts, ", ") + " }", true
}

// unionFieldNames are the fields of each object of an anyOf or oneOf whose
// variants are all objects, joined by " | ".
func unionFieldNames(raw json.RawMessage, root *schema) (string, bool) {
	var u struct {
		AnyOf []json.RawMessage `json:"anyOf"`
		OneOf []json.RawMessage `json:"oneOf"`
	}
	_ = json.Unmarshal(follow(raw, root), &u)
	vs := u.AnyOf
	if vs == nil {
		vs = u.OneOf
	}
	if len(vs) == 0 {
		return "", false
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		f, ok := fieldNames(v, root, 0)
		if !ok {
			return "", false
		}
		parts[i] = f
	}
	return strings.Join(parts, " | "), true
}

// orderedObject is a JSON object's keys and values in the order written;
// nil when it is not an object.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil
	}
	keys := []string{}
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil
		}
		keys = append(keys, k)
		vals = append(vals, v)
	}
	return keys, vals
}
