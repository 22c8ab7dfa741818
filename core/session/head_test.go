package session

import (
	"reflect"
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
	assert.True(t, h.HasID)
	assert.Equal(t, "a1", h.ID, "names match in any case")
	assert.Empty(t, h.ParentID)
	assert.Equal(t, "2026-01-01T00:00:00Z", h.Timestamp)
	assert.Equal(t, `{"role":"user","content":"hi"}`, string(h.Message))
	assert.Equal(t, 0, cap(h.Message)-len(h.Message), "appending to the message cannot overwrite the line")

	h, err = decodeHead([]byte(`{"type":"session","version":3,"id":"s","id":"t"}`))
	require.NoError(t, err)
	assert.Equal(t, "3", string(h.Version))
	assert.Equal(t, "t", h.ID, "the last of duplicate names wins")

	h, err = decodeHead([]byte(`{"t\u0079pe":"m\u0065ssage","id":null,"parentId":"p\"1","timestamp":"` + "\xff" + `"}`))
	require.NoError(t, err)
	assert.Equal(t, EntryMessage, h.Type, "escaped names and values are unquoted")
	assert.False(t, h.HasID, "a null id is no id")
	assert.Equal(t, `p"1`, h.ParentID)
	assert.Equal(t, "\uFFFD", h.Timestamp, "invalid UTF-8 becomes U+FFFD, as in encoding/json")

	for _, bad := range []string{
		`{"type":"message","id":"a"`,
		`{"type":"message","id":"a"} {}`,
		`{"type":"message","id":5}`,
		`{"type":["message"],"id":"a"}`,
		`{"type":"message","id":"a","message":{"role":"user"}`,
		`{"type":"message","id":"a","message":{"role":"user"}}}`,
		`{"type":"message","id":"a","message":{"role":"us\"}}`,
		`{"type":"message","id":"a","message":{"role":}} x`,
		`["type"]`,
	} {
		_, err := decodeHead([]byte(bad))
		assert.Error(t, err, bad)
	}

	// The message is found by its brackets, not validated: that waits for
	// its first use.
	h, err = decodeHead([]byte(`{"type":"message","id":"a","message":{"role":}}`))
	require.NoError(t, err)
	assert.Equal(t, `{"role":}`, string(h.Message))
	_, err = readHead([]byte(`{"type":"message","id":"a","message":{"role":}}`), false)
	assert.Error(t, err, "read as JSON, it is refused")
}

// The quick read of a last "message" member finds what a JSON read finds.
func TestLastMember(t *testing.T) {
	for _, line := range []string{
		`{"type":"message","id":"a","message":{"role":"user","content":"a \"}\" b \\"}}`,
		`{"type":"message","id":"a","message" : { "c" : [ {"t":"{["}, "\\\""] } } `,
		`{"type":"message","id":"a","message":{},"id":"b"}`,
		`{"type":"message","message":{"x":1},"message":{"y":2}}`,
		`{"message":[1],"id":"x"}`,
	} {
		fast, ferr := readHead([]byte(line), true)
		slow, serr := readHead([]byte(line), false)
		require.NoError(t, serr, line)
		require.NoError(t, ferr, line)
		assert.Equal(t, slow, fast, line)
	}
}

// For any line that is JSON, the quick read and the JSON read agree.
func FuzzDecodeHead(f *testing.F) {
	f.Add([]byte(`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x \\\" }"}}`))
	f.Add([]byte(`{"type":"session","version":3,"id":"s"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		slow, serr := readHead(data, false)
		if serr != nil {
			return
		}
		fast, ferr := readHead(data, true)
		if ferr != nil {
			t.Fatalf("the quick read refused a line the JSON read takes: %v\n%s", ferr, data)
		}
		if !reflect.DeepEqual(slow, fast) {
			t.Fatalf("quick %+v, JSON %+v\n%s", fast, slow, data)
		}
	})
}
