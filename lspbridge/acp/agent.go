package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/mcp"
	"github.com/gopi-dev/gopi/core/tools"
	"github.com/gopi-dev/gopi/rpc"
)

// Runtime is one session's runtime as the dialect drives it: the
// commands, its events, and its lifetime.
type Runtime interface {
	api.Server
	// Subscribe delivers every event to f until unsubscribe is called.
	Subscribe(f func(api.Event)) (unsubscribe func())
	// Close aborts what runs and releases the runtime.
	Close(ctx context.Context) error
	// History is the session's visible branch, root to leaf, as
	// messages: what session/load replays.
	History() []llm.Message
	// Bind makes c receive the runtime's questions (approval, extension
	// dialogs); nil detaches it.
	Bind(c api.Client)
	// ApprovalMode is which tool calls wait for permission: "off",
	// "escapes", "writes" or "all" (half of the session's mode).
	ApprovalMode() string
	// SetApprovalMode changes it for the calls from now on.
	SetApprovalMode(mode string) error
	// SandboxMode is the sandbox the model's commands run in, as chosen:
	// "off", "read-only" or "workspace-write" (the other half). A
	// project's settings may keep a stricter one in force.
	SandboxMode() string
	// SetSandboxMode changes it for the calls from now on.
	SetSandboxMode(mode string) error
	// SetAdditionalDirs makes dirs the session's further workspace roots
	// (a session/load or resume of a session already open).
	SetAdditionalDirs(dirs []string)
}

// SessionConfig is what a session's runtime is built from: its directory
// and what the client lends it.
type SessionConfig struct {
	// Cwd is the session's directory, an absolute path.
	Cwd string
	// MCPServers are the client's MCP servers for this session alone
	// (session/new, load and resume), beside pi's own mcp.json.
	MCPServers []mcp.Entry
	// AdditionalDirs are the session's further workspace roots
	// (additionalDirectories), absolute paths of existing directories.
	AdditionalDirs []string
	// FS, when set, is the file system the built-in file tools use (the
	// client's, through fs/read_text_file and fs/write_text_file).
	FS tools.FS
	// Shell, when set, runs bash's commands (in the client's terminals).
	Shell tools.Shell
	// ToolStarting is to be told the id of each tool call as its tool
	// starts running (after its permission question, if one was asked):
	// the call's in_progress update.
	ToolStarting func(toolCallID string)

	// lent is what FS and Shell serve once the session is added.
	lent *lent
}

// NewRuntime builds the runtime of a new session.
type NewRuntime func(ctx context.Context, cfg SessionConfig) (Runtime, error)

// Options configure [Serve].
type Options struct {
	// NewRuntime builds each session's runtime.
	NewRuntime NewRuntime
	// Fork makes session/fork's copies; nil leaves the method out (not
	// advertised, and refused).
	Fork Forker
	// Sessions are the stored sessions session/load, list, resume and
	// delete reach; nil when sessions are not stored (those methods are
	// then not advertised, and refused).
	Sessions Sessions
	// Auth is where models' credentials come from (auth.go); nil
	// advertises no authentication methods.
	Auth Auth
	// Version is reported as agentInfo.version.
	Version string
	// Report receives problems nobody else hears about; nil drops them.
	Report func(error)
}

// protocolVersion is the ACP version gopi speaks.
const protocolVersion = 1

// closeWait bounds how long the end of a connection waits for each
// session's runtime to close.
const closeWait = 10 * time.Second

// conn is one ACP connection.
type conn struct {
	opts Options
	w    writer
	ctx  context.Context // the connection's

	mu       sync.Mutex // guards sessions
	sessions map[string]*session
	order    []*session // in creation order, to close them in order

	work sync.WaitGroup // prompts being answered

	out outbound // gopi's requests to the client
	// caps are what the client declared in initialize: what it can lend
	// sessions (fs.go), and whether it takes elicitations.
	caps       clientCaps
	notices    bool // the client takes notice updates (initialize)
	compaction bool // the client takes compaction updates (initialize)
}

// Serve answers one ACP client on in and out until its input ends or ctx
// is cancelled. Then every run is aborted, every prompt answered
// (stopReason cancelled) and every session's runtime closed, before
// Serve returns.
func Serve(ctx context.Context, in rpc.RecordReader, out *rpc.Writer, opts Options) error {
	if opts.Report == nil {
		opts.Report = func(error) {}
	}
	a := &conn{opts: opts, w: writer{out}, ctx: ctx, sessions: map[string]*session{}}
	err := serveLoop(ctx, in, a.w, a.handle)
	// Nothing more will answer gopi's requests: those waiting fail, so
	// the runs that wait on them can end.
	a.endOutbound()
	a.shutdown()
	return err
}

