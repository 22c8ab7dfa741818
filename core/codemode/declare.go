package codemode

import (
	"encoding/json"
	"slices"
	"strings"
)

// identifier is the name a script calls a tool by: characters that
// cannot be in a JavaScript identifier become "_" (pi's rule), so
// mcp__dev-radius__search is tools.mcp__dev_radius__search.
func identifier(name string) string {
	var b strings.Builder
	for i, r := range name {
		ok := r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
		if ok {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// schema is the part of JSON Schema the declarations render.
type schema struct {
	Type                 any                `json:"type"`
	Description          string             `json:"description"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	Items                *schema            `json:"items"`
	Enum                 []any              `json:"enum"`
	Const                any                `json:"const"`
	AnyOf                []*schema          `json:"anyOf"`
	OneOf                []*schema          `json:"oneOf"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	Ref                  string             `json:"$ref"`
	Defs                 map[string]*schema `json:"$defs"`
	Definitions          map[string]*schema `json:"definitions"`
}

func parseSchema(raw json.RawMessage) *schema {
	if len(raw) == 0 {
		return nil
	}
	var s schema
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return &s
}

// declaration is a tool's TypeScript declaration as scripts see it:
//
//	declare const tools: { read(args: { … }): Promise<string>; };
func declaration(t Tool) string {
	in := parseSchema(t.Spec.Parameters)
	out := parseSchema(t.Output)
	r := renderer{root: in}
	args := r.render(in, 0)
	if in == nil {
		args = "{}"
	}
	ret := "string"
	if out != nil {
		ret = (&renderer{root: out}).render(out, 0)
	}
	return "declare const tools: { " + identifier(t.Spec.Name) + "(args: " + args + "): Promise<" + ret + ">; };"
}

// sample is what describeTool() and ALL_TOOLS give for a tool, and its
// section in the description: its description, then its declaration.
func sample(t Tool) string {
	return strings.TrimSpace(t.Spec.Description) + "\n\ncodemode tool declaration:\n```ts\n" + declaration(t) + "\n```"
}

// renderer renders schemas as TypeScript types, resolving local $refs in
// root.
type renderer struct {
	root *schema
	seen []*schema
}

func (r *renderer) resolve(s *schema) *schema {
	for s != nil && s.Ref != "" && r.root != nil {
		name, ok := strings.CutPrefix(s.Ref, "#/$defs/")
		defs := r.root.Defs
		if !ok {
			name, _ = strings.CutPrefix(s.Ref, "#/definitions/")
			defs = r.root.Definitions
		}
		next := defs[name]
		if s.Ref == "#" {
			next = r.root
		}
		if next == nil || slices.Contains(r.seen, next) {
			return nil
		}
		s = next
	}
	return s
}

func (r *renderer) render(s *schema, depth int) string {
	s = r.resolve(s)
	if s == nil {
		return "unknown"
	}
	if s.Const != nil {
		b, _ := json.Marshal(s.Const)
		return string(b)
	}
	if len(s.Enum) > 0 {
		vs := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			b, _ := json.Marshal(v)
			vs[i] = string(b)
		}
		return strings.Join(vs, " | ")
	}
	if vs := append(s.AnyOf, s.OneOf...); len(vs) > 0 {
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = r.render(v, depth)
		}
		return strings.Join(parts, " | ")
	}
	types := typeNames(s)
	if len(types) > 1 {
		parts := make([]string, len(types))
		for i, t := range types {
			c := *s
			c.Type = t
			parts[i] = r.render(&c, depth)
		}
		return strings.Join(parts, " | ")
	}
	switch t := first(types); t {
	case "string", "boolean", "null":
		return t
	case "number", "integer":
		return "number"
	case "array":
		return "Array<" + r.render(s.Items, depth) + ">"
	case "object", "":
		if len(s.Properties) == 0 {
			if t == "" && s.Items == nil {
				return "unknown"
			}
			if add := parseSchema(s.AdditionalProperties); add != nil {
				return "Record<string, " + r.render(add, depth) + ">"
			}
			return "Record<string, unknown>"
		}
		return r.object(s, depth)
	}
	return "unknown"
}

func typeNames(s *schema) []string {
	switch t := s.Type.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, v := range t {
			if n, ok := v.(string); ok {
				out = append(out, n)
			}
		}
		return out
	}
	return nil
}

func first(ts []string) string {
	if len(ts) == 0 {
		return ""
	}
	return ts[0]
}

// object renders an object's properties in name order, each with its
// description as a comment; an object whose properties have no
// description and fit on a line stays on one.
func (r *renderer) object(s *schema, depth int) string {
	r.seen = append(r.seen, s)
	defer func() { r.seen = r.seen[:len(r.seen)-1] }()
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	type field struct{ name, typ, doc string }
	fields := make([]field, len(names))
	inline := true
	for i, n := range names {
		p := s.Properties[n]
		typ := r.render(p, depth+1)
		doc := ""
		if rp := r.resolve(p); rp != nil {
			doc = strings.TrimSpace(rp.Description)
		}
		if !slices.Contains(s.Required, n) {
			n += "?"
		}
		fields[i] = field{n, typ, doc}
		if doc != "" || strings.Contains(typ, "\n") {
			inline = false
		}
	}
	if inline {
		var b strings.Builder
		b.WriteString("{ ")
		for _, f := range fields {
			b.WriteString(f.name + ": " + f.typ + "; ")
		}
		b.WriteString("}")
		return b.String()
	}
	indent := strings.Repeat("  ", depth+1)
	var b strings.Builder
	b.WriteString("{\n")
	for _, f := range fields {
		if f.doc != "" {
			for _, line := range strings.Split(f.doc, "\n") {
				b.WriteString(indent + "// " + line + "\n")
			}
		}
		b.WriteString(indent + f.name + ": " + f.typ + ";\n")
	}
	b.WriteString(strings.Repeat("  ", depth) + "}")
	return b.String()
}
