package ext

import (
	"regexp"
	"strings"
	"testing"
)

// host.mjs names methods only through the generated module, every name
// it uses is one of the protocol's, and it serves every host method.
func TestHostScriptSpeaksTheProtocol(t *testing.T) {
	b, err := hostFiles.ReadFile("nodehost/host.mjs")
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	keys := map[string]map[string]bool{"served": {}, "gopi": {}}
	for _, m := range Methods {
		side := "gopi"
		if m.Side == HostSide {
			side = "served"
		}
		keys[side][jsKey(m.Name)] = true
	}
	for _, use := range regexp.MustCompile(`\b(served|gopi)\.(\w+)`).FindAllStringSubmatch(script, -1) {
		if !keys[use[1]][use[2]] {
			t.Errorf("host.mjs uses %s.%s, which protocol.go does not have", use[1], use[2])
		}
	}
	for _, m := range Methods {
		if m.Side == HostSide && !strings.Contains(script, "handlers.set(served."+jsKey(m.Name)+",") {
			t.Errorf("host.mjs does not serve %s", m.Name)
		}
	}
	sync := map[string]bool{}
	for _, m := range Methods {
		if m.Sync {
			sync[jsKey(m.Name)] = true
		}
	}
	for _, use := range regexp.MustCompile(`\b(request|requestSync|notify)\(gopi\.(\w+)`).FindAllStringSubmatch(script, -1) {
		if (use[1] == "requestSync") != sync[use[2]] {
			t.Errorf("host.mjs calls %s with %s: sync requests, and only they, go through requestSync", use[2], use[1])
		}
	}
	if lit := regexp.MustCompile(`\b(?:notify|request|requestSync|handlers\.set)\("`).FindString(script); lit != "" {
		t.Errorf("host.mjs names a method by hand (%s...); use the generated names", lit)
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
