// Command release makes gopi's release files in one folder, offline: for
// each platform an archive with the binary, the README and the licence
// (.tar.gz, .zip for Windows), a CycloneDX SBOM of the binary, the npm
// packages (the launcher "gopi" and one package per platform carrying
// the binary), the VS Code extension's platform packages, install.sh, the
// ACP registry entry with the archives' URLs and checksums, and SHA256SUMS
// over all of it. `make release` runs it; docs/release.md says what each
// file is for and how a release is published.
//
//	go run ./cmd/release [-out dist] [-version 0.1.0] [-targets linux/amd64,...] [-vsix=false]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// config is one run's settings.
type config struct {
	repo    string // the repository's root
	out     string
	meta    meta
	targets []target
	vsix    bool
	baseURL string // where the archives will be downloaded from
	log     io.Writer
}

// meta is what the binaries are stamped with.
type meta struct {
	Version string // semver, no leading v
	Commit  string
	Date    string // the commit's time, RFC 3339 UTC: the same input gives the same files
}

func run(ctx context.Context, argv []string, log io.Writer) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(log)
	out := fs.String("out", "dist", "the folder to write (emptied first)")
	version := fs.String("version", "", "the release's version (default: from git describe; 0.0.0-dev.g<commit> between tags)")
	targets := fs.String("targets", strings.Join(allTargetNames(), ","), "GOOS/GOARCH pairs, comma-separated; \"host\" is this machine's")
	vsix := fs.Bool("vsix", true, "also package the VS Code extension for the targets it supports (needs Node and npm)")
	baseURL := fs.String("base-url", "", "where the release's files are downloaded from (default: the GitHub release of the version)")
	if err := fs.Parse(argv); err != nil {
		return err
	}
	repo, err := repoRoot()
	if err != nil {
		return err
	}
	m, err := readMeta(ctx, repo, *version)
	if err != nil {
		return err
	}
	ts, err := parseTargets(*targets)
	if err != nil {
		return err
	}
	cfg := config{repo: repo, out: *out, meta: m, targets: ts, vsix: *vsix, baseURL: *baseURL, log: log}
	if cfg.baseURL == "" {
		cfg.baseURL = "https://github.com/gopi-dev/gopi/releases/download/v" + m.Version
	}
	if !filepath.IsAbs(cfg.out) {
		cfg.out = filepath.Join(repo, cfg.out)
	}
	return release(ctx, cfg)
}

// release writes every file of cfg into cfg.out.
func release(ctx context.Context, cfg config) error {
	start := time.Now()
	if err := os.RemoveAll(cfg.out); err != nil {
		return fmt.Errorf("emptying %s: %w", cfg.out, err)
	}
	build := filepath.Join(cfg.out, ".build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", build, err)
	}
	docs, err := readDocs(cfg.repo)
	if err != nil {
		return err
	}
	var archives []archive
	bins := map[target]string{}
	for _, t := range cfg.targets {
		bin := filepath.Join(build, t.goos+"-"+t.goarch, "gopi"+t.exe())
		if err := buildGopi(ctx, cfg.repo, t, cfg.meta, bin); err != nil {
			return err
		}
		bins[t] = bin
		a, err := writeArchive(cfg.out, t, cfg.meta, bin, docs)
		if err != nil {
			return err
		}
		archives = append(archives, a)
		if err := writeSBOM(cfg.out, t, cfg.meta, bin); err != nil {
			return err
		}
		fmt.Fprintf(cfg.log, "release: %s (%s)\n", a.name, mib(a.binSize))
	}
	if err := writeNPM(filepath.Join(cfg.out, "npm"), cfg.meta, bins, docs); err != nil {
		return err
	}
	if cfg.vsix {
		if err := packageVSIX(ctx, cfg.repo, filepath.Join(cfg.out, "vscode"), bins); err != nil {
			return err
		}
	}
	if err := copyFile(filepath.Join(cfg.repo, "install.sh"), filepath.Join(cfg.out, "install.sh"), 0o755); err != nil {
		return err
	}
	if err := writeRegistry(cfg.repo, filepath.Join(cfg.out, "acp-registry", "gopi"), cfg.meta, cfg.baseURL, archives); err != nil {
		return err
	}
	if err := os.RemoveAll(build); err != nil {
		return fmt.Errorf("removing %s: %w", build, err)
	}
	if err := writeChecksums(cfg.out); err != nil {
		return err
	}
	fmt.Fprintf(cfg.log, "release: gopi %s (%s) in %s, %s\n", cfg.meta.Version, cfg.meta.Commit, cfg.out, time.Since(start).Round(time.Second))
	return nil
}

// buildGopi cross-compiles cmd/gopi for t as releases are built: no cgo,
// no local paths, no symbol table or DWARF, version, commit and date
// stamped in.
func buildGopi(ctx context.Context, repo string, t target, m meta, bin string) error {
	ldflags := fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s -X main.date=%s", m.Version, m.Commit, m.Date)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", releaseTags, "-ldflags", ldflags, "-o", bin, "./cmd/gopi")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.goos, "GOARCH="+t.goarch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building gopi for %s: %w\n%s", t, err, out)
	}
	return nil
}

// releaseTags are the build tags of a release. grpcnotrace leaves out
// golang.org/x/net/trace, which gRPC (brought in by the Google SDK's auth
// library, never used by gopi to dial) would otherwise link and initialise.
const releaseTags = "grpcnotrace"

// repoRoot is the module root above the working directory.
func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run it inside the gopi repository")
	}
	return filepath.Dir(mod), nil
}

var semverTag = regexp.MustCompile(`^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$`)

// readMeta reads the commit and its date from git, and the version from
// the flag, else from the tag at HEAD, else as a development version of
// the commit. A work tree with changes is marked in commit and version.
func readMeta(ctx context.Context, repo, version string) (meta, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = repo
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	commit, err := git("rev-parse", "HEAD")
	if err != nil {
		return meta{}, fmt.Errorf("reading the commit (a release is made from a git checkout): %w", err)
	}
	unix, err := git("log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return meta{}, fmt.Errorf("reading the commit's date: %w", err)
	}
	var secs int64
	if _, err := fmt.Sscan(unix, &secs); err != nil {
		return meta{}, fmt.Errorf("reading the commit's date %q: %w", unix, err)
	}
	dirty := false
	if status, err := git("status", "--porcelain", "--untracked-files=no"); err == nil && status != "" {
		dirty = true
	}
	if version == "" {
		if tag, err := git("describe", "--tags", "--exact-match", "HEAD"); err == nil && semverTag.MatchString(tag) {
			version = semverTag.FindStringSubmatch(tag)[1]
		} else {
			version = "0.0.0-dev.g" + commit[:12]
		}
		if dirty {
			version += ".dirty"
		}
	}
	m := semverTag.FindStringSubmatch(version)
	if m == nil {
		return meta{}, fmt.Errorf("version %q is not a semantic version such as 0.1.0 (npm needs one)", version)
	}
	if dirty {
		commit += "-dirty"
	}
	return meta{Version: m[1], Commit: commit, Date: time.Unix(secs, 0).UTC().Format(time.RFC3339)}, nil
}

// mib is a size in MiB for the log.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// hostTarget is this machine's platform.
func hostTarget() target { return target{runtime.GOOS, runtime.GOARCH} }
