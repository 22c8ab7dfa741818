package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"debug/elf"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/internal/testenv"
)

// The tests make a real release for this machine's platform (what CI's
// `make test` builds: linux-amd64 there), without the VS Code packages
// (the editors' tests package those), and install it the three ways a
// user does, from loopback only.

const testVersion = "1.2.3-test.1"

var (
	distOnce sync.Once
	distTmp  string // the folder testDist made, removed by TestMain
	distDir  string
	distMeta meta
	distErr  error
)

// testDist makes the release once per test run.
func testDist(t *testing.T) (string, meta) {
	t.Helper()
	distOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gopi-dist-")
		if err != nil {
			distErr = err
			return
		}
		distTmp = dir
		repo, err := repoRoot()
		if err != nil {
			distErr = err
			return
		}
		m, err := readMeta(context.Background(), repo, testVersion)
		if err != nil {
			distErr = err
			return
		}
		distDir, distMeta = filepath.Join(dir, "dist"), m
		var log bytes.Buffer
		distErr = release(context.Background(), config{
			repo: repo, out: distDir, meta: m, targets: []target{hostTarget()},
			baseURL: "https://example.invalid/v" + m.Version, log: &log,
		})
	})
	require.NoError(t, distErr)
	return distDir, distMeta
}

// serve serves dir over HTTP on loopback for the test's duration.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

func hostArchive(m meta) string { return archiveName(hostTarget(), m.Version) }

// readSums reads SHA256SUMS into file -> hex digest.
func readSums(t *testing.T, dist string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	require.NoError(t, err)
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		require.True(t, ok, "line %q", line)
		sums[name] = sum
	}
	return sums
}

// checkVersion runs bin --version and --version --json and checks what
// the release stamped in.
func checkVersion(t *testing.T, bin string, m meta) {
	t.Helper()
	out, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.GreaterOrEqual(t, len(lines), 3, "%s", out)
	assert.Equal(t, "gopi "+m.Version, lines[0], "the first line is as gopi always printed it")
	assert.Equal(t, "commit "+m.Commit, lines[1])
	assert.Equal(t, "built "+m.Date, lines[2])

	out, err = exec.Command(bin, "--version", "--json").Output()
	require.NoError(t, err)
	var b buildInfo
	require.NoError(t, json.Unmarshal(out, &b), "%s", out)
	assert.Equal(t, buildInfo{Version: m.Version, Commit: m.Commit, Date: m.Date, Go: b.Go, Platform: hostTarget().String()}, b)
	assert.True(t, strings.HasPrefix(b.Go, "go1."), b.Go)
}

// buildInfo is what gopi --version --json prints.
type buildInfo struct {
	Version, Commit, Date, Go, Platform string
}

