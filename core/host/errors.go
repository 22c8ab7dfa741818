package host

import (
	"errors"
	"fmt"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/host/run"
)

// The texts below are pi's answers, word for word: clients show them and
// some match them, so they change only when pi's do (staticcheck.conf says
// why their capitals and full stops stay).
var (
	// errStreaming answers a prompt sent during a run without a
	// streamingBehavior (the run's own refusal).
	errStreaming = run.ErrStreaming
	// errNoModel answers a prompt with no model selected.
	errNoModel = errors.New("No model selected. Use set_model or start gopi with --model.")
	// errEmptyPrompt answers a prompt with neither text nor images.
	errEmptyPrompt = errors.New("prompt needs a message")
	// errBashRunning answers a bash command sent while one runs.
	errBashRunning = errors.New("A bash command is already running; wait for it or send abort_bash.")

	// errCompactionAborted is the cause a compaction or tree summary is
	// cancelled with (abort, or the host closing).
	errCompactionAborted = run.ErrCompactionAborted
	// errCompactionRunning answers a compaction asked during another.
	errCompactionRunning = run.ErrCompactionRunning
	// errNoModelToCompact answers a compaction with no model selected.
	errNoModelToCompact = errors.New("No model selected.")
	// errAlreadyCompacted: the branch ends in a compaction already.
	errAlreadyCompacted = errors.New("Already compacted")
	// errNothingToCompact: the branch is too short to summarise anything.
	errNothingToCompact = run.ErrNothingToCompact

	// errNothingToExport answers an export before any message.
	errNothingToExport = errors.New("Nothing to export yet - start a conversation first")
	// errEntryNotFound answers get_entries with an unknown since id
	// (wrapped with the id).
	errEntryNotFound = errors.New("Entry not found")
	// errEmptySessionName answers set_session_name with a blank name.
	errEmptySessionName = errors.New("Session name cannot be empty")
	// errSessionNotFound and errNotSessionFile answer switch_session with a
	// path that is missing or a directory (wrapped with the path).
	errSessionNotFound = errors.New("Session file not found")
	errNotSessionFile  = errors.New("Not a session file")
	// errForkEntry answers a fork from an entry that is not a user
	// message of this session.
	errForkEntry = errors.New("Invalid entry ID for forking")
	// errCloneEmpty answers a clone before the first entry.
	errCloneEmpty = errors.New("Cannot clone session: no current entry selected")

	// errNavigateStreaming, errNavigateBusy and errNoSummaryModel answer a
	// tree navigation during a run, during a compaction or another
	// navigation, and one asked to summarise with no model.
	errNavigateStreaming = errors.New("Wait for the current response to finish before navigating the session tree.")
	errNavigateBusy      = errors.New("Wait for the current compaction or tree navigation to finish before navigating the session tree.")
	errNoSummaryModel    = errors.New("No model available for summarization")
)

// noAPIKeyError answers a prompt whose model's provider has no
// credentials.
type noAPIKeyError struct{ provider string }

func (e *noAPIKeyError) Error() string {
	return fmt.Sprintf("No API key found for %s. Set the provider's API key environment variable, add it to auth.json, or start gopi with --api-key.", e.provider)
}

// entryMissingError answers a tree navigation to an id the session does
// not have.
type entryMissingError struct{ id string }

func (e *entryMissingError) Error() string {
	return fmt.Sprintf("Entry %s not found", api.Clip(e.id, api.ClipName))
}

// pi's words for what extensions did, as clients and the model see them.
var (
	// errStreamingDeliverAs is pi.sendUserMessage's during a run without
	// deliverAs.
	errStreamingDeliverAs = errors.New("Agent is already processing. Specify deliverAs ('steer' or 'followUp') to queue the message.")
	// errCompactionCancelled: a session_before_compact handler cancelled.
	errCompactionCancelled = errors.New("Compaction cancelled by an extension")
)

// gopi's refusals of what extensions asked for.
var (
	errReloadRunning  = errors.New("ctx.reload(): cannot reload while the agent is running; wait for it (ctx.waitForIdle())")
	errBashOperations = errors.New("an extension supplies its own bash operations (JavaScript), which gopi cannot run; the command was not run")
	errProviderCode   = errors.New("JavaScript, and gopi talks to providers through its own SDKs only; the provider is not registered (its declarative form works: baseUrl, api, apiKey, headers, models)")
	errNoEntry        = errors.New("no entry")
)

// ErrNoSandbox: a sandbox mode other than off was asked of a host built
// without a sandbox (Options.Sandbox).
var ErrNoSandbox = errors.New("this session's tools were built without a sandbox")

// runHost is what the run (and a room's own goroutine that survived a
// panic) tells the host: the events, and the problems it survived.
type runHost struct {
	emit       func(api.Event)
	report     func(error)
	hookFailed func(event string, err error)
}

func (r runHost) Emit(ev api.Event) { r.emit(ev) }

func (r runHost) Report(err error) { r.report(err) }

func (r runHost) HookFailed(event string, err error) { r.hookFailed(event, err) }
