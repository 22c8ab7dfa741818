package acp

import (
	"context"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

// What session/new asks of the stand-in runtime of title_test.go: its
// mode and config options.

func (f *fakeRuntime) ApprovalMode() string         { return "off" }
func (f *fakeRuntime) SetApprovalMode(string) error { return nil }
func (f *fakeRuntime) SetAdditionalDirs([]string)   {}
func (f *fakeRuntime) GetAvailableModels(context.Context) (api.ModelsResult, error) {
	return api.ModelsResult{}, nil
}
func (f *fakeRuntime) GetAvailableThinkingLevels(context.Context) (api.LevelsResult, error) {
	return api.LevelsResult{Levels: []llm.ThinkingLevel{llm.ThinkingOff}}, nil
}
