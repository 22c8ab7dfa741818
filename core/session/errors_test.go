package session

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// The texts clients read when a session call is refused stay as they were.
func TestSessionErrorTexts(t *testing.T) {
	s := InMemory(t.TempDir())
	_, err := s.AppendMessage(nil)
	assert.EqualError(t, err, "append message: nil message")
	assert.ErrorIs(t, err, errNilMessage)

	_, err = NewContextReplacement(json.RawMessage(`12`))
	assert.EqualError(t, err, "a context edit's replacement must be null or hold string or array content")
	assert.ErrorIs(t, err, ErrBadReplacement)

	_, err = s.AppendContextEdit("nowhere", nil)
	assert.EqualError(t, err, "entry nowhere is not on the active branch")
	assert.ErrorIs(t, err, ErrOffBranch)

	id, err := s.AppendMessage(llm.UserText("hi"))
	require.NoError(t, err)
	_, _, err = s.PreviewContext([]Entry{NewMessageEntry(Meta{}, llm.UserText("x"))})
	assert.EqualError(t, err, "a message entry cannot be previewed")
	assert.ErrorIs(t, err, ErrNotPreviewable)
	_, err = s.AppendContextEdit(id, nil)
	assert.NoError(t, err)

	assert.EqualError(t, entryHead{Type: EntrySession}.notEntry(), "second session header")
	assert.EqualError(t, entryHead{Type: EntryMessage}.notEntry(), "entry without an id")
}
