package lspbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"go.lsp.dev/jsonrpc2"

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
	Capabilities          clientCapabilities `json:"capabilities"`
	InitializationOptions *InitOptions       `json:"initializationOptions"`
}

type clientCapabilities struct {
	Window *struct {
		WorkDoneProgress bool            `json:"workDoneProgress"`
		ShowMessage      json.RawMessage `json:"showMessage"`
	} `json:"window"`
	Experimental *struct {
		Pi *struct {
			UI bool `json:"ui"`
		} `json:"pi"`
	} `json:"experimental"`
}

// clientCaps is what the bridge uses of the client's capabilities.
type clientCaps struct {
	// messageRequest: window/showMessageRequest is answered (LSP clients
	// declare window.showMessage; pi-aware ones experimental.pi.ui).
	messageRequest bool
	// piUI: pi/ui/input, pi/ui/editor and pi/ui/set* are understood.
	piUI bool
	// progress: window/workDoneProgress/create and $/progress.
	progress bool
}

func (c clientCapabilities) caps() clientCaps {
	var out clientCaps
	if c.Experimental != nil && c.Experimental.Pi != nil {
		out.piUI = c.Experimental.Pi.UI
	}
	if c.Window != nil {
		out.progress = c.Window.WorkDoneProgress
		sm := c.Window.ShowMessage
		out.messageRequest = len(sm) > 0 && string(sm) != "null" && string(sm) != "false"
	}
	out.messageRequest = out.messageRequest || out.piUI
	return out
}

type initializeResult struct {
	Capabilities struct {
		Experimental struct {
			Pi piCapabilities `json:"pi"`
		} `json:"experimental"`
	} `json:"capabilities"`
	ServerInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
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
		b.attach(rt)
	}

	b.mu.Lock()
	b.caps = p.Capabilities.caps()
	b.fullUpdates = opts.FullUpdates
	b.initialized = true
	b.mu.Unlock()

	var res initializeResult
	res.Capabilities.Experimental.Pi = piCapabilities{ProtocolVersion: ProtocolVersion, Commands: Methods(), Events: Events()}
	res.ServerInfo.Name = "gopi"
	res.ServerInfo.Version = b.opts.Version
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
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
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
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("%q is not a file:// URI", uri)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("%q names a remote host", uri)
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
