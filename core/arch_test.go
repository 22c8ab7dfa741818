// Package core_test guards the dependency rules of architecture.md: imports
// point down the layer table, so the agent core never learns about wire
// dialects and providers never learn about each other.
package core_test

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/gopi-dev/gopi/"

// allowed lists, for each package of the module (by path below the module),
// the other packages of the module it may import directly. Every package
// must have an entry (a new package fails the test until it is placed in
// the table); an entry covers its subpackages too unless they have their
// own. "*" allows everything: only the binary's wiring has it.
var allowed = map[string][]string{
	"cmd":                {"*"},
	"core":               {}, // this test's package; covers no subpackage
	"core/llm":           {},
	"core/llm/llmtest":   {"core/llm"},
	"core/llm/anthropic": {"core/llm"},
	"core/llm/openai":    {"core/llm"},
	"core/llm/google":    {"core/llm"},
	"core/llm/faux":      {"core/llm"},
	"core/agent":         {"core/llm", "internal/fanout"},
	"core/tools":         {"core/agent", "core/llm", "internal/atomicfile", "internal/regularfile"},
	"core/session":       {"core/llm", "internal/atomicfile", "internal/regularfile"},
	"core/compaction":    {"core/session", "core/llm"},
	"core/resources":     {"internal/atomicfile", "internal/lockdir", "internal/regularfile"},
	"core/export":        {"core/session", "core/llm", "internal/atomicfile", "internal/regularfile"},
	"core/models":        {"core/llm", "internal/atomicfile", "internal/envexpand", "internal/lockdir", "internal/regularfile"},
	"core/mcp":           {"core/agent", "core/llm", "core/tools", "internal/envexpand", "internal/fanout", "internal/homedir", "internal/regularfile", "internal/atomicfile", "internal/lockdir"},
	"core/api":           {"core/llm"},
	"core/ext":           {"core/agent", "core/session", "core/compaction", "core/llm", "core/api", "internal/homedir", "internal/rpccodec"},
	"core/host":          {"core/*", "internal/atomicfile", "internal/fanout", "internal/homedir", "internal/regularfile"},
	// The tool pipeline: given what it uses as small interfaces, never
	// the host.
	"core/host/gate": {"core/agent", "core/api", "core/llm", "core/tools"},
	// The MCP room: the servers' connections and registrations, what the
	// client heard of them, tool_search; given what it uses, never the
	// host.
	"core/host/mcpstate": {"core/agent", "core/api", "core/ext", "core/llm", "core/mcp", "core/resources", "core/tools"},
	// The checkpoints of the project's files: given what it uses of the
	// host as funcs, never the host.
	"core/host/checkpoints": {"core/agent", "core/api", "core/checkpoint", "core/llm", "core/session", "core/tools"},
	// The prompt's life: given what it uses as small interfaces, never
	// the host.
	"core/host/run":        {"core/agent", "core/api", "core/compaction", "core/llm"},
	"internal/atomicfile":  {"internal/regularfile"},
	"internal/regularfile": {},
	"internal/lockdir":     {},
	"internal/homedir":     {},
	"internal/envexpand":   {},
	"internal/fanout":      {},
	"internal/testenv":     {},
	"internal/rpccodec":    {},
	"rpc":                  {"core/api"},
	"lspbridge":            {"core/api", "core/agent", "rpc", "internal/rpccodec"},
	"lspbridge/acp":        {"core/api", "core/agent", "core/llm", "core/mcp", "core/tools", "rpc"},
	"core/checkpoint":      {},
	"core/sandbox":         {"core/sandbox/launch"},
	"core/sandbox/launch":  {},
	// The codemode tool: given its tool calls, store and models as
	// small interfaces, never the host.
	"core/codemode": {"core/agent", "core/llm", "core/tools", "core/codemode/quickjs"},
	// QuickJS on wazero: nothing of the module.
	"core/codemode/quickjs": {},

	// go generate's tool for core/ext: it reads the protocol, nothing else.
	"core/ext/internal/gen": {"core/ext"},
}

// neverBelowCore are the packages nothing under core/ (or internal/) may
// reach, directly or through any chain of imports.
var neverBelowCore = []string{"rpc", "lspbridge", "lspbridge/acp", "cmd"}

// pkg is what go list says of one package of the module.
type pkg struct {
	ImportPath string
	Imports    []string // direct imports
	Deps       []string // every package it depends on, transitively
}

func listModule(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; the module has more", len(pkgs))
	}
	return pkgs
}

