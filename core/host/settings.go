package host

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/host/run"
	"github.com/gopi-dev/gopi/core/sandbox"
	"github.com/gopi-dev/gopi/core/tools"
	"github.com/gopi-dev/gopi/internal/homedir"
	"github.com/gopi-dev/gopi/internal/regularfile"
)

// Settings are the keys of pi's settings.json that gopi reads, plus
// gopi's own "approval". The global file is <agent dir>/settings.json,
// the project file <cwd>/.pi/settings.json; project values win, objects
// are merged key by key as pi does. gopi never writes settings.json.
type Settings struct {
	DefaultProvider      string `json:"defaultProvider,omitempty"`
	DefaultModel         string `json:"defaultModel,omitempty"`
	DefaultThinkingLevel string `json:"defaultThinkingLevel,omitempty"`
	// DefaultProjectTrust is pi 1.5's "ask" | "always" | "never"; only the
	// global settings' counts (see resources.ResolveTrust).
	DefaultProjectTrust string   `json:"defaultProjectTrust,omitempty"`
	SteeringMode        string   `json:"steeringMode,omitempty"`
	FollowUpMode        string   `json:"followUpMode,omitempty"`
	EnabledModels       []string `json:"enabledModels,omitempty"`
	// ShellPath is the shell commands run with (a leading "~" is expanded
	// when the settings are loaded); empty means the default. Like
	// ShellCommandPrefix it applies to the user's bash command and to the
	// model's bash tool alike (see [Settings.ShellToolOptions]).
	ShellPath string `json:"shellPath,omitempty"`
	// ShellCommandPrefix goes on its own line before every command.
	ShellCommandPrefix string `json:"shellCommandPrefix,omitempty"`
	// ModelThinkingLevels are startup levels per model, keyed by exact
	// "provider/modelId"; they win over DefaultThinkingLevel.
	ModelThinkingLevels map[string]string `json:"modelThinkingLevels,omitempty"`
	// DefaultTools are the built-in tools enabled at startup when no
	// --tools/--no-tools says otherwise; an empty list enables none.
	DefaultTools *[]string `json:"defaultTools,omitempty"`
	// Codemode is settings.json's "codemode" object (pi's).
	Codemode CodemodeSettings `json:"codemode,omitzero"`
	// SessionDir is where sessions are kept (relative to the cwd);
	// --session-dir and PI_CODING_AGENT_SESSION_DIR win over it.
	SessionDir string `json:"sessionDir,omitempty"`
	// Approval is gopi's tool approval gate: "off", "escapes", "writes"
	// or "all".
	Approval string `json:"approval,omitempty"`
	// ApprovalTimeoutMs bounds how long an approval question waits; 0
	// waits until the client answers or the run is aborted.
	ApprovalTimeoutMs int64 `json:"approvalTimeoutMs,omitempty"`
	// CheckpointBudgetMs bounds a prompt's snapshot of the project's
	// files (docs/checkpoints.md); 0 means 3 s.
	CheckpointBudgetMs int64 `json:"checkpointBudgetMs,omitempty"`

	// Extensions are extension paths to load besides the discovered ones
	// (relative to the cwd).
	Extensions []string `json:"extensions,omitempty"`
	// ExtensionHost configures gopi's Node extension host.
	ExtensionHost ExtensionHostSettings `json:"extensionHost,omitzero"`

	// Retry and Compaction are the "retry" and "compaction" objects,
	// decoded by [LoadSettings] over pi's defaults (keys left out keep
	// the default; an object that does not decode is the defaults). nil
	// means the defaults.
	Retry      *RetrySettings       `json:"-"`
	Compaction *compaction.Settings `json:"-"`

	// Sandbox is the agent dir's "sandbox" object, ProjectSandbox a
	// trusted project's, which may only tighten it (sandbox.Resolve);
	// nil when the file has none. A leading "~" of a writable root is
	// expanded.
	Sandbox        *sandbox.Settings `json:"-"`
	ProjectSandbox *sandbox.Settings `json:"-"`
	// SandboxErr is a "sandbox" object that does not decode: gopi stops
	// rather than run commands with less confinement than was asked.
	SandboxErr error `json:"-"`

	// Merged is every key of the settings files, global and project
	// merged, gopi's or not: what pi.getSettings() returns.
	Merged json.RawMessage `json:"-"`
}

// ExtensionHostSettings are gopi's "extensionHost" settings.
type ExtensionHostSettings struct {
	// Node is the node binary to run; PiPackage the directory of pi's npm
	// package (@earendil-works/pi-coding-agent). Empty means search (see
	// docs/extensions.md).
	Node      string `json:"node,omitempty"`
	PiPackage string `json:"piPackage,omitempty"`
	// HookTimeoutMs bounds one hook call (0: 30 s); time spent waiting
	// for the user's answer to a dialog does not count.
	HookTimeoutMs int64 `json:"hookTimeoutMs,omitempty"`
}

