package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// vscodeTargets are the platforms the VS Code extension is packaged for
// (editors/vscode/package-vsix.sh), in VS Code's names.
var vscodeTargets = []string{"linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64", "win32-arm64"}

// packageVSIX packages the VS Code extension once per built target with
// that target's release binary inside (package-vsix.sh with
// GOPI_VSIX_BIN), and the universal package, into out.
func packageVSIX(ctx context.Context, repo, out string, bins map[target]string) error {
	dir := filepath.Join(repo, "editors", "vscode")
	prepare := exec.CommandContext(ctx, "sh", "-c",
		`{ [ -f node_modules/.package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error; } && node esbuild.mjs`)
	prepare.Dir = dir
	if b, err := prepare.CombinedOutput(); err != nil {
		return fmt.Errorf("building the VS Code extension (Node and npm are needed; -vsix=false leaves it out): %w\n%s", err, b)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", out, err)
	}
	for t, bin := range bins {
		platform, cpu := t.node()
		name := platform + "-" + cpu
		if !slices.Contains(vscodeTargets, name) {
			continue
		}
		cmd := exec.CommandContext(ctx, "./package-vsix.sh", name)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOPI_VSIX_BIN="+bin, "GOPI_VSIX_OUT="+out)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("packaging the VS Code extension for %s: %w\n%s", name, err, b)
		}
	}
	cmd := exec.CommandContext(ctx, "./package-vsix.sh", "universal")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPI_VSIX_OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("packaging the universal VS Code extension: %w\n%s", err, b)
	}
	return nil
}
