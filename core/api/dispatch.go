package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gopi-dev/gopi/core/llm"
)

// kind says how the [Scheduler] runs a command.
type kind int

const (
	// kindState commands run one at a time in arrival order: they are
	// quick, and later commands may depend on them.
	kindState kind = iota
	// kindLong commands take their first step in arrival order and finish
	// alongside later commands; their response is written when they do.
	kindLong
)

// NoData is the data the [Scheduler] replies with for commands whose
// success response carries no "data" field (as opposed to "data": null).
var NoData = noData{}

type noData struct{}

type command struct {
	kind kind
	call func(ctx context.Context, s Server, params json.RawMessage) (any, error)
	// start, when set, replaces call: it begins the command in arrival
	// order and returns the rest of its work ([start]).
	start func(ctx context.Context, s Server, params json.RawMessage) (func() (any, error), error)
}

// decode reads params into P, naming the offending field on a type error.
func decode[P any](name string, params json.RawMessage) (P, error) {
	p, fe := DecodeObject[P](params)
	if fe != nil {
		return p, &ParamError{Command: name, Field: fe.Field, Reason: fe.Reason}
	}
	if v, ok := any(&p).(interface{ validate(cmd string) error }); ok {
		if err := v.validate(name); err != nil {
			return p, err
		}
	}
	return p, nil
}

// with wraps a method taking params and returning data.
func with[P, R any](name string, kind kind, f func(Server, context.Context, P) (R, error)) command {
	return command{kind: kind, call: func(ctx context.Context, s Server, raw json.RawMessage) (any, error) {
		p, err := decode[P](name, raw)
		if err != nil {
			return nil, err
		}
		return f(s, ctx, p)
	}}
}

// withP wraps a method taking params and returning no data.
func withP[P any](name string, kind kind, f func(Server, context.Context, P) error) command {
	return command{kind: kind, call: func(ctx context.Context, s Server, raw json.RawMessage) (any, error) {
		p, err := decode[P](name, raw)
		if err != nil {
			return nil, err
		}
		return NoData, f(s, ctx, p)
	}}
}

// get wraps a method taking nothing and returning data.
func get[R any](kind kind, f func(Server, context.Context) (R, error)) command {
	return command{kind: kind, call: func(ctx context.Context, s Server, _ json.RawMessage) (any, error) {
		return f(s, ctx)
	}}
}

// do wraps a method taking and returning nothing.
func do(kind kind, f func(Server, context.Context) error) command {
	return command{kind: kind, call: func(ctx context.Context, s Server, _ json.RawMessage) (any, error) {
		return NoData, f(s, ctx)
	}}
}

var commands = map[string]command{
	CmdPrompt:     with(CmdPrompt, kindState, Server.Prompt),
	CmdSteer:      with(CmdSteer, kindState, Server.Steer),
	CmdFollowUp:   with(CmdFollowUp, kindState, Server.FollowUp),
	CmdClearQueue: get(kindState, Server.ClearQueue),

	CmdGetAvailableThinkingLevels: get(kindState, Server.GetAvailableThinkingLevels),
	CmdGetEntries:                 with(CmdGetEntries, kindState, Server.GetEntries),
	CmdGetTree:                    get(kindState, Server.GetTree),
	CmdAbort:                      do(kindState, Server.Abort),
	CmdNewSession:                 with(CmdNewSession, kindState, Server.NewSession),
	CmdGetState:                   get(kindState, Server.GetState),
	CmdGetMessages:                get(kindState, Server.GetMessages),
	CmdSetModel:                   with(CmdSetModel, kindState, Server.SetModel),
	CmdCycleModel:                 get(kindState, Server.CycleModel),
	CmdGetAvailableModels:         get(kindState, Server.GetAvailableModels),
	CmdSetThinkingLevel:           withP(CmdSetThinkingLevel, kindState, Server.SetThinkingLevel),
	CmdCycleThinkingLevel:         get(kindState, Server.CycleThinkingLevel),
	CmdSetSteeringMode:            withP(CmdSetSteeringMode, kindState, Server.SetSteeringMode),
	CmdSetFollowUpMode:            withP(CmdSetFollowUpMode, kindState, Server.SetFollowUpMode),
	CmdCompact:                    compactCommand(),
	CmdSetAutoCompaction:          withP(CmdSetAutoCompaction, kindState, Server.SetAutoCompaction),
	CmdSetAutoRetry:               withP(CmdSetAutoRetry, kindState, Server.SetAutoRetry),
	CmdAbortRetry:                 do(kindState, Server.AbortRetry),
	CmdBash:                       bashCommand(),
	CmdAbortBash:                  do(kindState, Server.AbortBash),
	CmdGetSessionStats:            get(kindState, Server.GetSessionStats),
	CmdExportHTML:                 with(CmdExportHTML, kindLong, Server.ExportHTML),
	CmdSwitchSession:              with(CmdSwitchSession, kindState, Server.SwitchSession),
	CmdFork:                       with(CmdFork, kindState, Server.Fork),
	CmdClone:                      get(kindState, Server.Clone),
	CmdGetForkMessages:            get(kindState, Server.GetForkMessages),
	CmdGetLastAssistantTxt:        get(kindState, Server.GetLastAssistantText),
	CmdSetSessionName:             withP(CmdSetSessionName, kindState, Server.SetSessionName),
	CmdGetCommands:                get(kindState, Server.GetCommands),
	CmdListSessions:               with(CmdListSessions, kindLong, Server.ListSessions),
	CmdGetMCPServers:              get(kindState, Server.GetMCPServers),
	CmdCreateCheckpoint:           with(CmdCreateCheckpoint, kindState, Server.CreateCheckpoint),
	CmdListCheckpoints:            get(kindState, Server.ListCheckpoints),
	CmdDiffCheckpoint:             with(CmdDiffCheckpoint, kindLong, Server.DiffCheckpoint),
	CmdRestoreCheckpoint:          with(CmdRestoreCheckpoint, kindState, Server.RestoreCheckpoint),
}

