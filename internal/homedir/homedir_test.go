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
		"~/":          home,
		"~/bin/sh":    filepath.Join(home, "bin", "sh"),
		"~user/x":     "~user/x",
		"~x":          "~x",
		"/usr/bin/sh": "/usr/bin/sh",
		"rel/~/x":     "rel/~/x",
		"":            "",
	} {
		assert.Equal(t, want, Expand(in), "Expand(%q)", in)
	}
}

// TestExpandWithoutHome: with no home directory known, paths come back
// as they are rather than rooted at "/".
func TestExpandWithoutHome(t *testing.T) {
	t.Setenv("HOME", "")
	assert.Equal(t, "~/bin/sh", Expand("~/bin/sh"))
}
