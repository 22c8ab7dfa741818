package acp

import (
	"encoding/json"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The direct encoding of a delta says exactly what the SDK's types say.
func TestChunkMatchesTheSDK(t *testing.T) {
	for _, text := range []string{"plain", "quotes \" and \\ and <html> & \u2028", "line\nbreak\ttab\x01", "😀 ünïcode"} {
		for kind, want := range map[string]sdk.SessionUpdate{
			"agent_message_chunk": sdk.UpdateAgentMessageText(text),
			"agent_thought_chunk": sdk.UpdateAgentThoughtText(text),
		} {
			got, ok := chunk{"s-1", kind, text}.AppendJSON(nil)
			require.True(t, ok)
			wantJSON, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update",
				"params": sdk.SessionNotification{SessionId: "s-1", Update: want}})
			require.NoError(t, err)
			assert.JSONEq(t, string(wantJSON), string(got))
			assert.True(t, json.Valid(got))
		}
	}
}
