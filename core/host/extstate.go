package host

// This file holds the state extensions mirror: what host.mjs keeps a copy
// of, sent before each call when it changed.

import (
	"context"
	"sync"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// extState is the host state extensions read synchronously (host.mjs keeps
// a copy); the manager sends what changed before each call.
type extState struct {
	mu sync.Mutex // guards the fields below
	// dialogs are the extension dialogs open now, by the host's id, so
	// an extension that gives up (its AbortSignal) can close one.
	dialogs map[string]context.CancelFunc
	// turnIndex counts the turns of the run under way (turn_end's
	// turnIndex), from 0 at agent_start.
	turnIndex int
	// usage is the context usage last sent to extensions, for usageKey.
	usage    *api.ContextUsage
	usageKey usageKey
	usageSet bool
}

// usageKey is what the context usage extensions see depends on: the
// session and its leaf, the transcript's length and the model.
type usageKey struct {
	store *session.Store
	leaf  string
	n     int
	model *llm.Model
}
