package homedir

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExpand(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for in, want := range map[string]string{
		"~":           home,
		"~/bin/sh":    filepath.Join(home, "bin/sh"),
		"~user/x":     "~user/x",
		"/usr/bin/sh": "/usr/bin/sh",
		"rel/~/x":     "rel/~/x",
		"":            "",
	} {
		assert.Equal(t, want, Expand(in), in)
	}
}
