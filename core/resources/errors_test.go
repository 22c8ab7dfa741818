package resources

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSectionNameErrorText(t *testing.T) {
	err := CheckSectionName("preamble")
	assert.EqualError(t, err, `invalid system prompt section name: "preamble"`)
	assert.ErrorIs(t, err, ErrSectionName)
}
