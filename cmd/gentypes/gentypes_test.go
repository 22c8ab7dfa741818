package main

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The files checked in are what the generator writes now.
func TestGeneratedFilesCurrent(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		old, err := os.ReadFile(filepath.Join(root, f.path))
		if err != nil {
			t.Errorf("%s: %v: run make generate", f.path, err)
			continue
		}
		if !bytes.Equal(old, f.data) {
			t.Errorf("%s is not what cmd/gentypes writes from core/api: run make generate", f.path)
		}
	}
}

// Every object the files describe is what encoding/json writes: a value
// of it has each required member and no member the description lacks.
// This is what holds the hand-written shapes (unions.go) to MarshalJSON.
func TestObjectsMatchTheirJSON(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	m, err := build(root)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, d := range m.decls {
		if d.alias != nil {
			continue
		}
		if len(d.samples) == 0 {
			t.Errorf("%s has no sample to check it against", d.name)
		}
		for _, s := range d.samples {
			raw, err := json.Marshal(s)
			if err != nil {
				t.Errorf("%s: marshalling %T: %v", d.name, s, err)
				continue
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Errorf("%s: %T does not write an object: %s", d.name, s, raw)
				continue
			}
			declared := map[string]bool{}
			for _, f := range d.fields {
				declared[f.name] = true
				if _, ok := got[f.name]; !ok && !f.optional {
					t.Errorf("%s: %s is required, but %T left it out: %s", d.name, f.name, s, raw)
				}
				if f.t.kind == kLit {
					if string(got[f.name]) != quote(f.t.name) {
						t.Errorf("%s: %s is %s, want %s", d.name, f.name, got[f.name], quote(f.t.name))
					}
				}
			}
			for k := range got {
				if !declared[k] {
					t.Errorf("%s: %T writes %q, which the description lacks: %s", d.name, s, k, raw)
				}
			}
			checked++
		}
	}
	if checked < 50 {
		t.Errorf("checked only %d values", checked)
	}
}

// apiEvents names every event type core/api declares.
func TestEveryAPIEventListed(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "core", "api", "*.go"))
	var want []string
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "EventType" {
				continue
			}
			if id, ok := fd.Recv.List[0].Type.(*ast.Ident); ok {
				want = append(want, id.Name)
			}
		}
	}
	var got []string
	for _, m := range apiEvents() {
		got = append(got, m.goType.Name())
	}
	sort.Strings(want)
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("apiEvents lists %v, core/api declares %v", got, want)
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{
		"Prompt":               "prompt",
		"FollowUp":             "follow_up",
		"ExportHTML":           "export_html",
		"GetLastAssistantText": "get_last_assistant_text",
	} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}
