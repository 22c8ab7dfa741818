package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

// A session's modes and config options. A mode is a sandbox mode and an
// approval mode together, as codex-acp's modes are: how far the model's
// commands reach, and which tool calls wait for
// session/request_permission. The config options are the mode again, the
// model and the thinking level. Changes run in the session's command
// order, after the commands read before them (a prompt counts once
// accepted, so a change made while a prompt runs applies from the run's
// next request on).

// The sandbox modes (core/sandbox) and approval modes (core/host/gate)
// the modes are made of, as the runtime names them.
const (
	sandboxOff            = "off"
	sandboxReadOnly       = "read-only"
	sandboxWorkspaceWrite = "workspace-write"

	approvalOff     = "off"
	approvalEscapes = "escapes"
	approvalWrites  = "writes"
	approvalAll     = "all"
)

// preset is a session mode: what it is called, and the sandbox and
// approval modes it sets.
type preset struct {
	mode              sdk.SessionMode
	sandbox, approval string
}

// The ids of the modes every session offers. off, writes and all are
// the approval modes' names, which the modes had before they set the
// sandbox too.
const (
	modeReadOnly   = "read-only"
	modeAuto       = "auto"
	modeWrites     = "writes"
	modeAll        = "all"
	modeOff        = "off"
	modeFullAccess = "full-access"
	// modeCustom is a session's mode when what it started with (the
	// command line, the settings) is none of the others.
	modeCustom = "custom"
)

// presets are the modes every session offers, strictest first.
var presets = []preset{
	{sdk.SessionMode{Id: modeReadOnly, Name: "Read only", Description: sdk.Ptr(
		"Commands run in gopi's sandbox and change nothing (their temp dir aside), with no network. Nothing asks first; a command the sandbox stopped asks to run once outside.")},
		sandboxReadOnly, approvalEscapes},
	{sdk.SessionMode{Id: modeAuto, Name: "Auto", Description: sdk.Ptr(
		"Commands run in gopi's sandbox: they write in the project, with no network. Nothing asks first; a command the sandbox stopped asks to run once outside.")},
		sandboxWorkspaceWrite, approvalEscapes},
	{sdk.SessionMode{Id: modeWrites, Name: "Ask before changes", Description: sdk.Ptr(
		"Edits, writes, bash and tools that may change things ask first; reading and searching do not. Commands run in gopi's sandbox, as in Auto.")},
		sandboxWorkspaceWrite, approvalWrites},
	{sdk.SessionMode{Id: modeAll, Name: "Ask before every tool", Description: sdk.Ptr(
		"Every tool call asks first. Commands run in gopi's sandbox, as in Auto.")},
		sandboxWorkspaceWrite, approvalAll},
	{sdk.SessionMode{Id: modeOff, Name: "Never ask", Description: sdk.Ptr(
		"Nothing asks. Commands run in gopi's sandbox, as in Auto, and what it stops stays stopped.")},
		sandboxWorkspaceWrite, approvalOff},
	{sdk.SessionMode{Id: modeFullAccess, Name: "Full access", Description: sdk.Ptr(
		"No sandbox and nothing asks: every tool runs with your account's rights, the network included.")},
		sandboxOff, approvalOff},
}

// holds reports whether p is what the runtime runs with: sandbox mode
// sb and approval mode ap. Without a sandbox there is nothing to step
// out of, so escapes is off there.
func (p preset) holds(sb, ap string) bool {
	if sb == sandboxOff && ap == approvalEscapes {
		ap = approvalOff
	}
	return p.sandbox == sb && p.approval == ap
}

// modesOf are the modes of a session whose runtime starts as rt: the
// presets, and when rt matches none of them, a last one that puts back
// what it started with.
func modesOf(rt Runtime) []preset {
	sb, ap := rt.SandboxMode(), rt.ApprovalMode()
	for _, p := range presets {
		if p.holds(sb, ap) {
			return presets
		}
	}
	custom := preset{sdk.SessionMode{Id: modeCustom, Name: "As started", Description: sdk.Ptr(fmt.Sprintf(
		"What gopi was started with: sandbox %s, approval %s (the command line or settings.json).", sb, ap))}, sb, ap}
	return append(slices.Clip(presets), custom)
}

