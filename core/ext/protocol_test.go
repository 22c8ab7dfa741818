package ext

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// hostModules are the host's hand-written modules by name: every embedded
// .mjs but the generated one.
func hostModules(t *testing.T) map[string]string {
	t.Helper()
	entries, err := hostFiles.ReadDir("nodehost")
	if err != nil {
		t.Fatal(err)
	}
	mods := map[string]string{}
	for _, e := range entries {
		if e.Name() == "methods.gen.mjs" {
			continue
		}
		b, err := hostFiles.ReadFile("nodehost/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		mods[e.Name()] = string(b)
	}
	if _, ok := mods["host.mjs"]; !ok {
		t.Fatal("host.mjs is not embedded")
	}
	return mods
}

// The host's modules name methods only through the generated module,
// every name they use is one of the protocol's, and between them they
// serve every host method, each in one place.
func TestHostScriptSpeaksTheProtocol(t *testing.T) {
	mods := hostModules(t)
	keys := map[string]map[string]bool{"served": {}, "gopi": {}}
	sync := map[string]bool{}
	for _, m := range Methods {
		side := "gopi"
		if m.Side == HostSide {
			side = "served"
		}
		keys[side][jsKey(m.Name)] = true
		if m.Sync {
			sync[jsKey(m.Name)] = true
		}
	}
	serves := map[string][]string{} // served key -> the modules that set its handler
	for _, name := range slices.Sorted(maps.Keys(mods)) {
		script := mods[name]
		for _, use := range regexp.MustCompile(`\b(served|gopi)\.(\w+)`).FindAllStringSubmatch(script, -1) {
			if !keys[use[1]][use[2]] {
				t.Errorf("%s uses %s.%s, which protocol.go does not have", name, use[1], use[2])
			}
		}
		for _, use := range regexp.MustCompile(`\bhandlers\.set\(served\.(\w+),`).FindAllStringSubmatch(script, -1) {
			serves[use[1]] = append(serves[use[1]], name)
		}
		for _, use := range regexp.MustCompile(`\b(request|requestSync|notify)\(gopi\.(\w+)`).FindAllStringSubmatch(script, -1) {
			if (use[1] == "requestSync") != sync[use[2]] {
				t.Errorf("%s calls %s with %s: sync requests, and only they, go through requestSync", name, use[2], use[1])
			}
		}
		if lit := regexp.MustCompile(`\b(?:notify|request|requestSync|handlers\.set)\("`).FindString(script); lit != "" {
			t.Errorf("%s names a method by hand (%s...); use the generated names", name, lit)
		}
	}
	for _, m := range Methods {
		if m.Side != HostSide {
			continue
		}
		switch in := serves[jsKey(m.Name)]; len(in) {
		case 0:
			t.Errorf("no host module serves %s", m.Name)
		case 1:
		default:
			t.Errorf("%s is served %d times (%s): the last handler set wins", m.Name, len(in), strings.Join(in, ", "))
		}
	}
}

// node runs host.mjs, so a module counts only if host.mjs imports it,
// itself or through another; and every module imported is embedded.
func TestHostModulesAreImported(t *testing.T) {
	mods := hostModules(t)
	imports := regexp.MustCompile(`(?m)^import\s+(?:[^"]*\s+from\s+)?"\./([\w.]+)"`)
	reached := map[string]bool{"host.mjs": true}
	for next := []string{"host.mjs"}; len(next) > 0; {
		name := next[0]
		next = next[1:]
		for _, imp := range imports.FindAllStringSubmatch(mods[name], -1) {
			dep := imp[1]
			if _, err := hostFiles.ReadFile("nodehost/" + dep); err != nil {
				t.Errorf("%s imports %s, which is not embedded", name, dep)
				continue
			}
			if _, ok := mods[dep]; ok && !reached[dep] {
				reached[dep] = true
				next = append(next, dep)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(mods)) {
		if !reached[name] {
			t.Errorf("%s is embedded but host.mjs never loads it", name)
		}
	}
}

// jsKey is the generated module's name for m (internal/gen's jsName).
func jsKey(m Method) string {
	parts := strings.Split(string(m), "/")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// Each method has one entry, and the scheduling flags sit on the side
// they mean something for.
func TestMethodSpecs(t *testing.T) {
	seen := map[specKey]bool{}
	for _, m := range Methods {
		k := specKey{m.Side, m.Name}
		if seen[k] {
			t.Errorf("%s is listed twice", m.Name)
		}
		seen[k] = true
		if m.Untimed && m.Side != HostSide {
			t.Errorf("%s: only host methods have a timeout", m.Name)
		}
		if (m.Queued || m.AfterQueue || m.Internal) && m.Side != PeerSide {
			t.Errorf("%s: only peer methods are queued", m.Name)
		}
		if m.Queued && !m.Notification || m.AfterQueue && m.Notification {
			t.Errorf("%s: Queued is for notifications, AfterQueue for requests", m.Name)
		}
		if m.Sync && (m.Side != PeerSide || m.Notification || m.AfterQueue) {
			t.Errorf("%s: Sync is for peer requests, which wait for nothing", m.Name)
		}
	}
}
