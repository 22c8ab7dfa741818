package ext

// This file owns keeping each extension's copy of gopi's state current:
// before a call, what changed since the last one (the snapshot's fields,
// the rare part, the session's new entries and leaf) goes out as one
// state update.

import (
	"encoding/json"

	"github.com/gopi-dev/gopi/core/session"
)

// sync brings one extension's copy of the state up to date.
func (m *Manager) sync(mem *member, st *State) {
	if st == nil {
		return
	}
	mem.syncMu.Lock()
	defer mem.syncMu.Unlock()
	gen := -1
	if g, ok := mem.ext.(interface{ Generation() int }); ok {
		gen = g.Generation()
	}
	out := map[string]any{}
	if gen != mem.gen {
		mem.gen, mem.sent, mem.store = gen, nil, nil
	}
	if mem.sent == nil {
		mem.rareSent, mem.leafSent = false, ""
	}
	if !mem.rareSent || mem.rareRev != st.RareRev {
		mem.rareSent, mem.rareRev = true, st.RareRev
		if st.Rare != nil {
			rare := st.Rare()
			out["models"] = rare.Models
			if len(rare.Settings) > 0 {
				out["settings"] = rare.Settings
			}
		}
	}
	st.Snapshot.changed(mem.sent, out)
	sent := st.Snapshot
	mem.sent = &sent
	if st.Store != nil {
		var entries []session.Entry
		reset := st.Store != mem.store
		if !reset {
			var err error
			entries, err = st.Store.EntriesSince(mem.lastID)
			if err != nil {
				reset = true
			}
		}
		if reset {
			entries = st.Store.Entries()
			b, _ := json.Marshal(st.Store.Header())
			out[stateHeader] = json.RawMessage(b)
		}
		if reset || len(entries) > 0 {
			raw := make([]json.RawMessage, 0, len(entries))
			for _, e := range entries {
				if b, err := json.Marshal(e); err == nil {
					raw = append(raw, b)
				}
			}
			out[stateEntries] = map[string]any{"reset": reset, "add": raw}
			if len(entries) > 0 {
				mem.lastID = entries[len(entries)-1].Base().ID
			} else {
				mem.lastID = ""
			}
			mem.store = st.Store
		}
		leaf := st.Store.Leaf()
		if reset || mem.leafSent != leaf {
			mem.leafSent = leaf
			if leaf == "" {
				out[stateLeafID] = nil
			} else {
				out[stateLeafID] = leaf
			}
		}
	}
	if len(out) > 0 {
		mem.ext.Notify(HostState, StateUpdate(out))
	}
}

// Sync sends the state to every running extension now.
func (m *Manager) Sync(st *State) {
	_ = m.each("", st, func(*member) (bool, error) { return false, nil })
}
