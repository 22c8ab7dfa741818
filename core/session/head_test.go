package session

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A line's head is read in one pass; it takes and refuses what
// encoding/json did, and the message it finds is the line's own bytes.
func TestDecodeHead(t *testing.T) {
	line := []byte(`{"type":"message","ID":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00Z","extra":{"x":[1,{"y":2}]},"message":{"role":"user","content":"hi"}}`)
	h, err := decodeHead(line)
	require.NoError(t, err)
	assert.Equal(t, EntryMessage, h.Type)
	require.NotNil(t, h.ID)
	assert.Equal(t, "a1", *h.ID, "names match in any case")
	assert.Nil(t, h.ParentID)
	assert.Equal(t, "2026-01-01T00:00:00Z", h.Timestamp)
	assert.Equal(t, `{"role":"user","content":"hi"}`, string(h.Message))
	assert.Equal(t, 0, cap(h.Message)-len(h.Message), "appending to the message cannot overwrite the line")

	h, err = decodeHead([]byte(`{"type":"session","version":3,"id":"s","id":"t"}`))
	require.NoError(t, err)
	assert.Equal(t, "3", string(h.Version))
	assert.Equal(t, "t", *h.ID, "the last of duplicate names wins")

	for _, bad := range []string{
		`{"type":"message","id":"a"`,
		`{"type":"message","id":"a"} {}`,
		`{"type":"message","id":5}`,
		`{"type":["message"],"id":"a"}`,
		`{"type":"message","id":"a","message":{"role":}}`,
		`["type"]`,
	} {
		_, err := decodeHead([]byte(bad))
		assert.Error(t, err, bad)
	}
}
