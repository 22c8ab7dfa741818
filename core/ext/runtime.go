package ext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Runtime is what the Node host runs on: a Node binary and pi's published
// package, whose extension loader and runner the host uses.
type Runtime struct {
	Node        string
	NodeVersion string // "v22.19.0"
	PiPackage   string // the directory of @earendil-works/pi-coding-agent
	PiVersion   string
}

// RuntimeOptions say where to look for a [Runtime].
type RuntimeOptions struct {
	// Node and PiPackage are explicit choices (settings.json's
	// extensionHost); empty means search.
	Node      string
	PiPackage string
	AgentDir  string
	Getenv    func(string) string
}

// piPackageName is the npm package the host loads extensions with.
const piPackageName = "@earendil-works/pi-coding-agent"

// InstallDir is where `gopi extensions install` puts the host's Node
// dependencies.
func InstallDir(agentDir string) string { return filepath.Join(agentDir, "extension-host") }

// NodePackage is the npm package holding a Node binary for this platform.
func NodePackage() string {
	arch := runtime.GOARCH
	if arch == "amd64" {
		arch = "x64"
	}
	return "node-" + runtime.GOOS + "-" + arch
}

// FindRuntime picks the Node binary and pi package, in this order: the
// GOPI_NODE and GOPI_PI_PACKAGE environment variables, settings, what
// `gopi extensions install` put in the agent dir, then an installed pi (the
// `pi` command on PATH) and the `node` on PATH. The Node must be as new as
// the pi package's "engines" asks.
func FindRuntime(ctx context.Context, o RuntimeOptions) (Runtime, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	var rt Runtime
	pkg, tried := findPiPackage(o)
	if pkg == "" {
		return rt, fmt.Errorf("extensions need pi's npm package %s; none found (looked in %s). Run `gopi extensions install`, or set GOPI_PI_PACKAGE to its directory",
			piPackageName, strings.Join(tried, ", "))
	}
	rt.PiPackage = pkg
	manifest, err := readManifest(pkg)
	if err != nil {
		return rt, err
	}
	rt.PiVersion = manifest.Version
	need := strings.TrimPrefix(strings.TrimSpace(manifest.Engines.Node), ">=")
	if need == "" {
		need = "20.0.0"
	}
	var found []string
	for _, cand := range nodeCandidates(o) {
		v, err := nodeVersion(ctx, cand)
		if err != nil {
			continue
		}
		if versionAtLeast(strings.TrimPrefix(v, "v"), need) {
			rt.Node, rt.NodeVersion = cand, v
			return rt, nil
		}
		found = append(found, fmt.Sprintf("%s is %s", cand, v))
	}
	msg := fmt.Sprintf("extensions need Node %s or newer (pi %s's requirement)", need, rt.PiVersion)
	if len(found) == 0 {
		msg += "; no node was found"
	} else {
		msg += "; " + strings.Join(found, ", ")
	}
	return rt, errors.New(msg + ". Install it, set GOPI_NODE to one, or run `gopi extensions install`")
}

type manifest struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Engines struct {
		Node string `json:"node"`
	} `json:"engines"`
}

func readManifest(dir string) (manifest, error) {
	var m manifest
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return m, fmt.Errorf("reading pi's package: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("reading %s: %w", filepath.Join(dir, "package.json"), err)
	}
	return m, nil
}

func findPiPackage(o RuntimeOptions) (string, []string) {
	var cands []string
	if v := o.Getenv("GOPI_PI_PACKAGE"); v != "" {
		cands = append(cands, v)
	}
	if o.PiPackage != "" {
		cands = append(cands, o.PiPackage)
	}
	if o.AgentDir != "" {
		cands = append(cands, filepath.Join(InstallDir(o.AgentDir), "node_modules", filepath.FromSlash(piPackageName)))
	}
	// An installed pi: its command is a link to dist/cli.js in the package.
	if p, err := exec.LookPath("pi"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			cands = append(cands, filepath.Dir(filepath.Dir(real)))
		}
	}
	for _, c := range cands {
		if m, err := readManifest(c); err == nil && m.Name == piPackageName {
			abs, err := filepath.Abs(c)
			if err == nil {
				return abs, cands
			}
		}
	}
	return "", cands
}

func nodeCandidates(o RuntimeOptions) []string {
	var out []string
	if v := o.Getenv("GOPI_NODE"); v != "" {
		out = append(out, v)
	}
	if o.Node != "" {
		out = append(out, o.Node)
	}
	if o.AgentDir != "" {
		out = append(out, filepath.Join(InstallDir(o.AgentDir), "node_modules", NodePackage(), "bin", "node"))
	}
	if p, err := exec.LookPath("node"); err == nil {
		out = append(out, p)
	}
	return out
}

func nodeVersion(ctx context.Context, node string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// versionAtLeast compares dotted versions numerically.
func versionAtLeast(have, need string) bool {
	h, n := strings.Split(have, "."), strings.Split(need, ".")
	for i := range max(len(h), len(n)) {
		var a, b int
		if i < len(h) {
			a, _ = strconv.Atoi(strings.TrimFunc(h[i], func(r rune) bool { return r < '0' || r > '9' }))
		}
		if i < len(n) {
			b, _ = strconv.Atoi(strings.TrimFunc(n[i], func(r rune) bool { return r < '0' || r > '9' }))
		}
		if a != b {
			return a > b
		}
	}
	return true
}