// shutdown aborts every session's run, waits for the prompts to be
// answered, and closes the runtimes.
func (a *conn) shutdown() {
	a.mu.Lock()
	sessions := slices.Clone(a.order)
	a.mu.Unlock()
	for _, s := range sessions {
		s.stop(a.opts.Report)
	}
	a.work.Wait()
	for _, s := range sessions {
		s.close(a.opts.Report)
	}
}

// handle routes one message. It runs on the reading goroutine, so the
// order of messages is the order their commands are queued in.
func (a *conn) handle(m *message) {
	if m.Method == nil {
		a.answered(m)
		return
	}
	method := *m.Method
	var err error
	switch method {
	case sdk.AgentMethodInitialize:
		err = a.initialize(m)
	case sdk.AgentMethodSessionNew:
		err = a.newSession(m)
	case sdk.AgentMethodSessionPrompt:
		err = a.prompt(m)
	case sdk.AgentMethodSessionCancel:
		err = a.cancel(m)
	case sdk.AgentMethodSessionLoad:
		err = a.load(m, true)
	case sdk.AgentMethodSessionResume:
		err = a.load(m, false)
	case sdk.AgentMethodSessionList:
		err = a.list(m)
	case sdk.AgentMethodSessionClose:
		err = a.closeSession(m)
	case sdk.AgentMethodSessionDelete:
		err = a.deleteSession(m)
	case sdk.AgentMethodSessionFork:
		err = a.fork(m)
	case sdk.AgentMethodAuthenticate:
		err = a.authenticate(m)
	case sdk.AgentMethodLogout:
		err = a.logout(m)
	case sdk.AgentMethodSessionSetMode:
		err = a.setMode(m)
	case sdk.AgentMethodSessionSetConfigOption:
		err = a.setConfigOption(m)
	case methodSetModel:
		err = a.setModelOld(m)
	default:
		if !m.isCall() {
			// Unknown notifications are ignored, as JSON-RPC asks
			// ($/cancel_request among them, in this step).
			return
		}
		err = errorf(codeMethodNotFound, "method not found: %s", method)
	}
	if err != nil && m.isCall() {
		_ = a.w.fail(m.ID, asRPCError(err))
	} else if err != nil {
		a.opts.Report(fmt.Errorf("acp: %s: %w", method, err))
	}
}