// CodemodeSettings are the "codemode" settings: how the codemode tool
// presents the other tools ("on", the default, or "only") and how many
// estimated tokens its description may spend on their declarations.
type CodemodeSettings struct {
	Mode         string `json:"mode,omitempty"`
	InlineBudget *int   `json:"inlineBudget,omitempty"`
}

// LoadSettings reads and merges the global and project settings. A file
// that is missing is skipped; one that cannot be parsed is skipped and
// reported in the returned errors, so a typo never stops gopi.
//
// An empty cwd reads the global settings only (an untrusted project's are
// not read at all).
func LoadSettings(agentDir, cwd string) (Settings, []error) {
	merged := map[string]any{}
	var problems []error
	var global, project *sandbox.Settings
	var sandboxErr error
	paths := []string{filepath.Join(agentDir, "settings.json")}
	if cwd != "" {
		paths = append(paths, filepath.Join(cwd, ".pi", "settings.json"))
	}
	for i, path := range paths {
		data, err := regularfile.ReadFile(path)
		if regularfile.Missing(err) {
			continue
		}
		if err != nil {
			problems = append(problems, fmt.Errorf("reading settings: %w", err))
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			problems = append(problems, fmt.Errorf("settings %s ignored: %w", path, err))
			continue
		}
		mergeInto(merged, m)
		sb, err := sandboxSettings(m["sandbox"])
		if err != nil && sandboxErr == nil {
			sandboxErr = fmt.Errorf("settings %s: \"sandbox\": %w", path, err)
		}
		if i == 0 {
			global = sb
		} else {
			project = sb
		}
	}
	var s Settings
	data, _ := json.Marshal(merged)
	if err := json.Unmarshal(data, &s); err != nil {
		// A key of the wrong type: keep what decodes field by field.
		problems = append(problems, fmt.Errorf("settings: %w", err))
		s = decodeLoose(merged)
	}
	s.ShellPath = homedir.Expand(s.ShellPath)
	// The nested objects decode on their own, so a bad one never costs
	// the other keys a warning.
	var objects struct{ Retry, Compaction json.RawMessage }
	_ = json.Unmarshal(data, &objects) // data is an object; raw values take anything
	s.Retry = ptr(overDefaults(objects.Retry, DefaultRetrySettings()))
	s.Compaction = ptr(overDefaults(objects.Compaction, compaction.DefaultSettings()))
	s.Merged = data
	s.Sandbox, s.ProjectSandbox, s.SandboxErr = global, project, sandboxErr
	return s, problems
}

// sandboxSettings decodes one file's "sandbox" object (nil when there is
// none).
func sandboxSettings(v any) (*sandbox.Settings, error) {
	if v == nil {
		return nil, nil
	}
	raw, _ := json.Marshal(v)
	var sb sandbox.Settings
	if err := json.Unmarshal(raw, &sb); err != nil {
		return nil, err
	}
	for i, r := range sb.WritableRoots {
		sb.WritableRoots[i] = homedir.Expand(r)
	}
	return &sb, nil
}

// overDefaults decodes a settings.json object over defaults: keys it
// leaves out keep theirs, and one that does not decode (a value of the
// wrong type) gives the defaults whole.
func overDefaults[T any](raw json.RawMessage, defaults T) T {
	out := defaults
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			return defaults
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// RetrySettings are settings.json's "retry" object (the run's).
type RetrySettings = run.RetrySettings

// DefaultRetrySettings are pi's: on, 3 retries, 2 s doubling.
func DefaultRetrySettings() RetrySettings { return run.DefaultRetrySettings() }

// retrySettings is the "retry" object, or pi's defaults when there is
// none.
func (s Settings) retrySettings() RetrySettings {
	if s.Retry == nil {
		return DefaultRetrySettings()
	}
	return *s.Retry
}

// compactionSettings is the "compaction" object, or pi's defaults when
// there is none.
func (s Settings) compactionSettings() compaction.Settings {
	if s.Compaction == nil {
		return compaction.DefaultSettings()
	}
	return *s.Compaction
}

// shell is the shell the settings choose.
func (s Settings) shell() tools.LocalShell { return tools.LocalShell{Path: s.ShellPath} }

// ShellToolOptions make the bash tool run commands as the user's bash
// command does: with shellPath's shell and shellCommandPrefix on the line
// before the command. pi applies both settings to the tool and to the
// command.
func (s Settings) ShellToolOptions() []tools.Option {
	return []tools.Option{tools.WithShell(s.shell()), tools.WithCommandPrefix(s.ShellCommandPrefix)}
}

// mergeInto copies src over dst, merging nested objects.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		if sub, ok := v.(map[string]any); ok {
			if cur, ok := dst[k].(map[string]any); ok {
				mergeInto(cur, sub)
				continue
			}
		}
		dst[k] = v
	}
}

// decodeLoose decodes each key on its own so one bad value does not lose
// the others.
func decodeLoose(m map[string]any) Settings {
	var s Settings
	for k, v := range m {
		one, _ := json.Marshal(map[string]any{k: v})
		_ = json.Unmarshal(one, &s)
	}
	return s
}
