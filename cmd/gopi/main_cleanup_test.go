package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes what the run built and cached for its tests (the gopi
// binary, the MCP test server, the codemode cache) once every test is
// done: each run makes its own, and leaving them filled the temporary
// directory by a hundred megabytes a run.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, p := range []string{buildPath, mcpServerPath} {
		if p != "" {
			_ = os.RemoveAll(filepath.Dir(p))
		}
	}
	if testCacheMade.Load() {
		_ = os.RemoveAll(testCacheDir())
	}
	os.Exit(code)
}
