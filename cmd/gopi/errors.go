package main

import (
	"errors"
	"fmt"
)

var (
	// errNoPrompt: print mode was given nothing to send.
	errNoPrompt = errors.New("no prompt given: pass a message, @file, or pipe text on stdin (gopi --help)")
	// errNoReply: print mode's run ended without an assistant message.
	errNoReply = errors.New("the model gave no reply")
	// errModel: print mode's reply failed; the error carries the model's
	// error message.
	errModel = errors.New("model error")
	// errSessionExists: --fork with a --session-id another session has;
	// the error names the id and that session's file.
	errSessionExists = errors.New("already exists")
	// errAgentDirNotDir: the agent directory is a file.
	errAgentDirNotDir = errors.New("not a directory")
	// errNoSessionMatch: --session or --fork named no session; the error
	// names the argument.
	errNoSessionMatch = errors.New("no session found matching")
	// errNotGopiSession: an ACP session/fork of a runtime that is not a
	// gopi host (a programming error).
	errNotGopiSession = errors.New("the session to fork is not a gopi session")
	// errListingOnly answers an extension's request while gopi only lists
	// extensions.
	errListingOnly = errors.New("gopi extensions list only loads extensions")
	// errClientGone and errExtensionExit say why RPC mode stops.
	errClientGone    = errors.New("the client closed its output; stopping")
	errExtensionExit = errors.New("an extension asked gopi to exit")
)

// elsewhereError refuses --session for a session of another directory:
// pi would ask whether to fork it here, and nobody can be asked.
type elsewhereError struct {
	session, cwd string
}

func (e *elsewhereError) Error() string {
	return fmt.Sprintf("session %s belongs to %s, not to this directory; to continue it here, fork it: --fork %s", e.session, e.cwd, e.session)
}
