package lspbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
)

// ProtocolVersion is the version of this dialect, reported in initialize's
// result as capabilities.experimental.pi.protocolVersion. It changes when
// a method, event or mapping changes incompatibly.
const ProtocolVersion = 1

// InitOptions are initialize's initializationOptions: what gopi's flags
// would otherwise say.
type InitOptions struct {
	Provider      string `json:"provider,omitempty"`
	Model         string `json:"model,omitempty"`
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
	SessionFile   string `json:"sessionFile,omitempty"`
	Continue      bool   `json:"continue,omitempty"`
	NoSession     bool   `json:"noSession,omitempty"`
	// FullUpdates keeps message and partial in message_update events.
	FullUpdates bool `json:"fullUpdates,omitempty"`
	// CoalesceDeltasMs, when above 0, merges streamed text and thinking
	// deltas of one block for up to that many milliseconds (at most 1000)
	// into one message_update: fewer notifications for an editor to
	// parse. Only lean updates are merged.
	CoalesceDeltasMs int `json:"coalesceDeltasMs,omitempty"`
}

// needsRuntime reports whether the options change the runtime itself
// (FullUpdates only changes what the bridge sends).
func (o InitOptions) needsRuntime() bool {
	return o.Provider != "" || o.Model != "" || o.ThinkingLevel != "" || o.SessionFile != "" || o.Continue || o.NoSession
}

type initializeParams struct {
	ClientInfo *struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	} `json:"clientInfo,omitempty"`
	RootURI          *string `json:"rootUri"`
	RootPath         *string `json:"rootPath"`
	WorkspaceFolders []struct {
		URI  string `json:"uri"`
		Name string `json:"name"`
	} `json:"workspaceFolders"`
	// Capabilities are read by clientCapabilities.caps, leniently: the
	// shape of a capability never fails initialize.
	Capabilities          clientCapabilities `json:"capabilities"`
	InitializationOptions *InitOptions       `json:"initializationOptions"`
}

// clientCapabilities is the raw capabilities object of initialize.
type clientCapabilities json.RawMessage

func (c *clientCapabilities) UnmarshalJSON(b []byte) error {
	*c = append((*c)[:0], b...)
	return nil
}

// clientCaps is what the bridge uses of the client's capabilities.
type clientCaps struct {
	// dialogs are the dialog kinds (api.UISelect ... api.UIEditor) the
	// client shows; the others resolve as cancelled without a request.
	dialogs map[api.UIMethod]bool
	// piUI: the pi/ui/set* notifications are understood.
	piUI bool
	// progress: window/workDoneProgress/create and $/progress.
	progress bool
}

// canShow reports whether a dialog of kind m may be sent to the client.
func (c clientCaps) canShow(m api.UIMethod) bool { return c.dialogs[m] }

// caps decides what the client can do. experimental.pi.ui may be true
// (every dialog kind and the pi/ui/* notifications), false, or a list of
// the dialog kinds the client shows (["input","editor"]); any other shape
// is ignored, with a note for the log. Without experimental.pi.ui, a
// client that declares window.showMessage gets select and confirm as
// window/showMessageRequest.
func (c clientCapabilities) caps() (clientCaps, []string) {
	out := clientCaps{dialogs: map[api.UIMethod]bool{}}
	var notes []string
	lspDialogs := false
	var experimental json.RawMessage
	if len(c) > 0 && string(c) != "null" {
		// The window part, as go.lsp.dev/protocol reads it: gopi uses no
		// other LSP capability, and decoding only this part keeps the
		// rest of LSP's capability types out of the binary.
		var lc struct {
			Window *protocol.WindowClientCapabilities `json:"window,omitzero"`
		}
		if err := decodeLSP(c, &lc); err != nil {
			notes = append(notes, fmt.Sprintf("capabilities are not LSP ClientCapabilities (%s); window capabilities ignored", api.Clip(err.Error(), 120)))
		} else if w := lc.Window; w != nil {
			out.progress = w.WorkDoneProgress != nil && *w.WorkDoneProgress
			lspDialogs = w.ShowMessage != nil
		}
		// experimental.pi on its own, so no other capability can hide it.
		var e struct {
			Experimental json.RawMessage `json:"experimental"`
		}
		if err := json.Unmarshal(c, &e); err != nil {
			notes = append(notes, "capabilities is not an object; ignored")
		}
		experimental = e.Experimental
	}
	ui, declared, note := experimentalPiUI(experimental)
	if note != "" {
		notes = append(notes, note)
	}
	switch {
	case !declared:
		out.dialogs[api.UISelect], out.dialogs[api.UIConfirm] = lspDialogs, lspDialogs
	case ui == nil: // true
		out.piUI = true
		for _, m := range []api.UIMethod{api.UISelect, api.UIConfirm, api.UIInput, api.UIEditor} {
			out.dialogs[m] = true
		}
	default:
		out.piUI = len(ui) > 0
		for _, m := range ui {
			out.dialogs[m] = true
		}
	}
	return out, notes
}