// mode is the session's current mode: the first of its modes that
// holds.
func (s *session) mode() string {
	sb, ap := s.rt.SandboxMode(), s.rt.ApprovalMode()
	for _, p := range s.modes {
		if p.holds(sb, ap) {
			return string(p.mode.Id)
		}
	}
	return "" // not reached: a session's modes include what it started with, and a change sets one of them
}

// preset is the session's mode id, if it is one.
func (s *session) preset(id string) (preset, bool) {
	i := slices.IndexFunc(s.modes, func(p preset) bool { return string(p.mode.Id) == id })
	if i < 0 {
		return preset{}, false
	}
	return s.modes[i], true
}

func (s *session) availableModes() []sdk.SessionMode {
	out := make([]sdk.SessionMode, len(s.modes))
	for i, p := range s.modes {
		out[i] = p.mode
	}
	return out
}

// The ids of the config options.
const (
	configMode    = "mode"
	configModel   = "model"
	configThought = "thought_level"
)

// modeState is the session's SessionModeState.
func (s *session) modeState() *sdk.SessionModeState {
	return &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(s.mode()), AvailableModes: s.availableModes()}
}

// configOptions are the session's config options with their current
// values: the mode, the model (when the session has one) and the
// thinking level.
func (s *session) configOptions(ctx context.Context) ([]sdk.SessionConfigOption, error) {
	st, err := s.rt.GetState(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the session's state: %w", err)
	}
	modes := make([]sdk.SessionConfigSelectOption, len(s.modes))
	for i, p := range s.modes {
		modes[i] = sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(p.mode.Id), Name: p.mode.Name, Description: p.mode.Description}
	}
	out := []sdk.SessionConfigOption{selectOption(configMode, "Mode", sdk.SessionConfigOptionCategoryMode,
		"Where commands may write, and which tool calls ask for permission", s.mode(), modes)}

	if st.Model != nil {
		models, err := s.models(ctx, st.Model)
		if err != nil {
			return nil, err
		}
		values := make([]sdk.SessionConfigSelectOption, len(models))
		for i, m := range models {
			values[i] = sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(modelValue(m)), Name: cmpOr(m.Name, m.ID), Description: sdk.Ptr(modelValue(m))}
		}
		out = append(out, selectOption(configModel, "Model", sdk.SessionConfigOptionCategoryModel, "", modelValue(st.Model), values))
	}

	levels, err := s.rt.GetAvailableThinkingLevels(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the thinking levels: %w", err)
	}
	values := make([]sdk.SessionConfigSelectOption, 0, len(levels.Levels))
	for _, l := range levels.Levels {
		values = append(values, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(l), Name: levelName(l)})
	}
	current := string(st.ThinkingLevel)
	if current == "" {
		current = string(llm.ThinkingOff)
	}
	if len(values) > 0 {
		out = append(out, selectOption(configThought, "Thinking", sdk.SessionConfigOptionCategoryThoughtLevel, "How much the model reasons before it answers", current, values))
	}
	return out, nil
}

// models are the models a session may switch to: the available ones,
// and the current one first when it is not among them.
func (s *session) models(ctx context.Context, current *llm.Model) ([]*llm.Model, error) {
	res, err := s.rt.GetAvailableModels(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the models: %w", err)
	}
	models := res.Models
	if current != nil && !slices.ContainsFunc(models, func(m *llm.Model) bool { return modelValue(m) == modelValue(current) }) {
		models = append([]*llm.Model{current}, models...)
	}
	return models, nil
}

func selectOption(id, name string, cat sdk.SessionConfigOptionCategory, desc, current string, values []sdk.SessionConfigSelectOption) sdk.SessionConfigOption {
	o := &sdk.SessionConfigOptionSelect{
		Type:         "select",
		Id:           sdk.SessionConfigId(id),
		Name:         name,
		Category:     sdk.Ptr(cat),
		CurrentValue: sdk.SessionConfigValueId(current),
		Options:      sdk.SessionConfigSelectOptions{Ungrouped: sdk.Ptr(sdk.SessionConfigSelectOptionsUngrouped(values))},
	}
	if desc != "" {
		o.Description = sdk.Ptr(desc)
	}
	return sdk.SessionConfigOption{Select: o}
}

// modelValue names a model as --model does: "provider/id".
func modelValue(m *llm.Model) string { return m.Provider + "/" + m.ID }

