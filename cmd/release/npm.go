package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The npm packages follow @openai/codex's layout: the package "gopi" is a
// small launcher (npm/gopi.js) whose optional dependencies are the
// platform builds, published as versions of the same package
// ("gopi@0.1.0-linux-x64", each with its os and cpu) and installed under
// an alias ("gopi-linux-x64"). npm installs only the one that matches the
// machine, and only one package name has to be owned on the registry.

//go:embed npm/gopi.js
var launcher []byte

// npmMTime is the time npm itself writes into package tarballs, so ours
// are as reproducible as `npm pack`'s.
var npmMTime = time.Date(1985, 10, 26, 8, 15, 0, 0, time.UTC)

// packageJSON is the part of package.json the packages use.
type packageJSON struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Description          string            `json:"description"`
	License              string            `json:"license"`
	Homepage             string            `json:"homepage"`
	Repository           map[string]string `json:"repository"`
	Bin                  map[string]string `json:"bin,omitempty"`
	Engines              map[string]string `json:"engines,omitempty"`
	OS                   []string          `json:"os,omitempty"`
	CPU                  []string          `json:"cpu,omitempty"`
	OptionalDependencies map[string]string `json:"optionalDependencies,omitempty"`
	PreferUnplugged      bool              `json:"preferUnplugged,omitempty"`
}

// npmLicense matches editors/vscode/package.json: the repository declares
// no licence file yet.
const npmLicense = "SEE LICENSE IN README.md"

func basePackage(version string) packageJSON {
	return packageJSON{
		Name:        "gopi",
		Version:     version,
		Description: "A headless coding agent in Go: pi's RPC protocol, JSON-RPC 2.0 for editors and the Agent Client Protocol (gopi --mode acp)",
		License:     npmLicense,
		Homepage:    "https://github.com/gopi-dev/gopi#readme",
		Repository:  map[string]string{"type": "git", "url": "git+https://github.com/gopi-dev/gopi.git"},
	}
}

// npmTarballName is the file `npm pack` would name the package.
func npmTarballName(version string) string { return "gopi-" + version + ".tgz" }

// writeNPM writes the launcher package and one package per built target
// into out as tarballs (npm's format: everything under package/).
func writeNPM(out string, m meta, bins map[target]string, docs []doc) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", out, err)
	}
	readme := docs[0]
	main := basePackage(m.Version)
	main.Bin = map[string]string{"gopi": "bin/gopi.js"}
	main.Engines = map[string]string{"node": ">=16"}
	main.OptionalDependencies = map[string]string{}
	var ts []target
	for t := range bins {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b target) int {
		return slices.Index(allTargets, a) - slices.Index(allTargets, b)
	})
	for _, t := range ts {
		platform, cpu := t.node()
		v := m.Version + "-" + platform + "-" + cpu
		main.OptionalDependencies["gopi-"+platform+"-"+cpu] = "npm:gopi@" + v
		p := basePackage(v)
		p.Description = "gopi's binary for " + platform + "-" + cpu + ", installed by the gopi package"
		p.OS = []string{platform}
		p.CPU = []string{cpu}
		p.PreferUnplugged = true
		bin, err := os.ReadFile(bins[t])
		if err != nil {
			return fmt.Errorf("reading the binary for %s: %w", t, err)
		}
		if err := writeNPMPackage(out, p, append([]entry{{"bin/gopi" + t.exe(), 0o755, bin}}, docEntries(docs)...)); err != nil {
			return err
		}
	}
	return writeNPMPackage(out, main, []entry{{"bin/gopi.js", 0o755, launcher}, {readme.name, 0o644, readme.data}})
}

func docEntries(docs []doc) []entry {
	var es []entry
	for _, d := range docs {
		es = append(es, entry{d.name, 0o644, d.data})
	}
	return es
}

// writeNPMPackage writes p and files as out/<name>-<version>.tgz.
func writeNPMPackage(out string, p packageJSON, files []entry) error {
	manifest, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding package.json of %s@%s: %w", p.Name, p.Version, err)
	}
	entries := append([]entry{{"package.json", 0o644, append(manifest, '\n')}}, files...)
	data, err := tarGz(entries, "package/", npmMTime)
	if err != nil {
		return fmt.Errorf("packing %s@%s: %w", p.Name, p.Version, err)
	}
	name := filepath.Join(out, npmTarballName(p.Version))
	if err := os.WriteFile(name, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}