// experimentalPiUI reads experimental.pi.ui: declared is false when it is
// absent (or the experimental object is not one); kinds is nil for true,
// empty for false, else the listed dialog kinds. note says what was
// ignored.
func experimentalPiUI(raw json.RawMessage) (kinds []api.UIMethod, declared bool, note string) {
	var exp struct {
		Pi json.RawMessage `json:"pi"`
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, ""
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		return nil, false, "capabilities.experimental is not an object; ignored"
	}
	var pi struct {
		UI json.RawMessage `json:"ui"`
	}
	if len(exp.Pi) == 0 || string(exp.Pi) == "null" {
		return nil, false, ""
	}
	if err := json.Unmarshal(exp.Pi, &pi); err != nil {
		return nil, false, "capabilities.experimental.pi is not an object; ignored"
	}
	if len(pi.UI) == 0 || string(pi.UI) == "null" {
		return nil, false, ""
	}
	var b bool
	if err := json.Unmarshal(pi.UI, &b); err == nil {
		if b {
			return nil, true, ""
		}
		return []api.UIMethod{}, true, ""
	}
	var list []json.RawMessage
	if err := json.Unmarshal(pi.UI, &list); err != nil {
		return nil, false, fmt.Sprintf("capabilities.experimental.pi.ui is neither a boolean nor a list of dialog kinds (%s); ignored", api.Clip(string(pi.UI), 80))
	}
	kinds = []api.UIMethod{}
	var unknown []string
	for _, item := range list {
		var k string
		if json.Unmarshal(item, &k) == nil && api.UIMethod(k).IsDialog() {
			kinds = append(kinds, api.UIMethod(k))
		} else {
			unknown = append(unknown, api.Clip(string(item), 40))
		}
	}
	if len(unknown) > 0 {
		note = fmt.Sprintf("capabilities.experimental.pi.ui lists kinds gopi does not know (%s); known: select, confirm, input, editor", strings.Join(unknown, ", "))
	}
	return kinds, true, note
}

// initializeResult is LSP's InitializeResult: gopi serves no language
// features, so its only server capability is experimental.pi.
func initializeResult(version string) (jsonrpc2.RawMessage, error) {
	pi, err := marshal(map[string]piCapabilities{"pi": {ProtocolVersion: ProtocolVersion, Commands: Methods(), Events: Events()}})
	if err != nil {
		return nil, err
	}
	res := initResult{ServerInfo: protocol.ServerInfo{Name: "gopi"}}
	res.Capabilities.Experimental = rawOf(pi)
	res.ServerInfo.Version.Set(version)
	return lspRaw(res)
}

// initResult is LSP's InitializeResult with only the capability
// gopi declares, experimental.pi: protocol.ServerCapabilities would link
// every LSP capability type for fields that stay empty.
type initResult struct {
	Capabilities struct {
		Experimental jsontext.Value `json:"experimental,omitzero"`
	} `json:"capabilities"`
	ServerInfo protocol.ServerInfo `json:"serverInfo"`
}

type piCapabilities struct {
	ProtocolVersion int      `json:"protocolVersion"`
	Commands        []string `json:"commands"`
	Events          []string `json:"events"`
}

// Events lists every event type pi/event carries.
func Events() []string {
	return []string{
		string(agent.EventAgentStart), string(agent.EventAgentEnd),
		string(agent.EventTurnStart), string(agent.EventTurnEnd),
		string(agent.EventMessageStart), string(agent.EventMessageUpdate), string(agent.EventMessageEnd),
		string(agent.EventToolExecutionStart), string(agent.EventToolExecutionUpdate), string(agent.EventToolExecutionEnd),
		api.EventAutoCompactionStart, api.EventAutoCompactionEnd,
		api.EventAutoRetryStart, api.EventAutoRetryEnd,
		api.EventExtensionError,
		api.EventAgentSettled, api.EventQueueUpdate, api.EventBashExecutionUpdate,
		api.EventCompactionStart, api.EventCompactionEnd,
		api.EventMCPServerState,
	}
}

