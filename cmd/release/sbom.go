package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// writeSBOM writes gopi-<version>-<goos>-<goarch>.cdx.json, a CycloneDX
// 1.6 SBOM of the binary: the Go modules linked into it and the Go
// release that built it, read from the build information the toolchain
// embeds (what `go version -m` prints), so it lists what is in the file,
// not what go.mod names.
func writeSBOM(out string, t target, m meta, bin string) error {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("reading the build information of %s: %w", bin, err)
	}
	type property struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	type component struct {
		Type       string     `json:"type"`
		BOMRef     string     `json:"bom-ref"`
		Name       string     `json:"name"`
		Version    string     `json:"version"`
		PURL       string     `json:"purl"`
		Properties []property `json:"properties,omitempty"`
	}
	mod := func(path, version string) component {
		purl := "pkg:golang/" + path + "@" + version
		return component{Type: "library", BOMRef: purl, Name: path, Version: version, PURL: purl}
	}
	self := mod(info.Main.Path, "v"+m.Version)
	self.Type = "application"
	self.Properties = []property{{"gopi:commit", m.Commit}, {"gopi:platform", t.String()}}
	for _, s := range info.Settings {
		if s.Key == "-tags" || s.Key == "CGO_ENABLED" || s.Key == "-trimpath" {
			self.Properties = append(self.Properties, property{"go:build:" + s.Key, s.Value})
		}
	}
	goVersion := strings.TrimPrefix(info.GoVersion, "go")
	components := []component{mod("stdlib", "v"+goVersion)}
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		components = append(components, mod(d.Path, d.Version))
	}
	// A name-based (version 5 style) UUID: the same release gives the same serial.
	sum := sha256.Sum256([]byte(m.Commit + t.String() + m.Version))
	h := []byte(hex.EncodeToString(sum[:16]))
	h[12], h[16] = '5', '8'
	serial := fmt.Sprintf("urn:uuid:%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
	bom := map[string]any{
		"bomFormat":    "CycloneDX",
		"specVersion":  "1.6",
		"serialNumber": serial,
		"version":      1,
		"metadata": map[string]any{
			"timestamp": m.Date,
			"tools":     map[string]any{"components": []component{{Type: "application", BOMRef: "gopi-release", Name: "gopi cmd/release", Version: "v" + m.Version, PURL: "pkg:golang/github.com/gopi-dev/gopi/cmd/release@v" + m.Version}}},
			"component": self,
		},
		"components": components,
	}
	data, err := json.MarshalIndent(bom, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the SBOM: %w", err)
	}
	name := fmt.Sprintf("gopi-%s-%s-%s.cdx.json", m.Version, t.goos, t.goarch)
	if err := os.WriteFile(filepath.Join(out, name), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}
