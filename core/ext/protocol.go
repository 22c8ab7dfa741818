package ext

// The protocol between gopi and an extension host, in one place: the name
// of every method on the pipe, which side serves it, and how it is
// scheduled. Each method's params and result are the types in params.go;
// the hook events [HostEmit] and its kin carry are in events.go.
//
// The Node host's modules take the names from nodehost/methods.gen.mjs,
// which `go generate` writes from [Methods] (internal/gen); a test fails
// when it is not current. To add a method: a constant below, its line in
// Methods, its types in params.go, then its handler on the side that
// serves it (the host module that owns what it touches, or a route in
// core/host's extension routes), and go generate.

//go:generate go run ./internal/gen

// Method names a method on the extension host's pipe, as the wire has it.
type Method string

// Methods the extension host serves: gopi calls them.
const (
	HostProjectTrust          Method = "projectTrust"
	HostInitialize            Method = "initialize"
	HostState                 Method = "state"
	HostEmit                  Method = "emit"
	HostBoundary              Method = "boundary"
	HostUserBash              Method = "userBash"
	HostDrain                 Method = "drain"
	HostToolCall              Method = "toolCall"
	HostToolResult            Method = "toolResult"
	HostInput                 Method = "input"
	HostContext               Method = "context"
	HostBeforeProviderRequest Method = "beforeProviderRequest"
	HostBeforeProviderHeaders Method = "beforeProviderHeaders"
	HostMessageEnd            Method = "messageEnd"
	HostResourcesDiscover     Method = "resourcesDiscover"
	HostBeforeAgentStart      Method = "beforeAgentStart"
	HostExecuteTool           Method = "executeTool"
	HostCommand               Method = "command"
	HostRegistrations         Method = "registrations"
	HostCancel                Method = "cancel"
	HostRunStart              Method = "runStart"
	HostRunAbort              Method = "runAbort"
	// HostCallToolUpdate is a partial result of a tool an extension's
	// tool called ([PeerCallTool]), for its onUpdate.
	HostCallToolUpdate Method = "callToolUpdate"
)

// Methods gopi serves (the [Peer]): the extension host calls them.
const (
	PeerReady              Method = "ready"
	PeerError              Method = "error"
	PeerUIAsk              Method = "ui/ask"
	PeerUI                 Method = "ui"
	PeerUICancel           Method = "ui/cancel"
	PeerBoundaryPreview    Method = "boundaryPreview"
	PeerSetModel           Method = "setModel"
	PeerGetAPIKey          Method = "getApiKey"
	PeerCompact            Method = "compact"
	PeerWaitForIdle        Method = "waitForIdle"
	PeerNewSession         Method = "newSession"
	PeerFork               Method = "fork"
	PeerSwitchSession      Method = "switchSession"
	PeerNavigateTree       Method = "navigateTree"
	PeerReload             Method = "reload"
	PeerSendMessage        Method = "sendMessage"
	PeerSendUserMessage    Method = "sendUserMessage"
	PeerAppendEntry        Method = "appendEntry"
	PeerSetSessionName     Method = "setSessionName"
	PeerSetLabel           Method = "setLabel"
	PeerSetActiveTools     Method = "setActiveTools"
	PeerSetThinkingLevel   Method = "setThinkingLevel"
	PeerRegistrations      Method = "registrations"
	PeerToolUpdate         Method = "toolUpdate"
	PeerAbort              Method = "abort"
	PeerShutdown           Method = "shutdown"
	PeerRegisterProvider   Method = "registerProvider"
	PeerUnregisterProvider Method = "unregisterProvider"
	// PeerValidateMCPServer checks a server pi.registerMcpServer is given.
	PeerValidateMCPServer Method = "validateMcpServer"
	// PeerCallTool is ctx.executeTool(): an extension's tool runs another
	// tool, through gopi's tool pipeline; PeerCallToolCancel withdraws it.
	PeerCallTool       Method = "callTool"
	PeerCallToolCancel Method = "callTool/cancel"
	// PeerRestarted is NodeHost's own, never the host's: the host crashed
	// and a new one runs.
	PeerRestarted Method = "restarted"
	// PeerStopped is NodeHost's own too: the host crashed too often and
	// stays down.
	PeerStopped Method = "stopped"
)

// Side is the end of the pipe that serves a method.
type Side int

const (
	// HostSide methods are served by the extension host.
	HostSide Side = iota
	// PeerSide methods are served by gopi (the [Peer]).
	PeerSide
)

// MethodSpec is one method of the protocol.
type MethodSpec struct {
	Name Method
	// Side serves it.
	Side Side
	// Notification: it is never answered.
	Notification bool
	// Untimed (a host method): a call may take as long as it needs (tools,
	// commands, loading); other hook calls have the hook timeout.
	Untimed bool
	// Queued (a peer notification): delivered in order by one goroutine,
	// since it may start a run whose hooks call the host again. Other
	// notifications are delivered on the read loop, before the answer to
	// the call that caused them.
	Queued bool
	// AfterQueue (a peer request): first waits for the queued
	// notifications sent before it (a command's sendMessage, then its
	// waitForIdle).
	AfterQueue bool
	// Internal: sent by gopi's side of the pipe to itself; the Node host never
	// sends or serves it.
	Internal bool
	// Sync (a peer request): the host makes it synchronously, on a pipe of
	// its own (fds 5 and 6), its thread blocked until the answer, for a
	// call of pi's API that must answer (or throw) before it returns. Its
	// route answers at once, without calling the host; before Start there
	// is no one to answer it, and the host must do without.
	Sync bool
}