// Methods lists the pi/ request methods, one per native command.
func Methods() []string {
	var out []string
	for _, c := range api.Commands() {
		out = append(out, methodPrefix+c)
	}
	return out
}

func (b *Bridge) initialize(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	if req.IsCall() {
		// Whatever the answer, no event goes before it.
		b.holdEvents(req.ID())
	}
	var p initializeParams
	if raw := req.Params(); len(raw) > 0 {
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid initialize params: %v", err)
		}
	}
	b.mu.Lock()
	switch {
	case b.initialized:
		b.mu.Unlock()
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize was already received")
	case b.seenCommand:
		b.mu.Unlock()
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize must come before any pi/ request")
	}
	b.mu.Unlock()

	var opts InitOptions
	if p.InitializationOptions != nil {
		opts = *p.InitializationOptions
	}
	cwd, err := workspaceDir(p)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid initialize params: %v", err)
	}
	if cwd != "" || opts.needsRuntime() {
		if b.opts.Reconfigure == nil {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "this server cannot change its workspace or session; start it with the flags you need")
		}
		b.detach()
		rt, err := b.opts.Reconfigure(jsonrpc2.DetachContext(ctx), cwd, opts)
		if err != nil {
			b.attach(b.runtime()) // keep serving what we had
			return nil, &jsonrpc2.Error{Code: RequestFailed, Message: err.Error(), Data: []byte(`{"command":"initialize"}`)}
		}
		// What the replaced session said while held is stale: the new one
		// tells its first subscriber where it stands.
		b.mu.Lock()
		b.held = nil
		b.mu.Unlock()
		b.attach(rt)
	}

	caps, notes := p.Capabilities.caps()
	for _, n := range notes {
		b.opts.Report(errors.New(n))
	}
	b.mu.Lock()
	b.caps = caps
	b.fullUpdates = opts.FullUpdates
	if ms := min(opts.CoalesceDeltasMs, 1000); ms > 0 && !opts.FullUpdates && b.coalesce == nil {
		b.coalesce = newCoalescer(time.Duration(ms)*time.Millisecond, b.send)
	}
	b.initialized = true
	b.mu.Unlock()

	res, err := initializeResult(b.opts.Version)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "initialize: %v", err)
	}
	return res, nil
}

// workspaceDir is the cwd the client asked for: the first workspace
// folder, else rootUri, else rootPath; "" when none was given.
func workspaceDir(p initializeParams) (string, error) {
	var dir string
	switch {
	case len(p.WorkspaceFolders) > 0:
		d, err := fileURIPath(p.WorkspaceFolders[0].URI)
		if err != nil {
			return "", fmt.Errorf("workspaceFolders[0].uri: %w", err)
		}
		dir = d
	case p.RootURI != nil && *p.RootURI != "":
		d, err := fileURIPath(*p.RootURI)
		if err != nil {
			return "", fmt.Errorf("rootUri: %w", err)
		}
		dir = d
	case p.RootPath != nil && *p.RootPath != "":
		dir = *p.RootPath
	default:
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", api.ClipPathError(err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", api.Clip(abs, api.ClipName))
	}
	if cur, err := os.Getwd(); err == nil && sameDir(cur, abs) {
		return "", nil // already there
	}
	return abs, nil
}

func sameDir(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// fileURIPath turns a file:// URI into a path.
func fileURIPath(uri string) (string, error) {
	shown := api.Clip(uri, api.ClipName)
	u, err := url.Parse(uri)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text quotes the whole URI
		}
		return "", fmt.Errorf("%q is not a URI: %w", shown, err)
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("%q is not a file:// URI", shown)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("%q names a remote host", shown)
	}
	return filepath.FromSlash(u.Path), nil
}

// doShutdown stops all work: the run, a running bash command and every
// long request. Later requests fail; exit ends the process with 0.
func (b *Bridge) doShutdown(ctx context.Context) (any, error) {
	b.mu.Lock()
	b.shutdown = true
	cancels := make([]context.CancelFunc, 0, len(b.inflight))
	for _, c := range b.inflight {
		cancels = append(cancels, c)
	}
	b.mu.Unlock()
	for _, c := range cancels {
		c()
	}
	if rt := b.runtime(); rt != nil {
		dctx := jsonrpc2.DetachContext(ctx)
		if err := rt.AbortBash(dctx); err != nil {
			b.opts.Report(err)
		}
		if err := rt.Abort(dctx); err != nil {
			b.opts.Report(err)
		}
	}
	return nil, nil
}
