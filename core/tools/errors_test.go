package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The texts users read when a tool selection is refused stay as they were.
func TestSelectionErrorTexts(t *testing.T) {
	err := CheckSelection([]string{"+ba*"})
	assert.EqualError(t, err, "+name and -name entries name one tool each, not a pattern: +ba*")
	assert.ErrorIs(t, err, ErrSelectionPattern)

	_, err = New("teleport", t.TempDir())
	assert.ErrorIs(t, err, ErrUnknownTool)
	assert.ErrorContains(t, err, `unknown tool "teleport" (have read, `)
}
