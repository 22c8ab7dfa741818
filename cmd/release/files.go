package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// target is one platform a release is built for, in Go's names.
type target struct{ goos, goarch string }

func (t target) String() string { return t.goos + "/" + t.goarch }

// exe is the binary's suffix on t.
func (t target) exe() string {
	if t.goos == "windows" {
		return ".exe"
	}
	return ""
}

// node is t in Node's names (process.platform-process.arch), which the npm
// and VS Code packages use: linux-x64, win32-arm64.
func (t target) node() (platform, cpu string) {
	platform, cpu = t.goos, t.goarch
	if platform == "windows" {
		platform = "win32"
	}
	if cpu == "amd64" {
		cpu = "x64"
	}
	return platform, cpu
}

// registry is t in the ACP registry's names: linux-x86_64, darwin-aarch64.
func (t target) registry() string {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[t.goarch]
	return t.goos + "-" + arch
}

// allTargets are the platforms the editors gopi serves run on.
var allTargets = []target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

func allTargetNames() []string {
	var names []string
	for _, t := range allTargets {
		names = append(names, t.String())
	}
	return names
}

// parseTargets reads -targets: GOOS/GOARCH pairs of allTargets, or "host".
func parseTargets(s string) ([]target, error) {
	var ts []target
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if name == "host" {
			name = hostTarget().String()
		}
		i := slices.IndexFunc(allTargets, func(t target) bool { return t.String() == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown target %q (want one of %s, or host)", name, strings.Join(allTargetNames(), ", "))
		}
		if !slices.Contains(ts, allTargets[i]) {
			ts = append(ts, allTargets[i])
		}
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("no targets")
	}
	return ts, nil
}

// doc is a file shipped beside the binary.
type doc struct {
	name string
	data []byte
}

// readDocs reads what every archive and package carries beside the
// binary: the README, and the licence files the repository has.
func readDocs(repo string) ([]doc, error) {
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		return nil, fmt.Errorf("reading the README: %w", err)
	}
	docs := []doc{{"README.md", readme}}
	for _, name := range licenceFiles {
		data, err := os.ReadFile(filepath.Join(repo, name))
		if err == nil {
			docs = append(docs, doc{name, data})
		}
	}
	return docs, nil
}

// licenceFiles are the names a licence is looked for under. The
// repository has none yet: its packages say "SEE LICENSE IN README.md"
// (editors/vscode/package.json), and the archives carry the README.
var licenceFiles = []string{"LICENSE", "LICENSE.md", "LICENSE.txt", "COPYING", "NOTICE"}

// archive is one platform's archive as written.
type archive struct {
	target  target
	name    string
	sha256  string
	binSize int64
}

// archiveName is gopi-<version>-<goos>-<goarch>.tar.gz (.zip on Windows).
func archiveName(t target, version string) string {
	ext := ".tar.gz"
	if t.goos == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("gopi-%s-%s-%s%s", version, t.goos, t.goarch, ext)
}

// entry is one file of an archive or package.
type entry struct {
	name string
	mode fs.FileMode
	data []byte
}

// writeArchive packs bin and the docs at the archive's top, as the ACP
// registry and install.sh expect (`./gopi`).
func writeArchive(out string, t target, m meta, bin string, docs []doc) (archive, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return archive{}, fmt.Errorf("reading the binary: %w", err)
	}
	entries := []entry{{"gopi" + t.exe(), 0o755, data}}
	for _, d := range docs {
		entries = append(entries, entry{d.name, 0o644, d.data})
	}
	mtime, err := time.Parse(time.RFC3339, m.Date)
	if err != nil {
		return archive{}, fmt.Errorf("reading the date %q: %w", m.Date, err)
	}
	name := archiveName(t, m.Version)
	var packed []byte
	if t.goos == "windows" {
		packed, err = zipBytes(entries, mtime)
	} else {
		packed, err = tarGz(entries, "", mtime)
	}
	if err != nil {
		return archive{}, fmt.Errorf("packing %s: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(out, name), packed, 0o644); err != nil {
		return archive{}, fmt.Errorf("writing %s: %w", name, err)
	}
	sum := sha256.Sum256(packed)
	return archive{target: t, name: name, sha256: hex.EncodeToString(sum[:]), binSize: int64(len(data))}, nil
}

// tarGz packs entries under prefix with fixed owners and times, so the
// same input gives the same bytes.
func tarGz(entries []entry, prefix string, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	for _, e := range entries {
		name := prefix + e.name
		// Folders first, so every extractor creates them with a mode.
		for dir := filepath.Dir(name); dir != "." && !dirs[dir]; dir = filepath.Dir(dir) {
			dirs[dir] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
				return nil, err
			}
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(e.mode), Size: int64(len(e.data)), ModTime: mtime, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zipBytes packs entries with fixed times and Unix modes.
func zipBytes(entries []entry, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime}
		hdr.SetMode(e.mode)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// copyFile copies src to dst with mode.
func copyFile(src, dst string, mode fs.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("reading %s: %w", src, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(dst), err)
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	return nil
}

// writeChecksums writes SHA256SUMS: every file under out (but itself), as
// `sha256sum -c SHA256SUMS` reads it in out, sorted by path.
func writeChecksums(out string) error {
	var lines []string
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(out, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "SHA256SUMS" {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		lines = append(lines, hex.EncodeToString(h.Sum(nil))+"  "+rel)
		return nil
	})
	if err != nil {
		return fmt.Errorf("hashing %s: %w", out, err)
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[66:], b[66:]) })
	if err := os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing SHA256SUMS: %w", err)
	}
	return nil
}
