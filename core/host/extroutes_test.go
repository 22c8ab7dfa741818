package host

import (
	"testing"

	"github.com/gopi-dev/gopi/core/ext"
)

// Every method the extension host calls in gopi has a route (NewRoutes
// checks that each is of its kind); ready and toolUpdate are the
// NodeHost's own.
func TestEveryPeerMethodIsRouted(t *testing.T) {
	own := map[ext.Method]bool{ext.PeerReady: true, ext.PeerToolUpdate: true}
	for _, m := range ext.Methods {
		if m.Side != ext.PeerSide || own[m.Name] {
			continue
		}
		if _, ok := extRoutes[m.Name]; !ok {
			t.Errorf("%s has no route in extRoutes", m.Name)
		}
	}
	if len(extRoutes)+len(own) != countPeer() {
		t.Errorf("extRoutes has %d routes, the protocol %d peer methods", len(extRoutes), countPeer()-len(own))
	}
}

func countPeer() int {
	n := 0
	for _, m := range ext.Methods {
		if m.Side == ext.PeerSide {
			n++
		}
	}
	return n
}
