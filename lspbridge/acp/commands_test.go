package acp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/api"
)

func TestCommandsUpdate(t *testing.T) {
	u := commandsUpdate(api.CommandsResult{Commands: []api.SlashCommand{
		{Name: "deploy", Source: "extension", Input: "arguments"},
		{Name: "review", Description: "Review a file", Source: "prompt", Input: "<file>"},
		{Name: "hello", Description: "Say hello", Source: "prompt"},
		{Name: "rewind", Description: "A template of the same name", Source: "prompt"},
	}})
	b, err := json.Marshal(u)
	require.NoError(t, err)
	rewind := `{"name":"rewind","description":"Undo what the agent did since an earlier prompt: its file changes, the conversation, or both","input":{"hint":"[checkpoint id] [code|conversation|both]"}}`
	assert.JSONEq(t, `{"sessionUpdate":"available_commands_update","availableCommands":[`+rewind+`,
		{"name":"deploy","description":"extension command","input":{"hint":"arguments"}},
		{"name":"review","description":"Review a file","input":{"hint":"<file>"}},
		{"name":"hello","description":"Say hello"}]}`, string(b), "gopi's /rewind first; a template of its name is not offered")

	b, err = json.Marshal(commandsUpdate(api.CommandsResult{}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"sessionUpdate":"available_commands_update","availableCommands":[`+rewind+`]}`, string(b), "gopi's own command alone")
}
