package ext

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The script's directory holds every module host.mjs imports, and a
// damaged copy of any of them is written again.
func TestScriptPathWritesEveryModule(t *testing.T) {
	n := &NodeHost{ScriptDir: t.TempDir()}
	script, err := n.scriptPath()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(script) != "host.mjs" || !strings.HasPrefix(filepath.Base(filepath.Dir(script)), "extension-host-") {
		t.Fatalf("script at %s", script)
	}
	entries, err := hostFiles.ReadDir("nodehost")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		want, _ := hostFiles.ReadFile("nodehost/" + e.Name())
		got, err := os.ReadFile(filepath.Join(filepath.Dir(script), e.Name()))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s is not written as embedded (%v)", e.Name(), err)
		}
	}
	if len(entries) < 3 {
		t.Errorf("only %d host files embedded", len(entries))
	}

	damaged := filepath.Join(filepath.Dir(script), entries[0].Name())
	if err := os.WriteFile(damaged, []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := n.scriptPath()
	if err != nil || again != script {
		t.Fatalf("second scriptPath: %s, %v", again, err)
	}
	if b, _ := os.ReadFile(damaged); string(b) == "damaged" {
		t.Errorf("%s was not written again", entries[0].Name())
	}
}