// own keeps the module's packages of list, by path below the module.
func own(list []string) []string {
	var out []string
	for _, imp := range list {
		if rel, ok := strings.CutPrefix(imp, module); ok {
			out = append(out, rel)
		}
	}
	return out
}

func TestImportRules(t *testing.T) {
	for _, p := range listModule(t) {
		rel := strings.TrimPrefix(p.ImportPath, module)
		rule, ok := ruleFor(rel)
		if !ok {
			t.Errorf("%s has no entry in the import rules; add it to allowed (core/arch_test.go) and to docs/architecture.md", rel)
			continue
		}
		for _, dep := range own(p.Imports) {
			if !permitted(rel, dep, rule) {
				t.Errorf("%s imports %s, which architecture.md forbids", rel, dep)
			}
		}
	}
}

// TestCoreNeverReachesTheWire checks the blanket rule transitively: a
// core package that imports an allowed package which in turn reaches a
// dialect breaks it as surely as a direct import.
func TestCoreNeverReachesTheWire(t *testing.T) {
	checked := 0
	for _, p := range listModule(t) {
		rel := strings.TrimPrefix(p.ImportPath, module)
		if !strings.HasPrefix(rel, "core") && !strings.HasPrefix(rel, "internal/") {
			continue
		}
		checked++
		for _, dep := range own(p.Deps) {
			for _, banned := range neverBelowCore {
				if dep == banned || strings.HasPrefix(dep, banned+"/") {
					t.Errorf("%s reaches %s (through its imports); nothing under core/ may", rel, dep)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no core packages checked")
	}
}

// TestLayersHoldTransitively checks the rules architecture.md states in
// prose, over every chain of imports.
func TestLayersHoldTransitively(t *testing.T) {
	providers := []string{"core/llm/anthropic", "core/llm/openai", "core/llm/google", "core/llm/faux"}
	for _, p := range listModule(t) {
		rel := strings.TrimPrefix(p.ImportPath, module)
		deps := own(p.Deps)
		switch {
		case rel == "core/llm":
			for _, d := range deps {
				t.Errorf("core/llm reaches %s; it may import no other package of the module", d)
			}
		case slices.Contains(providers, rel):
			for _, d := range deps {
				if slices.Contains(providers, d) {
					t.Errorf("provider %s reaches provider %s", rel, d)
				}
			}
		case rel == "core/agent":
			if slices.Contains(deps, "core/tools") {
				t.Error("core/agent reaches core/tools; tools are injected")
			}
		}
	}
}

func ruleFor(rel string) ([]string, bool) {
	best, found := "", false
	for k := range allowed {
		covers := rel == k || (k != "core" && strings.HasPrefix(rel, k+"/"))
		if covers && (!found || len(k) > len(best)) {
			best, found = k, true
		}
	}
	if !found {
		return nil, false
	}
	return allowed[best], true
}

func permitted(rel, dep string, rule []string) bool {
	if rel != "core/llm" && strings.HasPrefix(dep, rel+"/") {
		return true // a package may use its own subpackages
	}
	for _, a := range rule {
		switch {
		case a == "*", dep == a:
			return true
		case strings.HasSuffix(a, "/*") && strings.HasPrefix(dep, strings.TrimSuffix(a, "*")):
			return true
		case a != "core/llm" && strings.HasPrefix(dep, a+"/"):
			return true
		}
	}
	return false
}

// TestRuleMatching pins the helpers above, so a broken matcher cannot
// make every import look permitted.
func TestRuleMatching(t *testing.T) {
	cases := []struct {
		rel, dep string
		want     bool
	}{
		{"core/agent", "core/llm", true},
		{"core/agent", "core/llm/openai", false}, // core/llm's entry does not cover providers
		{"core/agent", "core/tools", false},
		{"core/host", "core/tools", true},
		{"core/host", "rpc", false},
		{"core/host", "lspbridge", false},
		{"rpc", "core/api", true},
		{"rpc", "core/host", false},
		{"core/llm", "core/llm/faux", false},
		{"cmd/gopi", "core/host", true},
		{"core/tools", "core/agent", true},
	}
	for _, c := range cases {
		rule, ok := ruleFor(c.rel)
		if !ok {
			t.Fatalf("no rule for %s", c.rel)
		}
		if got := permitted(c.rel, c.dep, rule); got != c.want {
			t.Errorf("%s importing %s: permitted=%v, want %v", c.rel, c.dep, got, c.want)
		}
	}
	for _, rel := range []string{"brand/new", "core/newpkg"} {
		if _, ok := ruleFor(rel); ok {
			t.Errorf("%s is not in the table and must have no rule", rel)
		}
	}
}
