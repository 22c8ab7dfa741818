package host

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host/mcpstate"
	"github.com/gopi-dev/gopi/core/resources"
)

// GetCommands lists the extension commands, prompt templates and skills a
// prompt can invoke with "/name", in pi's order.
func (h *Host) GetCommands(ctx context.Context) (api.CommandsResult, error) {
	// pi has loaded its extensions before it answers anything.
	if err := h.ext.waitLoaded(ctx); err != nil {
		return api.CommandsResult{}, fmt.Errorf("waiting for the extensions to load: %w", err)
	}
	return slashCommands(h.mcp, h.ext.manager(), h.prompts), nil
}

// slashCommands lists the slash commands known now: /mcp first, as in pi
// (none when an extension registered a command of that name), the
// extensions', the prompt templates and the skills.
func slashCommands(mcp *mcpstate.State, exts *ext.Manager, prompts *promptRoom) api.CommandsResult {
	out := []api.SlashCommand{}
	if !exts.HasCommand(mcpstate.CommandName) {
		if c, ok := mcp.CommandEntry(); ok {
			out = append(out, c)
		}
	}
	for _, c := range exts.Registrations().Commands {
		// An extension's handler gets whatever follows the name.
		sc := api.SlashCommand{Name: c.Name, Description: c.Description, Source: "extension", Input: "arguments"}
		var si api.SourceInfo
		if json.Unmarshal(c.SourceInfo, &si) == nil && si.Path != "" {
			sc.SourceInfo = &si
		}
		out = append(out, sc)
	}
	templates, skills := prompts.invocable()
	for _, t := range templates {
		input := t.ArgumentHint
		if input == "" && t.TakesArguments() {
			input = "arguments"
		}
		out = append(out, api.SlashCommand{
			Name: t.Name, Description: t.Description, Source: "prompt",
			Location: string(t.Location), Path: t.Path, SourceInfo: sourceInfo(t.SourceInfo),
			Input: input,
		})
	}
	for _, s := range skills {
		out = append(out, api.SlashCommand{
			Name: "skill:" + s.Name, Description: s.Description, Source: "skill",
			Location: string(s.Location), Path: s.Path, SourceInfo: sourceInfo(s.SourceInfo),
			// What follows the name is added after the skill.
			Input: "[request]",
		})
	}
	return api.CommandsResult{Commands: out}
}

func sourceInfo(s resources.SourceInfo) *api.SourceInfo {
	return &api.SourceInfo{Path: s.Path, Source: s.Source, Scope: string(s.Scope), Origin: string(s.Origin), BaseDir: s.BaseDir}
}