// Commands lists every command name the Scheduler serves, sorted.
func Commands() []string {
	out := make([]string, 0, len(commands))
	for k := range commands {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// kindOf tells how to schedule a command; unknown commands are kindState.
func kindOf(name string) kind { return commands[name].kind }

// Known reports whether the Scheduler serves name.
func Known(name string) bool {
	_, ok := commands[name]
	return ok
}

// BashStarter is implemented by a Server that begins a bash command the
// moment it is read, so an abort_bash right behind it finds it running.
type BashStarter interface {
	StartBash(ctx context.Context, p BashParams) (finish func() (BashResult, error), err error)
}

func bashCommand() command {
	return twoStep(CmdBash, Server.Bash, func(s Server) (func(context.Context, BashParams) (func() (BashResult, error), error), bool) {
		bs, ok := s.(BashStarter)
		if !ok {
			return nil, false
		}
		return bs.StartBash, true
	})
}

// twoStep is a long command whose first step may run in arrival order:
// when the Server offers a starter (starter returns it), the command is
// decoded and started in arrival order and finished alongside later
// commands; otherwise call does all of it alongside them.
func twoStep[P, R any](name string, call func(Server, context.Context, P) (R, error),
	starter func(Server) (func(context.Context, P) (func() (R, error), error), bool)) command {
	c := command{kind: kindLong}
	c.start = func(ctx context.Context, s Server, raw json.RawMessage) (func() (any, error), error) {
		p, err := decode[P](name, raw)
		if err != nil {
			return nil, err
		}
		begin, ok := starter(s)
		if !ok {
			return func() (any, error) { return call(s, ctx, p) }, nil
		}
		finish, err := begin(ctx, p)
		if err != nil {
			return nil, err
		}
		return func() (any, error) { return finish() }, nil
	}
	return c
}

// CompactStarter is implemented by a Server that stops the run and
// registers a compaction the moment compact is read, so the commands
// behind it are ordered against it.
type CompactStarter interface {
	StartCompact(ctx context.Context, p CompactParams) (finish func() (CompactionResult, error), err error)
}

func compactCommand() command {
	return twoStep(CmdCompact, Server.Compact, func(s Server) (func(context.Context, CompactParams) (func() (CompactionResult, error), error), bool) {
		cs, ok := s.(CompactStarter)
		if !ok {
			return nil, false
		}
		return cs.StartCompact, true
	})
}

// start is the one way into the command table: it decodes params and
// does whatever must happen in arrival order (a bash command is
// registered so abort_bash can reach it), and returns the rest of the
// work, which the [Scheduler] runs in order or alongside later commands.
// The rest's result is the response's data: [NoData] when the command
// has none, otherwise a value to encode (possibly a nil pointer, encoded
// as null). Unknown commands fail with an error wrapping
// [ErrUnknownCommand] whose text is pi's ("Unknown command: X"); bad
// params with a [*ParamError]. A panic in either step becomes an error
// (and a report, when srv is a [Reporter]).
func start(ctx context.Context, srv Server, name string, params json.RawMessage) (finish func() (any, error), err error) {
	c, ok := commands[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s", errUnknown, Clip(name, ClipName))
	}
	defer recovered(srv, name, &err)
	rest := func() (any, error) { return c.call(ctx, srv, params) }
	if c.start != nil {
		if rest, err = c.start(ctx, srv, params); err != nil {
			return nil, err
		}
	}
	return func() (result any, err error) {
		defer recovered(srv, name, &err)
		return rest()
	}, nil
}

// recovered turns a panic in a handler into its command's error and
// reports it with its stack: a bug in one handler must not take the
// connection down.
func recovered(srv Server, name string, err *error) {
	if v := recover(); v != nil {
		var report error
		*err, report = Panicked(name, v)
		if r, ok := srv.(Reporter); ok {
			r.Report(report)
		}
	}
}

// errUnknown prints as pi's "Unknown command" while matching
// ErrUnknownCommand.
var errUnknown = &textErr{text: "Unknown command", is: ErrUnknownCommand}

type textErr struct {
	text string
	is   error
}

func (e *textErr) Error() string { return e.text }
func (e *textErr) Unwrap() error { return e.is }

// validation of required fields and enums; the field names are the wire's.

func (p *PromptParams) validate(cmd string) error {
	if p.StreamingBehavior != "" && p.StreamingBehavior != BehaviorSteer && p.StreamingBehavior != BehaviorFollowUp {
		return &ParamError{Command: cmd, Field: "streamingBehavior", Reason: `must be "steer" or "followUp"`}
	}
	return validateImages(cmd, p.Images)
}

func (p *MessageParams) validate(cmd string) error { return validateImages(cmd, p.Images) }

func validateImages(cmd string, imgs []llm.ImageContent) error {
	for i, img := range imgs {
		if img.Data == "" {
			return &ParamError{Command: cmd, Field: fmt.Sprintf("images[%d].data", i), Reason: "is required"}
		}
		if !strings.HasPrefix(img.MimeType, "image/") {
			return &ParamError{Command: cmd, Field: fmt.Sprintf("images[%d].mimeType", i), Reason: `must be an image type such as "image/png"`}
		}
	}
	return nil
}

func (p *SetModelParams) validate(cmd string) error {
	if p.Provider == "" {
		return &ParamError{Command: cmd, Field: "provider", Reason: "is required"}
	}
	if p.ModelID == "" {
		return &ParamError{Command: cmd, Field: "modelId", Reason: "is required"}
	}
	return nil
}

func (p *ThinkingParams) validate(cmd string) error {
	if _, err := llm.ParseThinkingLevel(string(p.Level)); err != nil {
		return &ParamError{Command: cmd, Field: "level", Reason: "must be one of off, minimal, low, medium, high, xhigh"}
	}
	return nil
}

func (p *ModeParams) validate(cmd string) error {
	if p.Mode != QueueAll && p.Mode != QueueOneAtATime {
		return &ParamError{Command: cmd, Field: "mode", Reason: `must be "all" or "one-at-a-time"`}
	}
	return nil
}

// enabledRaw lets EnabledParams insist that "enabled" is present.
func (p *EnabledParams) UnmarshalJSON(b []byte) error {
	var w struct {
		Enabled *bool `json:"enabled"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Enabled == nil {
		return errMissingEnabled
	}
	p.Enabled = *w.Enabled
	return nil
}

var errMissingEnabled = errors.New(`field "enabled" is required and must be a boolean`)

func (p *BashParams) validate(cmd string) error {
	if strings.TrimSpace(p.Command) == "" {
		return &ParamError{Command: cmd, Field: "command", Reason: "is required"}
	}
	return nil
}

func (p *SwitchSessionParams) validate(cmd string) error {
	if p.SessionPath == "" {
		return &ParamError{Command: cmd, Field: "sessionPath", Reason: "is required"}
	}
	return nil
}

func (p *ForkParams) validate(cmd string) error {
	if p.EntryID == "" {
		return &ParamError{Command: cmd, Field: "entryId", Reason: "is required"}
	}
	return nil
}