func TestReleaseFilesVerify(t *testing.T) {
	dist, m := testDist(t)
	sums := readSums(t, dist)
	name := hostArchive(m)
	for _, want := range []string{name, "install.sh", "acp-registry/gopi/agent.json", "acp-registry/gopi/icon.svg",
		"npm/" + npmTarballName(m.Version), strings.TrimSuffix(strings.TrimSuffix(name, ".tar.gz"), ".zip") + ".cdx.json"} {
		assert.Contains(t, sums, want, "SHA256SUMS lists %s", want)
	}
	// Every file is listed, and every listed file has its digest.
	var files int
	require.NoError(t, filepath.WalkDir(dist, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dist, path)
		if rel == "SHA256SUMS" {
			return nil
		}
		files++
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		sum := sha256.Sum256(data)
		assert.Equal(t, sums[filepath.ToSlash(rel)], hex.EncodeToString(sum[:]), rel)
		return nil
	}))
	assert.Equal(t, len(sums), files)

	// The archive holds the binary and the README at its top, the
	// binary is the release build.
	if hostTarget().goos == "windows" {
		t.Skip("the archive check reads .tar.gz")
	}
	entries := untar(t, filepath.Join(dist, name))
	assert.Contains(t, entries, "README.md")
	bin := filepath.Join(t.TempDir(), "gopi")
	require.NoError(t, os.WriteFile(bin, entries["gopi"], 0o755))
	checkVersion(t, bin, m)

	// Release builds: stripped, no cgo, trimmed paths, tagged.
	out, err := exec.Command("go", "version", "-m", bin).Output()
	require.NoError(t, err)
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath=true", "-tags=" + releaseTags} {
		assert.Contains(t, string(out), want)
	}
	if hostTarget().goos == "linux" {
		f, err := elf.Open(bin)
		require.NoError(t, err)
		defer f.Close()
		assert.Nil(t, f.Section(".symtab"), "stripped: no symbol table")
		assert.Nil(t, f.Section(".debug_info"), "stripped: no DWARF")
	}
	assert.LessOrEqual(t, len(entries["gopi"]), maxBinaryBytes,
		"the release binary grew past its budget (docs/performance.md, \"The release binary\"): %d bytes", len(entries["gopi"]))

	// The registry entry names the archive under the base URL, with its
	// checksum, and the npm package.
	var entry struct {
		Version      string
		Distribution struct {
			Binary map[string]struct{ Archive, SHA256, Cmd string }
			NPX    struct{ Package string } `json:"npx"`
		}
	}
	data, err := os.ReadFile(filepath.Join(dist, "acp-registry", "gopi", "agent.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &entry))
	assert.Equal(t, m.Version, entry.Version)
	got := entry.Distribution.Binary[hostTarget().registry()]
	assert.Equal(t, "https://example.invalid/v"+m.Version+"/"+name, got.Archive)
	assert.Equal(t, sums[name], got.SHA256)
	assert.Equal(t, "./gopi", got.Cmd)
	assert.Equal(t, "gopi@"+m.Version, entry.Distribution.NPX.Package)
}

// maxBinaryBytes is the release binary's size budget on linux/amd64:
// the goal issue 41 set (docs/performance.md, "The release binary").
const maxBinaryBytes = 45 << 20

// untar reads a .tar.gz into name -> content (regular files).
func untar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if hdr.Typeflag == tar.TypeReg {
			data, err := io.ReadAll(tr)
			require.NoError(t, err)
			files[hdr.Name] = data
		}
	}
	return files
}

// toolsPath is a PATH of the programs install.sh may use, without go.
func toolsPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"sh", "uname", "curl", "awk", "cut", "head", "tar", "gzip", "sha256sum", "mktemp", "mkdir", "cp", "chmod", "mv", "rm", "dirname", "cat", "tr", "sed"} {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		require.NoError(t, os.Symlink(p, filepath.Join(dir, name)))
	}
	return dir
}

// runInstall runs install.sh against baseURL into dir and returns its
// stderr and error.
func runInstall(t *testing.T, script, baseURL, dir string, extraEnv ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", script)
	cmd.Env = append([]string{"PATH=" + toolsPath(t), "HOME=" + t.TempDir(), "GOPI_BASE_URL=" + baseURL, "GOPI_INSTALL_DIR=" + dir}, extraEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	err := cmd.Run()
	return stderr.String(), err
}

func TestInstallScript(t *testing.T) {
	if hostTarget().goos == "windows" {
		t.Skip("install.sh is for Linux and macOS shells")
	}
	testenv.LookPath(t, "curl")
	dist, m := testDist(t)
	base := serve(t, http.FileServer(http.Dir(dist)))
	dir := filepath.Join(t.TempDir(), "bin")
	out, err := runInstall(t, filepath.Join(dist, "install.sh"), base, dir)
	require.NoError(t, err, out)
	assert.Contains(t, out, "installed gopi "+m.Version+" to "+filepath.Join(dir, "gopi"))
	assert.Contains(t, out, hostArchive(m)+" from "+base+", SHA-256 checked")
	assert.Contains(t, out, "is not on your PATH")
	checkVersion(t, filepath.Join(dir, "gopi"), m)

	// Installing again replaces it (a running gopi keeps its file).
	out, err = runInstall(t, filepath.Join(dist, "install.sh"), base, dir)
	require.NoError(t, err, out)
	checkVersion(t, filepath.Join(dir, "gopi"), m)
}

func TestInstallScriptRefusesATamperedArchive(t *testing.T) {
	if hostTarget().goos == "windows" {
		t.Skip("install.sh is for Linux and macOS shells")
	}
	testenv.LookPath(t, "curl")
	dist, m := testDist(t)
	// A mirror that serves a different archive under the same name.
	name := hostArchive(m)
	served := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.TrimPrefix(r.URL.Path, "/") == name {
			data, err := os.ReadFile(filepath.Join(dist, name))
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			data[len(data)/2] ^= 0xff
			_, _ = w.Write(data)
			return
		}
		http.FileServer(http.Dir(dist)).ServeHTTP(w, r)
	})
	base := serve(t, served)
	dir := filepath.Join(t.TempDir(), "bin")
	out, err := runInstall(t, filepath.Join(dist, "install.sh"), base, dir)
	require.Error(t, err, out)
	assert.Contains(t, out, name+" does not match its checksum")
	assert.Contains(t, out, "nothing installed")
	assert.NoFileExists(t, filepath.Join(dir, "gopi"))

	// A release without this platform's archive says so.
	empty := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(empty, "SHA256SUMS"), []byte(strings.Repeat("0", 64)+"  gopi-9.9.9-plan9-mips.tar.gz\n"), 0o644))
	out, err = runInstall(t, filepath.Join(dist, "install.sh"), serve(t, http.FileServer(http.Dir(empty))), dir)
	require.Error(t, err, out)
	assert.Contains(t, out, "lists no archive for "+hostTarget().goos+"-"+hostTarget().goarch)
	assert.NoFileExists(t, filepath.Join(dir, "gopi"))
}

