package envexpand

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "1", "TOKEN": "t0k", "_X9": "x"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		in, out string
		missing []string
	}{
		{"plain", "plain", nil},
		{"$A", "1", nil},
		{"${TOKEN}", "t0k", nil},
		{"Bearer ${TOKEN}!", "Bearer t0k!", nil},
		{"$A$_X9-$A", "1x-1", nil},
		{"$$A and $!cmd", "$A and !cmd", nil},
		{"cost $5", "cost $5", nil},
		{"${not a name}", "${not a name}", nil},
		{"${OPEN", "${OPEN", nil},
		{"trailing $", "trailing $", nil},
		{"$NOPE ${NOPE} $GONE", "  ", []string{"NOPE", "GONE"}},
	} {
		out, missing := Expand(tc.in, getenv)
		assert.Equal(t, tc.out, out, tc.in)
		assert.Equal(t, tc.missing, missing, tc.in)
	}
	assert.True(t, IsName("_A1"))
	assert.False(t, IsName("1A"))
	assert.False(t, IsName(""))
}
