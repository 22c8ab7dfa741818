package ext

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// Snapshot is the host state extensions read synchronously (ctx.model,
// isIdle, getAllTools, ...): the Node host keeps a copy, which the
// [Manager] brings up to date before each call with the fields that
// changed since the last one it sent, compared field by field. Each field
// is one key of [HostState]'s params; go generate writes the keys into
// nodehost/methods.gen.mjs (stateFields), which nodehost/state.mjs
// applies, so the two sides cannot disagree on a name.
type Snapshot struct {
	Cwd             string             `json:"cwd"`
	Model           *llm.Model         `json:"model"`
	ThinkingLevel   llm.ThinkingLevel  `json:"thinkingLevel"`
	Idle            bool               `json:"idle"`
	PendingMessages bool               `json:"pendingMessages"`
	ActiveTools     []string           `json:"activeTools"`
	AllTools        []ToolInfo         `json:"allTools"`
	Commands        []api.SlashCommand `json:"commands"`
	SessionName     string             `json:"sessionName"`
	SessionFile     string             `json:"sessionFile"`
	SessionDir      string             `json:"sessionDir"`
	SessionID       string             `json:"sessionId"`
	SystemPrompt    string             `json:"systemPrompt"`
	ContextUsage    *api.ContextUsage  `json:"contextUsage"`
	// SystemPromptOptions are the inputs gopi's own prompt was built
	// from, for ctx.getSystemPromptOptions(); nil leaves the copy as it
	// is.
	SystemPromptOptions json.RawMessage `json:"systemPromptOptions,omitempty"`
}

// Rare is the part of the state that seldom changes (the model catalog,
// the settings): sent to a host once, and again only after it restarts or
// [State.RareRev] changes.
type Rare struct {
	Models   []llm.Model     `json:"models"`
	Settings json.RawMessage `json:"settings,omitempty"`
}

// ToolInfo is one tool as pi.getAllTools() reports it.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Exposure is how the model reaches it: direct, deferred,
	// model-only, ... (pi's names).
	Exposure string `json:"exposure"`
	// Namespace groups an MCP server's tools (pi's {name, aliases,
	// description, instructions}); nil for other tools.
	Namespace any `json:"namespace,omitempty"`
	// SourceInfo says where the tool comes from: an api.SourceInfo for
	// gopi's own tools, the extension's own JSON for an extension's.
	SourceInfo any `json:"sourceInfo"`
	// Annotations are an MCP tool's hints (readOnlyHint, ...).
	Annotations any `json:"annotations,omitempty"`
}

// State is what a call sends extensions first: the snapshot, the rare
// part, and the session whose entries the Node host mirrors.
type State struct {
	Snapshot Snapshot
	// Rare is asked for only when it has to be sent (see [Rare]).
	Rare    func() Rare
	RareRev uint64
	// Store is the current session; its entries are mirrored.
	Store *session.Store
}

// The state keys that are not fields of [Snapshot] or [Rare]: the
// session's header, its leaf and its entries ({reset, add}), and whether
// the project is trusted (sent once, in [InitialState]).
const (
	stateHeader         = "header"
	stateLeafID         = "leafId"
	stateEntries        = "entries"
	stateProjectTrusted = "projectTrusted"
)

// StateFields are the keys of [HostState]'s params, in order: every field
// of [Snapshot], then of [Rare], then the session's and the initial
// state's. nodehost/methods.gen.mjs holds the same list.
func StateFields() []string {
	return slices.Concat(snapshotFields, jsonNames(reflect.TypeFor[Rare]()),
		[]string{stateHeader, stateLeafID, stateEntries, stateProjectTrusted})
}

// snapshotFields are Snapshot's fields with their keys, worked out once.
var snapshotFields = jsonNames(reflect.TypeFor[Snapshot]())

// jsonNames are the JSON keys of struct type t's fields, in order.
func jsonNames(t reflect.Type) []string {
	names := make([]string, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names[i] = name
	}
	return names
}

// changed adds to out each field of now that differs from was (every
// field when was is nil). A nil SystemPromptOptions is never sent: the
// copy keeps what it had.
func (now *Snapshot) changed(was *Snapshot, out map[string]any) {
	nv := reflect.ValueOf(now).Elem()
	var wv reflect.Value
	if was != nil {
		wv = reflect.ValueOf(was).Elem()
	}
	for i, name := range snapshotFields {
		f := nv.Field(i)
		if name == "systemPromptOptions" && f.Len() == 0 {
			continue
		}
		if was != nil && reflect.DeepEqual(f.Interface(), wv.Field(i).Interface()) {
			continue
		}
		out[name] = f.Interface()
	}
}
