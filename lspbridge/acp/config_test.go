package acp

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

// What session/new asks of the stand-in runtime of title_test.go: its
// mode and config options.

func (f *fakeRuntime) ApprovalMode() string         { return "off" }
func (f *fakeRuntime) SetApprovalMode(string) error { return nil }
func (f *fakeRuntime) SandboxMode() string          { return "off" }
func (f *fakeRuntime) SetSandboxMode(string) error  { return nil }
func (f *fakeRuntime) SetAdditionalDirs([]string)   {}
func (f *fakeRuntime) GetAvailableModels(context.Context) (api.ModelsResult, error) {
	return api.ModelsResult{}, nil
}
func (f *fakeRuntime) GetAvailableThinkingLevels(context.Context) (api.LevelsResult, error) {
	return api.LevelsResult{Levels: []llm.ThinkingLevel{llm.ThinkingOff}}, nil
}

// modeRuntime runs with a sandbox and an approval mode.
type modeRuntime struct {
	fakeRuntime
	sandbox, approval string
}

func (m *modeRuntime) ApprovalMode() string { return m.approval }
func (m *modeRuntime) SandboxMode() string  { return m.sandbox }

// TestModesOf: a runtime that starts as a preset has the presets; one
// that starts otherwise has one more mode, what it started with; without
// a sandbox, escapes is the same as off.
func TestModesOf(t *testing.T) {
	ids := func(ps []preset) []string {
		var out []string
		for _, p := range ps {
			out = append(out, string(p.mode.Id))
		}
		return out
	}
	all := []string{"read-only", "auto", "writes", "all", "off", "full-access"}
	for _, tc := range []struct {
		sandbox, approval, want string
	}{
		{"workspace-write", "escapes", "auto"},
		{"read-only", "escapes", "read-only"},
		{"workspace-write", "off", "off"},
		{"workspace-write", "all", "all"},
		{"off", "off", "full-access"},
		{"off", "escapes", "full-access"},
		{"off", "writes", "custom"},
		{"read-only", "all", "custom"},
	} {
		s := &session{rt: &modeRuntime{sandbox: tc.sandbox, approval: tc.approval}}
		s.modes = modesOf(s.rt)
		assert.Equal(t, tc.want, s.mode(), "%s + %s", tc.sandbox, tc.approval)
		if tc.want == "custom" {
			assert.Equal(t, append(all, "custom"), ids(s.modes))
			p, _ := s.preset("custom")
			assert.Equal(t, tc.sandbox, p.sandbox)
			assert.Equal(t, tc.approval, p.approval)
		} else {
			assert.Equal(t, all, ids(s.modes))
		}
	}
	assert.Len(t, presets, 6, "a session's custom mode is its own")
}
