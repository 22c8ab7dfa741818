package main

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/host"
	"github.com/gopi-dev/gopi/core/llm"
)

const modulePath = "github.com/gopi-dev/gopi"

// typ is a wire type, in terms both languages can write.
type typ struct {
	kind  typeKind
	name  string // prim: its name; ref: the decl's; lit: the string value
	elem  *typ   // array, map, null
	alts  []*typ // union
	table bool   // a JSON object with any keys (the params of a command without any)
}

type typeKind int

const (
	kPrim  typeKind = iota // string, number, integer, boolean, unknown
	kRef                   // a decl
	kArray                 // elem[]
	kMap                   // an object of elem
	kLit                   // a string literal
	kNull                  // elem or null
	kUnion                 // any of alts
)

func prim(name string) *typ  { return &typ{kind: kPrim, name: name} }
func ref(name string) *typ   { return &typ{kind: kRef, name: name} }
func lit(v string) *typ      { return &typ{kind: kLit, name: v} }
func arrayOf(e *typ) *typ    { return &typ{kind: kArray, elem: e} }
func nullable(e *typ) *typ   { return &typ{kind: kNull, elem: e} }
func unionOf(a ...*typ) *typ { return &typ{kind: kUnion, alts: a} }
func mapOf(e *typ) *typ      { return &typ{kind: kMap, elem: e} }
func emptyObject() *typ      { return &typ{kind: kMap, elem: prim("never"), table: true} }
func lits(vs ...string) *typ {
	if len(vs) == 1 {
		return lit(vs[0])
	}
	alts := make([]*typ, len(vs))
	for i, v := range vs {
		alts[i] = lit(v)
	}
	return unionOf(alts...)
}

// field is one member of an object.
type field struct {
	name     string
	t        *typ
	optional bool // may be left out
	doc      string
}

// decl is one named type: an object (fields) or an alias (enum, union).
type decl struct {
	name   string
	doc    string
	fields []field
	alias  *typ
	// samples are values whose JSON the test compares with fields: each
	// must write every required field and no other.
	samples []any
}

// command is one command of core/api: pi/<name> in JSON-RPC.
type command struct {
	name           string
	params, result *typ
}

// model is everything both files describe, in the order they list it.
type model struct {
	decls    []*decl
	commands []command
}

// builder turns Go types into decls.
type builder struct {
	root    string
	m       *model
	byName  map[string]*decl
	named   map[reflect.Type]string
	special map[reflect.Type]*typ
	// tagged are the structs whose MarshalJSON adds a discriminator
	// before their own fields (events, messages, content blocks).
	tagged map[reflect.Type]field
	src    map[string]*pkgSource // by import path
}

// pkgSource is what the generator reads from a package's source: its
// string enums and its doc comments.
type pkgSource struct {
	consts    map[string][]string // type name → values, in source order
	typeDocs  map[string]string
	fieldDocs map[string]map[string]string // type → Go field → doc
}

var (
	marshalerType = reflect.TypeFor[json.Marshaler]()
	rawType       = reflect.TypeFor[json.RawMessage]()
	ctxType       = reflect.TypeFor[context.Context]()
	errType       = reflect.TypeFor[error]()
)

func build(root string) (*model, error) {
	b := &builder{
		root:   root,
		m:      &model{},
		byName: map[string]*decl{},
		named:  map[reflect.Type]string{},
		special: map[reflect.Type]*typ{
			rawType: prim("unknown"),
			// A system message's content writes a string; its sections an
			// object of texts in prompt order, null for one removed.
			reflect.TypeFor[llm.SystemContent](): prim("string"),
			reflect.TypeFor[llm.Sections]():      mapOf(nullable(prim("string"))),
		},
		tagged: map[reflect.Type]field{},
		src:    map[string]*pkgSource{},
	}
	var err error
	func() {
		defer func() {
			if v := recover(); v != nil {
				if e, ok := v.(genError); ok {
					err = e
					return
				}
				panic(v)
			}
		}()
		b.wire()
	}()
	return b.m, err
}

// genError is how the builder gives up on a type it cannot describe.
type genError struct{ error }

func failf(format string, args ...any) {
	panic(genError{fmt.Errorf(format, args...)})
}

// wire walks the protocol from its roots: the unions first (so their
// members are known as such), then the commands.
func (b *builder) wire() {
	for _, u := range unions() {
		b.union(u)
	}
	b.commands()
	// The extension UI sub-protocol: a request is an event too (above);
	// its answer goes the other way. An approval question's request
	// carries the host's details.
	b.typeOf(reflect.TypeFor[api.UIResponse]())
	b.typeOf(reflect.TypeFor[host.ApprovalDetails]())
}

