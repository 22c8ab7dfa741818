package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// writeRegistry writes the ACP registry entry of this release (agent.json
// and the icon, from docs/acp-registry/gopi) into out: the version, an
// npx distribution of the npm package, and a binary distribution with
// each archive's URL under baseURL and its SHA-256. The directory is what
// a pull request to the registry adds.
func writeRegistry(repo, out string, m meta, baseURL string, archives []archive) error {
	src := filepath.Join(repo, "docs", "acp-registry", "gopi")
	data, err := os.ReadFile(filepath.Join(src, "agent.json"))
	if err != nil {
		return fmt.Errorf("reading the registry entry: %w", err)
	}
	// The registry's fields, in the order its entries write them.
	var entry struct {
		ID           string         `json:"id"`
		Name         string         `json:"name"`
		Version      string         `json:"version"`
		Description  string         `json:"description"`
		Repository   string         `json:"repository,omitempty"`
		Website      string         `json:"website,omitempty"`
		Authors      []string       `json:"authors,omitempty"`
		License      string         `json:"license,omitempty"`
		LicenseURL   string         `json:"license_url,omitempty"`
		Distribution map[string]any `json:"distribution"`
	}
	if err := json.Unmarshal(data, &entry); err != nil {
		return fmt.Errorf("reading the registry entry: %w", err)
	}
	args := []string{"--mode", "acp"}
	binary := map[string]any{}
	for _, a := range archives {
		binary[a.target.registry()] = struct {
			Archive string   `json:"archive"`
			SHA256  string   `json:"sha256"`
			Cmd     string   `json:"cmd"`
			Args    []string `json:"args"`
		}{baseURL + "/" + a.name, a.sha256, "./gopi" + a.target.exe(), args}
	}
	entry.Version = m.Version
	entry.Distribution = map[string]any{
		"binary": binary,
		"npx": struct {
			Package string   `json:"package"`
			Args    []string `json:"args"`
		}{"gopi@" + m.Version, args},
	}
	out = filepath.Clean(out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", out, err)
	}
	enc, err := json.MarshalIndent(entry, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the registry entry: %w", err)
	}
	if err := os.WriteFile(filepath.Join(out, "agent.json"), append(enc, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the registry entry: %w", err)
	}
	return copyFile(filepath.Join(src, "icon.svg"), filepath.Join(out, "icon.svg"), 0o644)
}