func levelName(l llm.ThinkingLevel) string {
	switch l {
	case llm.ThinkingXHigh:
		return "Extra high"
	case "":
		return "Off"
	}
	return strings.ToUpper(string(l[:1])) + string(l[1:])
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// sessionSetup is what session/new, load and resume answer with beside
// the session id: its modes and config options.
func (s *session) setup(ctx context.Context) (*sdk.SessionModeState, []sdk.SessionConfigOption, error) {
	opts, err := s.configOptions(ctx)
	if err != nil {
		return nil, nil, errorf(codeInternalError, "session %s: %v", s.id, err)
	}
	return s.modeState(), opts, nil
}

// inTurn runs f in the session's command order: the turn is a get_state
// whose answer is not used. f answers the request itself; a session
// closed before the turn came answers -32002.
func (a *conn) inTurn(s *session, id json.RawMessage, f func(ctx context.Context) error) {
	call := s.sched.Queue()
	call.Run(s.rt, api.Command{Name: api.CmdGetState, Reply: func(_ any, err error) {
		if err == nil {
			err = f(a.ctx)
		}
		if errors.Is(err, api.ErrNotStarted) {
			err = &rpcError{Code: codeNotFound, Message: fmt.Sprintf("resource not found: session %s closed before the change was made", s.id), Data: map[string]string{"sessionId": s.id}}
		}
		if err != nil {
			_ = a.w.fail(id, asRPCError(err))
		}
	}})
}

// setMode is session/set_mode: a change sends current_mode_update and
// config_option_update (the mode is an option too) before the answer.
func (a *conn) setMode(m *message) error {
	var p sdk.SetSessionModeRequest
	if err := decodeParams(m, &p, "sessionId", "modeId"); err != nil {
		return err
	}
	s, err := a.session(p.SessionId)
	if err != nil {
		return err
	}
	if _, ok := s.preset(string(p.ModeId)); !ok {
		return errorf(codeInvalidParams, "invalid params: \"modeId\" %q is not one of this session's modes (%s)", p.ModeId, s.modeIDs())
	}
	id := m.ID
	a.inTurn(s, id, func(ctx context.Context) error {
		changed, err := s.changeMode(string(p.ModeId))
		if err != nil {
			return err
		}
		if changed {
			s.tellOptions(ctx)
		}
		_ = a.w.result(id, sdk.SetSessionModeResponse{})
		return nil
	})
	return nil
}

// changeMode sets the sandbox and approval modes of the session's mode
// id and, when the mode changed, says so with current_mode_update. A
// project's settings may keep the sandbox stricter than the mode's (the
// runtime says so on stderr; get_state reports what holds).
func (s *session) changeMode(id string) (changed bool, err error) {
	p, ok := s.preset(id)
	if !ok {
		return false, errorf(codeInvalidParams, "invalid params: %q is not one of this session's modes (%s)", id, s.modeIDs())
	}
	if s.mode() == id {
		return false, nil
	}
	if err := s.rt.SetSandboxMode(p.sandbox); err != nil {
		return false, errorf(codeInternalError, "setting mode %s: %v", id, err)
	}
	if err := s.rt.SetApprovalMode(p.approval); err != nil {
		return false, errorf(codeInternalError, "setting mode %s: %v", id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.update(sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeId: sdk.SessionModeId(id)}})
	return true, nil
}

// tellOptions sends config_option_update with every option's value.
func (s *session) tellOptions(ctx context.Context) {
	opts, err := s.configOptions(ctx)
	if err != nil {
		s.report(fmt.Errorf("acp: session %s: config_option_update: %w", s.id, err))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.update(sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: opts}})
}

func (s *session) modeIDs() string {
	ids := make([]string, len(s.modes))
	for i, p := range s.modes {
		ids[i] = string(p.mode.Id)
	}
	return strings.Join(ids, ", ")
}