// union declares a discriminated union and its members.
func (b *builder) union(u union) {
	if u.iface != nil {
		b.special[u.iface] = ref(u.name)
	}
	for _, t := range u.sliceTypes {
		b.special[t] = arrayOf(ref(u.name))
	}
	for _, mem := range u.members {
		if mem.goType != nil {
			b.tagged[mem.goType] = field{name: u.tag, t: lits(mem.tags...)}
		}
	}
	var alts []*typ
	for _, mem := range u.members {
		tag := field{name: u.tag, t: lits(mem.tags...)}
		if mem.shape != nil {
			// A shape of the generator's own: its name and samples are
			// the member's.
			d := b.object(mem.name, mem.doc, mem.shape, &tag)
			d.samples = mem.samples
			alts = append(alts, ref(d.name))
			continue
		}
		alts = append(alts, b.typeOf(mem.goType))
	}
	b.add(&decl{name: u.name, doc: u.doc, alias: unionOf(alts...)})
}

// commands lists every method of api.Server as a command, its name
// pi's ("GetLastAssistantText" is get_last_assistant_text), and checks
// them against the commands core/api serves.
func (b *builder) commands() {
	srv := reflect.TypeFor[api.Server]()
	served := map[string]bool{}
	for _, c := range api.Commands() {
		served[c] = true
	}
	for i := range srv.NumMethod() {
		m := srv.Method(i)
		name := snake(m.Name)
		if !served[name] {
			failf("api.Server.%s: core/api serves no command %q", m.Name, name)
		}
		delete(served, name)
		ft := m.Type
		if ft.NumIn() < 1 || ft.In(0) != ctxType || ft.NumIn() > 2 {
			failf("api.Server.%s: want (ctx[, params])", m.Name)
		}
		c := command{name: name, params: emptyObject(), result: prim("null")}
		if ft.NumIn() == 2 {
			c.params = b.typeOf(ft.In(1))
		}
		switch {
		case ft.NumOut() == 1 && ft.Out(0) == errType:
		case ft.NumOut() == 2 && ft.Out(1) == errType:
			c.result = b.typeOf(ft.Out(0))
		default:
			failf("api.Server.%s: want (result, error) or error", m.Name)
		}
		b.m.commands = append(b.m.commands, c)
	}
	if len(served) > 0 {
		var left []string
		for n := range served {
			left = append(left, n)
		}
		sort.Strings(left)
		failf("commands without an api.Server method: %s", strings.Join(left, ", "))
	}
	sort.Slice(b.m.commands, func(i, j int) bool { return b.m.commands[i].name < b.m.commands[j].name })
}

// snake turns a Go method name into pi's command name.
func snake(s string) string {
	r := []rune(s)
	var out []rune
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 && (unicode.IsLower(r[i-1]) || i+1 < len(r) && unicode.IsLower(r[i+1])) {
			out = append(out, '_')
		}
		out = append(out, unicode.ToLower(c))
	}
	return string(out)
}

func (b *builder) add(d *decl) {
	if old, ok := b.byName[d.name]; ok && old != d {
		failf("two types are called %s", d.name)
	}
	b.byName[d.name] = d
	b.m.decls = append(b.m.decls, d)
}

// typeOf is t's wire type, declaring the named types it reaches.
func (b *builder) typeOf(t reflect.Type) *typ {
	if s, ok := b.special[t]; ok {
		return s
	}
	if name, ok := b.named[t]; ok {
		return ref(name)
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		if _, tagged := b.tagged[t]; !tagged && (t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)) {
			failf("%s writes its own JSON (MarshalJSON): describe its wire form in cmd/gentypes", t)
		}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(b.typeOf(t.Elem()))
	case reflect.String:
		if t.Name() != "" && strings.HasPrefix(t.PkgPath(), modulePath) {
			return b.enum(t)
		}
		return prim("string")
	case reflect.Bool:
		return prim("boolean")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return prim("integer")
	case reflect.Float32, reflect.Float64:
		return prim("number")
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Pointer {
			// A list holds values, never null.
			return arrayOf(b.typeOf(t.Elem().Elem()))
		}
		return arrayOf(b.typeOf(t.Elem()))
	case reflect.Map:
		return mapOf(b.typeOf(t.Elem()))
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return prim("unknown")
		}
		failf("interface %s is not a union cmd/gentypes knows", t)
	case reflect.Struct:
		if t.Name() == "" {
			failf("an anonymous struct has no name to declare")
		}
		doc, fdocs := b.docs(t)
		var tag *field
		if f, ok := b.tagged[t]; ok {
			tag = &f
		}
		d := b.objectOf(declName(t), doc, t, fdocs, tag)
		d.samples = []any{reflect.New(t).Interface()}
		return ref(d.name)
	}
	failf("cannot describe %s (%s)", t, t.Kind())
	return nil
}

