package mcpstate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/mcp"
	"github.com/gopi-dev/gopi/core/resources"
	"github.com/gopi-dev/gopi/core/tools"
)

// searched is a transcript in which tool_search gave res.
func searched(t *testing.T, res agent.Result) []llm.Message {
	t.Helper()
	details, err := json.Marshal(res.Details)
	require.NoError(t, err)
	return []llm.Message{&llm.ToolResultMessage{ToolCallID: "1", ToolName: ToolSearchName, Details: details}}
}

// Issue 29: a deferred tool is not declared; tool_search loads it, and a
// request on a transcript with that search declares it; a transcript
// without it does not. A hidden tool (or server) is never found. The
// system prompt lists the server with deferred tools, not the hidden one.
func TestToolSearch(t *testing.T) {
	bin := buildServer(t)
	d := entry("d", bin, mcp.ExposureDeferred)
	d.Server.Description = "A test server."
	d.Server.ToolExposure = map[string]mcp.Exposure{"fail": mcp.ExposureHidden}
	s, _ := newState(t, Config{Servers: []mcp.Entry{d, entry("h", bin, mcp.ExposureHidden)}}, nil)
	settled(t, s)
	ctx := context.Background()

	declared := s.Declared()
	assert.Equal(t, []string{ToolSearchName}, names(declared), "only tool_search: the tools are deferred")
	assert.Empty(t, s.RequestTools(ctx, nil, nil))
	assert.Equal(t, []resources.MCPServerLine{{Name: "d", Summary: "A test server."}}, s.ServerLines())

	res := run(t, named(declared, ToolSearchName), `{"query": "echo"}`)
	assert.Contains(t, res.Content.Text(), "- mcp__d__echo: Sends the text back.")
	msgs := searched(t, res)
	details, _ := json.Marshal(res.Details)
	assert.JSONEq(t, `{"query": "echo", "loadedTools": ["mcp__d__echo"]}`, string(details))
	builtin := &fakeTool{name: "read"}
	assert.Equal(t, []string{"read", "mcp__d__echo"}, names(s.RequestTools(ctx, msgs, []agent.Tool{builtin})))
	assert.Equal(t, []string{"mcp__d__echo"}, names(s.Loaded(msgs)))
	// A failed search loads nothing.
	failed := searched(t, res)
	failed[0].(*llm.ToolResultMessage).IsError = true
	assert.Empty(t, s.RequestTools(ctx, failed, nil))

	// Hidden: not found, not declared.
	res = run(t, named(declared, ToolSearchName), `{"query": "fail"}`)
	details, _ = json.Marshal(res.Details)
	assert.JSONEq(t, `{"query": "fail", "loadedTools": []}`, string(details))
	assert.Contains(t, res.Content.Text(), `No tool matches "fail"`)

	// The limit: at most that many, the best first.
	res = run(t, named(declared, ToolSearchName), `{"query": "d", "limit": 2}`)
	assert.Len(t, res.Details.(toolSearchDetails).Loaded, 2)
}

// --exclude-tools tool_search leaves it undeclared and the system prompt
// without the servers it would load tools of; the deferred tools are out
// of reach.
func TestToolSearchExcluded(t *testing.T) {
	bin := buildServer(t)
	s, _ := newState(t, Config{
		Servers:   []mcp.Entry{entry("d", bin, mcp.ExposureDeferred)},
		Selection: tools.Select(tools.SelectOptions{Exclude: []string{ToolSearchName}}),
	}, nil)
	settled(t, s)
	assert.Empty(t, s.Declared())
	assert.Empty(t, s.ServerLines())
}

// The tools a transcript loaded are read from its tool_search results and
// from the MCP tools its system messages declare (a compaction's
// checkpoint keeps them after the results are summarized); other tools of
// a system message are not MCP's.
func TestLoadedTools(t *testing.T) {
	msgs := []llm.Message{
		&llm.SystemMessage{ToolsAdded: []llm.ToolSpec{{Name: "read"}, {Name: "mcp__a__x"}, {Name: "read_mcp_resource"}}},
		&llm.ToolResultMessage{ToolName: ToolSearchName, Details: json.RawMessage(`{"query":"q","loadedTools":["mcp__b__y"]}`)},
		&llm.ToolResultMessage{ToolName: ToolSearchName, Details: json.RawMessage(`not json`)},
		&llm.ToolResultMessage{ToolName: "other", Details: json.RawMessage(`{"loadedTools":["mcp__c__z"]}`)},
	}
	assert.Equal(t, map[string]bool{"mcp__a__x": true, "read_mcp_resource": true, "mcp__b__y": true}, loadedTools(msgs))
	assert.Nil(t, loadedTools(nil))
}

// A word in a tool's name counts most, then in its description; the
// whole query as the name wins outright; ties keep the order given; a
// tool that matches no word is left out.
func TestRankTools(t *testing.T) {
	ts := []agent.Tool{
		&fakeTool{name: "mcp__s__notes", desc: "Lists files."},
		&fakeTool{name: "mcp__s__files", desc: "Reads notes."},
		&fakeTool{name: "mcp__s__other", desc: "Nothing."},
		&fakeTool{name: "mcp__s__files_too", desc: "More."},
	}
	assert.Equal(t, []string{"mcp__s__files", "mcp__s__files_too", "mcp__s__notes"}, names(rankTools("files", ts, nil)))
	assert.Equal(t, []string{"mcp__s__notes", "mcp__s__files"}, names(rankTools("notes", ts, nil)))
	assert.Equal(t, []string{"mcp__s__files_too", "mcp__s__files", "mcp__s__notes", "mcp__s__other"}, names(rankTools("mcp__s__files_too", ts, nil)))
	assert.Empty(t, rankTools("absent", ts, nil))
}

// fakeTool is a tool with a name and a description only.
type fakeTool struct{ name, desc string }

func (f *fakeTool) Spec() llm.ToolSpec { return llm.ToolSpec{Name: f.name, Description: f.desc} }

func (f *fakeTool) Run(context.Context, agent.Call, func(agent.Result)) (agent.Result, error) {
	return agent.Result{}, nil
}
