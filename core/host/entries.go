package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/session"
)

// GetEntries returns the session's entries in append order (all of them,
// abandoned branches and compacted history included), or those after the
// entry id p.Since: ids are a cursor a client can keep across restarts.
func (h *Host) GetEntries(_ context.Context, p api.EntriesParams) (api.EntriesResult, error) {
	store := h.Store()
	var entries []session.Entry
	if p.Since != nil {
		var err error
		if entries, err = store.EntriesSince(*p.Since); err != nil {
			if errors.Is(err, session.ErrEntryNotFound) {
				return api.EntriesResult{}, fmt.Errorf("%w: %s", errEntryNotFound, api.Clip(*p.Since, api.ClipName))
			}
			return api.EntriesResult{}, err
		}
	} else {
		entries = store.Entries()
	}
	out := make([]json.RawMessage, 0, len(entries))
	for _, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			return api.EntriesResult{}, fmt.Errorf("encoding entry %s: %w", e.Base().ID, err)
		}
		out = append(out, b)
	}
	return api.EntriesResult{Entries: out, LeafID: leafOf(store)}, nil
}

// GetTree returns the session as a forest of {entry, children, label?,
// labelTimestamp?} nodes and the current leaf.
func (h *Host) GetTree(context.Context) (api.TreeResult, error) {
	store := h.Store()
	tree := store.Tree()
	if tree == nil {
		tree = []*session.TreeNode{}
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return api.TreeResult{}, fmt.Errorf("encoding the session tree: %w", err)
	}
	return api.TreeResult{Tree: b, LeafID: leafOf(store)}, nil
}

func leafOf(store *session.Store) *string {
	if leaf := store.Leaf(); leaf != "" {
		return &leaf
	}
	return nil
}