// The Neovim plugin's lazy.nvim build step on a machine without Go:
// install.sh puts the release binary in the clone's bin/, where the
// plugin looks.
func TestNvimBuildStepWithoutGo(t *testing.T) {
	if hostTarget().goos == "windows" {
		t.Skip("the build step is a shell script")
	}
	testenv.LookPath(t, "curl")
	dist, m := testDist(t)
	repo, err := repoRoot()
	require.NoError(t, err)
	clone := t.TempDir()
	require.NoError(t, copyFile(filepath.Join(repo, "editors", "nvim", "build.sh"), filepath.Join(clone, "editors", "nvim", "build.sh"), 0o755))
	require.NoError(t, copyFile(filepath.Join(repo, "install.sh"), filepath.Join(clone, "install.sh"), 0o755))
	cmd := exec.Command("sh", filepath.Join(clone, "editors", "nvim", "build.sh"))
	cmd.Env = []string{"PATH=" + toolsPath(t), "HOME=" + t.TempDir(), "GOPI_BASE_URL=" + serve(t, http.FileServer(http.Dir(dist)))}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	checkVersion(t, filepath.Join(clone, "bin", "gopi"), m)
}

// npmRegistry serves the npm tarballs in dir as a registry does: the
// packument of "gopi" with every version's package.json and the tarballs.
func npmRegistry(t *testing.T, dir string) string {
	t.Helper()
	var mu sync.Mutex
	var base string
	packument := func() ([]byte, error) {
		versions := map[string]any{}
		tgzs, err := filepath.Glob(filepath.Join(dir, "*.tgz"))
		if err != nil {
			return nil, err
		}
		latest := ""
		for _, tgz := range tgzs {
			data, err := os.ReadFile(tgz)
			if err != nil {
				return nil, err
			}
			var manifest map[string]any
			files := untar(t, tgz)
			if err := json.Unmarshal(files["package/package.json"], &manifest); err != nil {
				return nil, err
			}
			sha512sum := sha512.Sum512(data)
			sha1sum := sha1.Sum(data)
			manifest["dist"] = map[string]any{
				"tarball":   base + "/gopi/-/" + filepath.Base(tgz),
				"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sha512sum[:]),
				"shasum":    hex.EncodeToString(sha1sum[:]),
			}
			v := manifest["version"].(string)
			versions[v] = manifest
			if _, ok := manifest["bin"]; ok {
				latest = v
			}
		}
		return json.Marshal(map[string]any{"name": "gopi", "dist-tags": map[string]string{"latest": latest}, "versions": versions})
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/gopi":
			mu.Lock()
			data, err := packument()
			mu.Unlock()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(data)
		case strings.HasPrefix(r.URL.Path, "/gopi/-/"):
			http.ServeFile(w, r, filepath.Join(dir, filepath.Base(r.URL.Path)))
		default:
			http.NotFound(w, r)
		}
	})
	base = serve(t, h)
	return base
}

// npmEnv is an npm configuration of the test's own: its cache, no user
// config, the loopback registry, nothing else reached.
func npmEnv(t *testing.T, registry string) []string {
	home := t.TempDir()
	return append(os.Environ(),
		"HOME="+home,
		"npm_config_userconfig="+filepath.Join(home, ".npmrc"),
		"npm_config_cache="+filepath.Join(home, "npm-cache"),
		"npm_config_registry="+registry+"/",
		"npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false",
		"npm_config_loglevel=error",
	)
}

