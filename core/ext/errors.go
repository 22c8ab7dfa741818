package ext

import "errors"

// The errors of package ext, in one place. [NodeHost]'s handler maps
// them to JSON-RPC codes at the pipe's edge: ErrInvalidParams to
// InvalidParams, ErrNoMethod to MethodNotFound, the rest to InternalError.
var (
	// ErrNoMethod is returned for a method an extension, or gopi, does not
	// have.
	ErrNoMethod = errors.New("extension has no such method")
	// ErrInvalidParams is wrapped by a [*ParamError].
	ErrInvalidParams = errors.New("invalid params")
	// ErrHookTimeout is the cause of a hook call that took too long.
	ErrHookTimeout = errors.New("the extension hook did not answer in time")
	// ErrStopped: the host was closed, and stays down.
	ErrStopped = errors.New("the extension host has been stopped")
	// errNotRunning: the host crashed too often, or has not started.
	errNotRunning = errors.New("the extension host is not running")
	// errStopping answers the host's calls that wait for its queued
	// notifications when it goes away meanwhile.
	errStopping = errors.New("the extension host is stopping")
	// errTrustPending answers the host's calls before gopi has decided
	// whether the project is trusted (see [NodeHost.ProjectTrust]).
	errTrustPending = errors.New("gopi is still deciding whether the project is trusted")
	// errNoTool and errNoCommand: no extension registered the tool or
	// command called.
	errNoTool    = errors.New("no extension provides the tool")
	errNoCommand = errors.New("no extension provides the command")
	// ErrMessageEndRole: a message_end handler replaced a message with
	// one of another role, which gopi does not take.
	ErrMessageEndRole = errors.New("message_end handlers must return a message with the same role")
)
