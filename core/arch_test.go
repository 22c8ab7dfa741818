// Package core_test guards the dependency rules of architecture.md: imports
// point down the layer table, so the agent core never learns about wire
// dialects and providers never learn about each other.
package core_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/gopi-dev/gopi/"

// allowed lists, for each package (by path below the module), the other
// packages of this module it may import. A package missing from the map may
// import only what its parent entry allows (longest prefix wins).
var allowed = map[string][]string{
	"core/llm":            {},
	"core/llm/llmtest":    {"core/llm"},
	"core/llm/anthropic":  {"core/llm"},
	"core/llm/openai":     {"core/llm"},
	"core/llm/google":     {"core/llm"},
	"core/llm/faux":       {"core/llm"},
	"core/agent":          {"core/llm"},
	"core/tools":          {"core/agent", "core/llm"},
	"core/session":        {"core/llm", "internal/atomicfile"},
	"core/compaction":     {"core/session", "core/llm"},
	"core/resources":      {},
	"core/export":         {"core/session", "core/llm", "internal/atomicfile"},
	"internal/atomicfile": {},
	"core/models":         {"core/llm"},
	"core/api":            {"core/llm", "core/agent"},
	"core/ext":            {"core/agent", "core/session", "core/llm"},
	"rpc":                 {"core/api", "core/llm", "core/agent"},
	"lspbridge":           {"core/api", "core/llm", "core/agent", "rpc"},
}

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "github.com/gopi-dev/gopi/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(p.ImportPath, module)
		rule, ok := ruleFor(rel)
		if !ok {
			continue // cmd and tests may import anything
		}
		checked++
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			if dep == rel || strings.HasPrefix(dep, rel+"/") && rel != "core/llm" {
				continue // own subpackages
			}
			if !permitted(dep, rule) {
				t.Errorf("%s imports %s, which architecture.md forbids", rel, dep)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no packages checked")
	}
}

func ruleFor(rel string) ([]string, bool) {
	best := ""
	for k := range allowed {
		if (rel == k || strings.HasPrefix(rel, k+"/")) && len(k) > len(best) {
			best = k
		}
	}
	if best == "" {
		return nil, false
	}
	return allowed[best], true
}

func permitted(dep string, rule []string) bool {
	for _, a := range rule {
		if dep == a || (a != "core/llm" && strings.HasPrefix(dep, a+"/")) {
			return true
		}
	}
	return false
}
