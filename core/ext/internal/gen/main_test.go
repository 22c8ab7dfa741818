package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gopi-dev/gopi/core/ext"
)

// The module the host's modules import is what the protocol says: run go generate
// in core/ext after changing protocol.go.
func TestGeneratedMethodsAreCurrent(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(out)))
	if err != nil {
		t.Fatal(err)
	}
	if want := render(ext.Methods, ext.StateFields()); string(got) != string(want) {
		t.Errorf("core/ext/%s is not current: run `go generate ./core/ext`", out)
	}
}

func TestJSName(t *testing.T) {
	for in, want := range map[ext.Method]string{"ui/ask": "uiAsk", "toolCall": "toolCall", "ui": "ui", "getApiKey": "getApiKey"} {
		if got := jsName(in); got != want {
			t.Errorf("jsName(%q) = %q, want %q", in, got, want)
		}
	}
}
