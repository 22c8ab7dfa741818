// Command gentypes writes the types the editors share with gopi: the
// events, the commands' params and results and the extension UI requests
// of package core/api (with the core/agent and core/llm values they carry,
// and the details core/host adds to an approval question),
// as TypeScript for the VS Code extension and as LuaLS annotations for the
// Neovim plugin. `make generate` runs it; its test fails when the files
// checked in are not what it writes.
//
//	go run ./cmd/gentypes            # writes both files
//	go run ./cmd/gentypes -check     # exits 1 when either is stale
//
// It is our own, not tygo, for three reasons. The wire is not only struct
// fields: every event, message and content block gets its "type" or
// "role" from a MarshalJSON method, and an agent event writes a different
// object for each type; a generator that reads source alone cannot see
// that, so this one starts from the Go values themselves (reflection,
// which also follows encoding/json's rules for tags, omitempty and
// embedding), reads only enum constants and doc comments from the source
// (go/parser), and its test marshals a value of every object it describes
// to check the keys. It writes both languages from one model. And it needs
// no new module.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// The generated files, relative to the module root.
const (
	tsFile  = "editors/vscode/src/gen/protocol.ts"
	luaFile = "editors/nvim/lua/gopi/types.lua"
)

func main() {
	check := flag.Bool("check", false, "report stale files instead of writing them")
	flag.Parse()
	root, err := moduleRoot()
	if err != nil {
		fail(err)
	}
	files, err := generate(root)
	if err != nil {
		fail(err)
	}
	stale := false
	for _, f := range files {
		path := filepath.Join(root, f.path)
		if *check {
			old, _ := os.ReadFile(path)
			if !bytes.Equal(old, f.data) {
				fmt.Fprintf(os.Stderr, "gentypes: %s is stale: run make generate\n", f.path)
				stale = true
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fail(err)
		}
		if err := os.WriteFile(path, f.data, 0o644); err != nil {
			fail(err)
		}
	}
	if stale {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gentypes:", err)
	os.Exit(1)
}

type file struct {
	path string
	data []byte
}

// generate returns the contents of both files.
func generate(root string) ([]file, error) {
	m, err := build(root)
	if err != nil {
		return nil, err
	}
	return []file{
		{tsFile, emitTS(m)},
		{luaFile, emitLua(m)},
	}, nil
}

// moduleRoot is the nearest directory above the working directory that
// holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