func TestNPMPackageRunsGopi(t *testing.T) {
	testenv.LookPath(t, "npm")
	testenv.LookPath(t, "node")
	dist, m := testDist(t)
	registry := npmRegistry(t, filepath.Join(dist, "npm"))
	env := npmEnv(t, registry)

	// An empty folder, the package installed from the loopback registry
	// as `npm install gopi` installs it: npm picks the platform package by
	// os and cpu.
	dir := t.TempDir()
	install := exec.Command("npm", "install", "gopi@"+m.Version)
	install.Dir, install.Env = dir, env
	out, err := install.CombinedOutput()
	require.NoError(t, err, "%s", out)
	platform, cpu := hostTarget().node()
	assert.FileExists(t, filepath.Join(dir, "node_modules", "gopi-"+platform+"-"+cpu, "bin", "gopi"+hostTarget().exe()))

	// npx runs the launcher offline, which runs the binary.
	npx := exec.Command("npx", "--offline", "gopi", "--version")
	npx.Dir, npx.Env = dir, env
	out, err = npx.Output()
	require.NoError(t, err, "%s", out)
	assert.True(t, strings.HasPrefix(string(out), "gopi "+m.Version+"\ncommit "+m.Commit+"\n"), "%s", out)

	// The exit code is gopi's: 2 for a bad flag, with gopi's message.
	bad := exec.Command("npx", "--offline", "gopi", "--no-such-flag")
	bad.Dir, bad.Env = dir, env
	var stderr bytes.Buffer
	bad.Stderr = &stderr
	err = bad.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 2, exit.ExitCode())
	assert.Contains(t, stderr.String(), "gopi: unknown option: --no-such-flag")

	// stdin reaches gopi: pi's RPC mode answers on stdout and ends
	// with stdin.
	rpc := exec.Command("npx", "--offline", "gopi", "--mode", "rpc", "--no-session", "--offline")
	rpc.Dir, rpc.Env = dir, append(env, "PI_CODING_AGENT_DIR="+t.TempDir())
	rpc.Stdin = strings.NewReader(`{"id":"1","type":"get_state"}` + "\n")
	out, err = rpc.Output()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), `"id":"1"`)
	assert.Contains(t, string(out), `"command":"get_state"`)
}

// A client stops the agent it started with SIGTERM, sent to the process
// it started: the launcher. gopi gets it, shuts down, and the launcher
// exits as gopi did.
func TestNPMLauncherPassesSIGTERMOn(t *testing.T) {
	if hostTarget().goos == "windows" {
		t.Skip("signals")
	}
	testenv.LookPath(t, "npm")
	node := testenv.LookPath(t, "node")
	dist, m := testDist(t)
	env := npmEnv(t, npmRegistry(t, filepath.Join(dist, "npm")))
	dir := t.TempDir()
	install := exec.Command("npm", "install", "gopi@"+m.Version)
	install.Dir, install.Env = dir, env
	out, err := install.CombinedOutput()
	require.NoError(t, err, "%s", out)

	launcher := exec.Command(node, filepath.Join(dir, "node_modules", "gopi", "bin", "gopi.js"), "--mode", "rpc", "--no-session", "--offline")
	launcher.Env = append(env, "PI_CODING_AGENT_DIR="+t.TempDir())
	stdin, err := launcher.StdinPipe() // held open: only the signal can end gopi
	require.NoError(t, err)
	defer stdin.Close()
	stdout, err := launcher.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, launcher.Start())
	// gopi answers: it runs behind the launcher.
	_, err = io.WriteString(stdin, `{"id":"1","type":"get_state"}`+"\n")
	require.NoError(t, err)
	buf := make([]byte, 4096)
	n, err := stdout.Read(buf)
	require.NoError(t, err)
	require.Contains(t, string(buf[:n]), `"command":"get_state"`)

	require.NoError(t, launcher.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- launcher.Wait() }()
	select {
	case err := <-done:
		// gopi's orderly shutdown on SIGTERM exits 0; the launcher with it.
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		_ = launcher.Process.Kill()
		<-done
		t.Fatal("the launcher did not exit after SIGTERM: gopi did not get it")
	}
}

// TestMain removes the release the run made (testDist), once every test
// is done.
func TestMain(m *testing.M) {
	code := m.Run()
	if distTmp != "" {
		_ = os.RemoveAll(distTmp)
	}
	os.Exit(code)
}