// setConfigOption is session/set_config_option: it answers with every
// option's value once the change is made. A change of the mode also
// sends current_mode_update, for clients that follow modes.
func (a *conn) setConfigOption(m *message) error {
	var p setConfigOptionParams
	if err := decodeParams(m, &p, "sessionId", "configId", "value"); err != nil {
		return err
	}
	s, err := a.session(p.SessionID)
	if err != nil {
		return err
	}
	switch p.ConfigID {
	case configMode, configModel, configThought:
	default:
		return errorf(codeInvalidParams, "invalid params: \"configId\" %q is not one of this session's options (%s, %s, %s)", p.ConfigID, configMode, configModel, configThought)
	}
	var value string
	if p.Type == "boolean" || json.Unmarshal(p.Value, &value) != nil {
		return errorf(codeInvalidParams, "invalid params: \"value\" of %q must be a value id (a string): the option is a select", p.ConfigID)
	}
	id := m.ID
	a.inTurn(s, id, func(ctx context.Context) error {
		switch p.ConfigID {
		case configMode:
			if _, ok := s.preset(value); !ok {
				return errorf(codeInvalidParams, "invalid params: \"value\" %q is not one of the values of %q (%s)", value, p.ConfigID, s.modeIDs())
			}
			if _, err := s.changeMode(value); err != nil {
				return err
			}
		case configModel:
			if err := s.setModel(ctx, value, "value"); err != nil {
				return err
			}
		case configThought:
			if err := s.setThought(ctx, value); err != nil {
				return err
			}
		}
		opts, err := s.configOptions(ctx)
		if err != nil {
			return errorf(codeInternalError, "session %s: %v", s.id, err)
		}
		_ = a.w.result(id, sdk.SetSessionConfigOptionResponse{ConfigOptions: opts})
		return nil
	})
	return nil
}

// setModel switches the session to the model named "provider/id", one
// of its model option's values; field names the param that named it.
func (s *session) setModel(ctx context.Context, value, field string) error {
	st, err := s.rt.GetState(ctx)
	if err != nil {
		return errorf(codeInternalError, "session %s: reading its state: %v", s.id, err)
	}
	models, err := s.models(ctx, st.Model)
	if err != nil {
		return errorf(codeInternalError, "session %s: %v", s.id, err)
	}
	i := slices.IndexFunc(models, func(m *llm.Model) bool { return modelValue(m) == value })
	if i < 0 {
		return errorf(codeInvalidParams, "invalid params: %q %q is not one of the models this session can use (the values of %q)", field, value, configModel)
	}
	if st.Model != nil && modelValue(st.Model) == value {
		return nil
	}
	if _, err := s.rt.SetModel(ctx, api.SetModelParams{Provider: models[i].Provider, ModelID: models[i].ID}); err != nil {
		return errorf(codeInternalError, "switching to %s: %v", value, err)
	}
	return nil
}

// setThought sets the thinking level, one of the current model's.
func (s *session) setThought(ctx context.Context, value string) error {
	levels, err := s.rt.GetAvailableThinkingLevels(ctx)
	if err != nil {
		return errorf(codeInternalError, "session %s: listing the thinking levels: %v", s.id, err)
	}
	if !slices.Contains(levels.Levels, llm.ThinkingLevel(value)) {
		names := make([]string, len(levels.Levels))
		for i, l := range levels.Levels {
			names[i] = string(l)
		}
		return errorf(codeInvalidParams, "invalid params: \"value\" %q is not one of the values of %q for this model (%s)", value, configThought, strings.Join(names, ", "))
	}
	if err := s.rt.SetThinkingLevel(ctx, api.ThinkingParams{Level: llm.ThinkingLevel(value)}); err != nil {
		return errorf(codeInternalError, "setting the thinking level to %s: %v", value, err)
	}
	return nil
}

// methodSetModel is the older way to switch models; ACP's stable schema
// no longer has it.
const methodSetModel = "session/set_model"

// setModelParams is the older session/set_model's params (ACP's unstable
// SetSessionModelRequest, since replaced by the model config option).
type setModelParams struct {
	SessionID sdk.SessionId `json:"sessionId"`
	ModelID   string        `json:"modelId"`
}

// setModelOld is session/set_model, which clients from before config
// options send: modelId is "provider/id", as the model option's values.
// It sends config_option_update with the new values, then answers {}.
func (a *conn) setModelOld(m *message) error {
	var p setModelParams
	if err := decodeParams(m, &p, "sessionId", "modelId"); err != nil {
		return err
	}
	s, err := a.session(p.SessionID)
	if err != nil {
		return err
	}
	id := m.ID
	a.inTurn(s, id, func(ctx context.Context) error {
		if err := s.setModel(ctx, p.ModelID, "modelId"); err != nil {
			return err
		}
		s.tellOptions(ctx)
		_ = a.w.result(id, struct{}{})
		return nil
	})
	return nil
}