// object declares a shape of the generator's own (shapes.go), whose doc
// comes from its member.
func (b *builder) object(name, doc string, t reflect.Type, tag *field) *decl {
	return b.objectOf(name, doc, t, nil, tag)
}

func (b *builder) objectOf(name, doc string, t reflect.Type, fdocs map[string]string, tag *field) *decl {
	d := &decl{name: name, doc: doc}
	b.named[t] = name
	b.add(d)
	if tag != nil {
		d.fields = append(d.fields, *tag)
	}
	d.fields = append(d.fields, b.fields(t, fdocs)...)
	return d
}

// fields are t's members as encoding/json writes them: exported fields by
// their tag's name, embedded structs' promoted, "-" left out.
func (b *builder) fields(t reflect.Type, fdocs map[string]string) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			_, inner := b.docs(f.Type)
			out = append(out, b.fields(f.Type, inner)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		ft := f.Type
		var wt *typ
		if ft.Kind() == reflect.Pointer && omit {
			// Left out when nil: absent, never null.
			wt = b.typeOf(ft.Elem())
		} else {
			wt = b.typeOf(ft)
		}
		out = append(out, field{name: name, t: wt, optional: omit, doc: fdocs[f.Name]})
	}
	return out
}

// enum declares a named string type: a union of its constants' values, or
// a plain string when it has none.
func (b *builder) enum(t reflect.Type) *typ {
	name := declName(t)
	b.named[t] = name
	src := b.source(t.PkgPath())
	d := &decl{name: name, doc: src.typeDocs[t.Name()], alias: prim("string")}
	if vs := src.consts[t.Name()]; len(vs) > 0 {
		d.alias = lits(vs...)
	}
	b.add(d)
	return ref(name)
}

// declName is the name a Go type goes by in both files: its own, which
// add checks is unique.
func declName(t reflect.Type) string { return t.Name() }

func (b *builder) docs(t reflect.Type) (string, map[string]string) {
	if !strings.HasPrefix(t.PkgPath(), modulePath) {
		return "", nil
	}
	src := b.source(t.PkgPath())
	return src.typeDocs[t.Name()], src.fieldDocs[t.Name()]
}

// source reads a package of the module: its typed string constants and
// its doc comments.
func (b *builder) source(pkg string) *pkgSource {
	if s, ok := b.src[pkg]; ok {
		return s
	}
	s := &pkgSource{consts: map[string][]string{}, typeDocs: map[string]string{}, fieldDocs: map[string]map[string]string{}}
	b.src[pkg] = s
	dir := filepath.Join(b.root, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(pkg, modulePath), "/")))
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		failf("reading %s: no Go files in %s", pkg, dir)
	}
	sort.Strings(files)
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			failf("reading %s: %v", pkg, err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			switch gd.Tok {
			case token.CONST:
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					id, ok := vs.Type.(*ast.Ident)
					if !ok || len(vs.Values) != len(vs.Names) {
						continue
					}
					for _, v := range vs.Values {
						if bl, ok := v.(*ast.BasicLit); ok && bl.Kind == token.STRING {
							if str, err := strconv.Unquote(bl.Value); err == nil {
								s.consts[id.Name] = append(s.consts[id.Name], str)
							}
						}
					}
				}
			case token.TYPE:
				for _, spec := range gd.Specs {
					ts := spec.(*ast.TypeSpec)
					doc := ts.Doc
					if doc == nil && len(gd.Specs) == 1 {
						doc = gd.Doc
					}
					s.typeDocs[ts.Name.Name] = docText(doc)
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					fd := map[string]string{}
					for _, fl := range st.Fields.List {
						text := docText(fl.Doc)
						if text == "" {
							text = docText(fl.Comment)
						}
						for _, n := range fl.Names {
							fd[n.Name] = text
						}
					}
					s.fieldDocs[ts.Name.Name] = fd
				}
			}
		}
	}
	return s
}

// docText is a comment's text, its lines joined by newlines.
func docText(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return strings.TrimSpace(g.Text())
}
