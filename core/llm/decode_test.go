package llm

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Stored messages decode as encoding/json would read them: duplicate
// names (the last wins), invalid UTF-8 (replaced), names in another case,
// content as a plain string; and what it would refuse still fails.
func TestUnmarshalMessageIsLenientAsEncodingJSON(t *testing.T) {
	m, err := UnmarshalMessage([]byte(`{"role":"user","content":"first","content":"second","timestamp":1}`))
	require.NoError(t, err)
	assert.Equal(t, "second", m.(*UserMessage).Content.Text())

	m, err = UnmarshalMessage([]byte("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}],\"timestamp\":1}"))
	require.NoError(t, err)
	assert.Equal(t, "a\uFFFDb", m.(*UserMessage).Content.Text())

	m, err = UnmarshalMessage([]byte(`{"content":[{"text":"hi","type":"text"}],"Provider":"p","role":"assistant","stopReason":"stop"}`))
	require.NoError(t, err, "role and type need not come first")
	a := m.(*AssistantMessage)
	assert.Equal(t, "p", a.Provider, "names match in any case")
	assert.Equal(t, "hi", a.Content.Text())

	m, err = UnmarshalMessage([]byte(`{"role":"assistant","content":null}`))
	require.NoError(t, err)
	assert.NotNil(t, m.(*AssistantMessage).Content, "an assistant's content is never nil")

	m, err = UnmarshalMessage([]byte(`{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"toolCall","id":"x","name":"n","arguments":null}],"isError":false}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{}`, string(m.(*ToolResultMessage).Content[0].(ToolCall).Arguments))

	for _, bad := range []string{
		`{"role":"user","content":[{"type":"text","text":"a"}]`, // cut
		`{"role":"user","content":[{"type":"text","text":"a"}]} x`,
		`{"role":"user","content":42}`,
		`{"role":"user","content":[{"type":"video"}]}`,
		`{"role":"weird",`,                   // kept raw, so it must be JSON
		`{"role":7,"content":"x"}`,           // a role is a string
		`{"content":"x"}`,                    // no role
		`[{"role":"user"}]`,                  // not an object
		`{"role":"user","timestamp":"soon"}`, // wrong type
	} {
		_, err := UnmarshalMessage([]byte(bad))
		assert.Error(t, err, bad)
	}

	m, err = UnmarshalMessage([]byte(` {"role":"weird","x":[1,2]} `))
	require.NoError(t, err)
	raw, err := json.Marshal(m)
	require.NoError(t, err)
	assert.JSONEq(t, `{"role":"weird","x":[1,2]}`, string(raw), "an unknown role is kept as written")
}