// decodeParams decodes m's params into v, first checking that every
// field in required is present. Problems are -32602 naming the field.
func decodeParams(m *message, v any, required ...string) error {
	if len(m.Params) == 0 || string(m.Params) == "null" {
		return errorf(codeInvalidParams, "invalid params: %s needs params (an object)", *m.Method)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(m.Params, &probe); err != nil {
		return errorf(codeInvalidParams, "invalid params: %s's params must be an object", *m.Method)
	}
	for _, f := range required {
		if v, ok := probe[f]; !ok || string(v) == "null" {
			return errorf(codeInvalidParams, "invalid params: %s needs %q", *m.Method, f)
		}
	}
	if err := json.Unmarshal(m.Params, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return errorf(codeInvalidParams, "invalid params: %q must be %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return errorf(codeInvalidParams, "invalid params: %v", err)
	}
	return nil
}

// jsonKind names a Go kind as JSON calls it.
func jsonKind(k string) string {
	switch {
	case k == "string":
		return "a string"
	case k == "bool":
		return "a boolean"
	case k == "slice" || k == "array":
		return "an array"
	case k == "struct" || k == "map":
		return "an object"
	case strings.HasPrefix(k, "int") || strings.HasPrefix(k, "uint") || strings.HasPrefix(k, "float"):
		return "a number"
	}
	return k
}

func (a *conn) initialize(m *message) error {
	var p sdk.InitializeRequest
	if err := decodeParams(m, &p, "protocolVersion"); err != nil {
		return err
	}
	a.caps.set(p.ClientCapabilities)
	a.notices = clientNotices(m.Params)
	a.compaction = clientCompaction(m.Params)
	// gopi speaks version 1: asked for it or a later one, it answers 1,
	// and a client that cannot speak 1 disconnects, as the spec says.
	res := sdk.InitializeResponse{
		ProtocolVersion: protocolVersion,
		AgentCapabilities: sdk.AgentCapabilities{
			// The client's MCP servers over stdio and http
			// (mcpservers.go); images and embedded context in prompts.
			LoadSession:         a.opts.Sessions != nil,
			SessionCapabilities: a.sessionCapabilities(),
			McpCapabilities:     sdk.McpCapabilities{Http: true},
			PromptCapabilities:  promptCapabilities,
			Auth:                a.authCapabilities(),
		},
		AgentInfo:   &sdk.Implementation{Name: "gopi", Title: sdk.Ptr("gopi"), Version: a.opts.Version},
		AuthMethods: a.authMethods(),
	}
	return a.w.result(m.ID, res)
}

func (a *conn) newSession(m *message) error {
	var p sdk.NewSessionRequest
	servers, err := clientServers(m.Params)
	if err != nil {
		return err
	}
	if err := decodeParams(m, &p, "cwd", "mcpServers"); err != nil {
		return err
	}
	if !filepath.IsAbs(p.Cwd) {
		return errorf(codeInvalidParams, "invalid params: \"cwd\" must be an absolute path, not %q", p.Cwd)
	}
	dirs, err := additionalDirs(p.AdditionalDirectories, filepath.Clean(p.Cwd))
	if err != nil {
		return err
	}
	cfg := a.lend(SessionConfig{Cwd: filepath.Clean(p.Cwd), MCPServers: servers, AdditionalDirs: dirs})
	rt, err := a.opts.NewRuntime(a.ctx, cfg)
	if err != nil {
		return errorf(codeInternalError, "starting a session in %s: %v", p.Cwd, err)
	}
	return a.open(m.ID, cfg, rt)
}

// open makes rt, built from cfg, a session of the connection and answers
// the request id that asked for it as session/new is answered (its
// modes and config options), then announces its commands. A runtime
// whose model has no key is closed and the request answered that
// authentication is required.
func (a *conn) open(id json.RawMessage, cfg SessionConfig, rt Runtime) error {
	if err := a.needsAuth(a.ctx, rt); err != nil {
		a.discard(rt)
		return err
	}
	s := a.add(a.sessionID(rt), cfg, rt)
	modes, opts, err := s.setup(a.ctx)
	if err != nil {
		return err
	}
	err = a.w.result(id, sdk.NewSessionResponse{SessionId: sdk.SessionId(s.id), Modes: modes, ConfigOptions: opts})
	a.announceCommands(s)
	return err
}

// add makes rt, built from cfg, the session id of this connection.
func (a *conn) add(id string, cfg SessionConfig, rt Runtime) *session {
	s := &session{id: id, rt: rt, w: a.w, report: a.opts.Report, sched: api.NewScheduler(a.ctx, 0), cwd: cfg.Cwd, modes: modesOf(rt)}
	s.extras.fs = cfg.FS
	s.mcp.enabled = a.notices
	s.compactions.enabled = a.compaction
	cfg.lent.bind(s)
	s.unsubscribe = rt.Subscribe(s.event)
	rt.Bind(asker{a, s})
	a.mu.Lock()
	a.sessions[s.id] = s
	a.order = append(a.order, s)
	a.mu.Unlock()
	return s
}

// sessionID is the id of the runtime's pi session, so one id names the
// session on the wire and in its file; a fresh one if that is taken.
func (a *conn) sessionID(rt Runtime) string {
	st, err := rt.GetState(a.ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err == nil && st.SessionID != "" && a.sessions[st.SessionID] == nil {
		return st.SessionID
	}
	return uuid.NewString()
}

// session finds the session a request names.
func (a *conn) session(id sdk.SessionId) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[string(id)]; s != nil {
		return s, nil
	}
	return nil, notFound(string(id), "resource not found: no session %q on this connection", id)
}

func (a *conn) prompt(m *message) error {
	var p promptRequest
	if err := decodeParams(m, &p, "sessionId", "prompt"); err != nil {
		return err
	}
	s, err := a.session(p.SessionID)
	if err != nil {
		return err
	}
	in, err := promptContent(p.Prompt)
	if err != nil {
		return err
	}
	if err := a.needsAuth(a.ctx, s.rt); err != nil {
		return err
	}
	// The place in the session's order is taken here, on the reading
	// goroutine, so a session/cancel read after it comes after it.
	id := m.ID
	if rw, ok, err := parseRewind(in.text); ok {
		if err != nil {
			return errorf(codeInvalidParams, "invalid params: %v", err)
		}
		if !s.beginRewind() {
			return errorf(codeInvalidRequest, "session %s is answering a prompt: send /rewind once it is answered, or session/cancel", s.id)
		}
		s.work.Add(1)
		a.work.Go(func() {
			defer s.work.Done()
			s.rewind(a.ctx, a, id, rw)
		})
		return nil
	}
	if s.isRewinding() {
		return errorf(codeInvalidRequest, "session %s is answering /rewind: wait for its answer or send session/cancel", s.id)
	}
	// A prompt sent while another is answered waits behind it (turns.go).
	t := s.accept(id)
	call := s.sched.Queue()
	s.work.Add(1)
	a.work.Go(func() {
		defer s.work.Done()
		s.answer(a.ctx, call, t, in)
	})
	return nil
}

func (a *conn) cancel(m *message) error {
	var p sdk.CancelNotification
	if err := decodeParams(m, &p, "sessionId"); err != nil {
		return err
	}
	s, err := a.session(p.SessionId)
	if err != nil {
		return err
	}
	s.cancel()
	if m.isCall() {
		return errorf(codeInvalidRequest, "invalid request: session/cancel is a notification, send it without an id (the run was cancelled all the same)")
	}
	return nil
}