// Methods is every method of the protocol, the generated module's source.
var Methods = []MethodSpec{
	{Name: HostProjectTrust, Side: HostSide, Untimed: true},
	{Name: HostInitialize, Side: HostSide, Untimed: true},
	{Name: HostState, Side: HostSide, Notification: true},
	{Name: HostEmit, Side: HostSide},
	{Name: HostBoundary, Side: HostSide},
	{Name: HostUserBash, Side: HostSide},
	{Name: HostDrain, Side: HostSide},
	{Name: HostToolCall, Side: HostSide},
	{Name: HostToolResult, Side: HostSide},
	{Name: HostInput, Side: HostSide},
	{Name: HostContext, Side: HostSide},
	{Name: HostBeforeProviderRequest, Side: HostSide},
	{Name: HostBeforeProviderHeaders, Side: HostSide},
	{Name: HostMessageEnd, Side: HostSide},
	{Name: HostResourcesDiscover, Side: HostSide},
	{Name: HostBeforeAgentStart, Side: HostSide},
	{Name: HostExecuteTool, Side: HostSide, Untimed: true},
	{Name: HostCommand, Side: HostSide, Untimed: true},
	{Name: HostRegistrations, Side: HostSide},
	{Name: HostCancel, Side: HostSide, Notification: true},
	{Name: HostRunStart, Side: HostSide, Notification: true},
	{Name: HostRunAbort, Side: HostSide, Notification: true},
	{Name: HostCallToolUpdate, Side: HostSide, Notification: true},

	{Name: PeerReady, Side: PeerSide, Notification: true},
	{Name: PeerError, Side: PeerSide, Notification: true},
	{Name: PeerUIAsk, Side: PeerSide},
	{Name: PeerUI, Side: PeerSide, Notification: true},
	{Name: PeerUICancel, Side: PeerSide, Notification: true},
	{Name: PeerBoundaryPreview, Side: PeerSide},
	{Name: PeerSetModel, Side: PeerSide},
	{Name: PeerGetAPIKey, Side: PeerSide},
	{Name: PeerCompact, Side: PeerSide, AfterQueue: true},
	{Name: PeerWaitForIdle, Side: PeerSide, AfterQueue: true},
	{Name: PeerNewSession, Side: PeerSide, AfterQueue: true},
	{Name: PeerFork, Side: PeerSide, AfterQueue: true},
	{Name: PeerSwitchSession, Side: PeerSide, AfterQueue: true},
	{Name: PeerNavigateTree, Side: PeerSide, AfterQueue: true},
	{Name: PeerReload, Side: PeerSide, AfterQueue: true},
	{Name: PeerSendMessage, Side: PeerSide, Notification: true, Queued: true},
	{Name: PeerSendUserMessage, Side: PeerSide, Notification: true, Queued: true},
	{Name: PeerAppendEntry, Side: PeerSide, Notification: true},
	{Name: PeerSetSessionName, Side: PeerSide, Notification: true},
	{Name: PeerSetLabel, Side: PeerSide, Notification: true},
	{Name: PeerSetActiveTools, Side: PeerSide, Notification: true},
	{Name: PeerSetThinkingLevel, Side: PeerSide, Notification: true},
	{Name: PeerRegistrations, Side: PeerSide, Notification: true},
	{Name: PeerToolUpdate, Side: PeerSide, Notification: true, Queued: true},
	{Name: PeerAbort, Side: PeerSide, Notification: true},
	{Name: PeerShutdown, Side: PeerSide, Notification: true},
	{Name: PeerRegisterProvider, Side: PeerSide, Notification: true},
	{Name: PeerUnregisterProvider, Side: PeerSide, Notification: true},
	{Name: PeerValidateMCPServer, Side: PeerSide, Sync: true},
	{Name: PeerCallTool, Side: PeerSide},
	{Name: PeerCallToolCancel, Side: PeerSide, Notification: true},
	{Name: PeerRestarted, Side: PeerSide, Notification: true, Internal: true},
	{Name: PeerStopped, Side: PeerSide, Notification: true, Internal: true},
}

// specKey names a method of one side.
type specKey struct {
	side Side
	name Method
}

// specs indexes Methods.
var specs = func() map[specKey]MethodSpec {
	out := make(map[specKey]MethodSpec, len(Methods))
	for _, s := range Methods {
		out[specKey{s.Side, s.Name}] = s
	}
	return out
}()

// spec looks a method up by its side and name.
func spec(side Side, name Method) (MethodSpec, bool) {
	s, ok := specs[specKey{side, name}]
	return s, ok
}
