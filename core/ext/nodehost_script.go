package ext

// This file owns the host's script: the embedded nodehost files, written
// once to a directory named after their hash.

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// hostFiles are the extension host's modules: host.mjs, which node
// runs, the modules it imports, and the one of method names (generated
// from protocol.go). All are written, and all make the hash.
//
//go:embed nodehost/*.mjs
var hostFiles embed.FS

// scriptPath writes the host's files to a directory named after their
// hash, once, and returns the script's path there.
func (n *NodeHost) scriptPath() (string, error) {
	base := n.ScriptDir
	if base == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		base = filepath.Join(cache, "gopi")
	}
	files, sum, err := hostScripts()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "extension-host-"+sum)
	script := filepath.Join(dir, "host.mjs")
	if sameFiles(dir, files) {
		return script, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("writing the extension host script: %w", err)
	}
	tmp, err := os.MkdirTemp(base, "extension-host-*.tmp")
	if err != nil {
		return "", fmt.Errorf("writing the extension host script: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return "", fmt.Errorf("writing the extension host script: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another gopi wrote it first, or a damaged copy is in the way.
		if sameFiles(dir, files) {
			return script, nil
		}
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("writing the extension host script: %w", err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			return "", fmt.Errorf("writing the extension host script: %w", err)
		}
	}
	return script, nil
}

// hostScripts are the embedded host files by name, and a short hash of
// them all.
func hostScripts() (map[string][]byte, string, error) {
	entries, err := hostFiles.ReadDir("nodehost")
	if err != nil {
		return nil, "", fmt.Errorf("reading the embedded extension host: %w", err)
	}
	files := map[string][]byte{}
	h := sha256.New()
	for _, e := range entries { // sorted by name
		b, err := hostFiles.ReadFile("nodehost/" + e.Name())
		if err != nil {
			return nil, "", fmt.Errorf("reading the embedded extension host: %w", err)
		}
		files[e.Name()] = b
		fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
		h.Write(b)
	}
	return files, hex.EncodeToString(h.Sum(nil)[:6]), nil
}

// sameFiles reports whether dir holds exactly files' contents.
func sameFiles(dir string, files map[string][]byte) bool {
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			return false
		}
	}
	return true
}
