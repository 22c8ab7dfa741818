package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/rpc"
)

// The tests in this package's *rpc*_test.go files start the real gopi
// binary and talk to it over stdin/stdout, like any pi RPC client.
//
// A test that starts its own gopis in folders of its own (newWorld,
// t.TempDir) calls t.Parallel first; variables for gopi go in the child's
// environment (startEnv, runBinaryEnv, launchArgv's env), never through
// t.Setenv, which rules out t.Parallel. A test stays serial when it times
// something, loads the whole machine (busyCPUs), needs t.Setenv or
// t.Chdir (main_test.go, resolve_test.go), looks for a process by a
// name another test could run too, or meets a fault of gopi's that load
// brings out (each says which): serial tests run alone, before the
// parallel ones start.

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// gopiBinary builds cmd/gopi once per test run, with the race detector
// when the tests run with it, so a data race in the binary fails them
// (benchmarks run without it).
func gopiBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gopi-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "gopi")
		build := []string{"build", "-o", buildPath}
		if raceEnabled {
			build = append(build, "-race")
		}
		out, err := exec.Command("go", append(build, ".")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return buildPath
}

// binaryEnv is the environment every gopi the tests start gets on top of
// theirs: a race-built binary stops at its first data race (exit status
// 66, the report on stderr), which raceFree turns into a test failure.
// The race runtime's default is to sleep a second before a successful
// exit, for races of goroutines still running; gopi waits for the
// goroutines it owns before it exits, so the sleep only made each of the
// hundreds of runs here a second longer (atexit_sleep_ms=0).
//
// XDG_CACHE_HOME keeps what gopi caches (codemode's compiled QuickJS) in
// a folder of this test run, shared by its gopis, not in the user's.
func binaryEnv() []string {
	return append(os.Environ(), "GORACE=halt_on_error=1 atexit_sleep_ms=0", "XDG_CACHE_HOME="+testCacheDir())
}

// testCacheDir is this test run's cache folder, made once (and removed by
// TestMain when it was).
var testCacheDir = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "gopi-test-cache-")
	if err != nil {
		return filepath.Join(os.TempDir(), "gopi-test-cache")
	}
	testCacheMade.Store(true)
	return dir
})

// testCacheMade: testCacheDir made its folder.
var testCacheMade atomic.Bool

// raceFree fails the test when a race-built gopi reported a data race.
func raceFree(t *testing.T, stderr string) {
	t.Helper()
	if strings.Contains(stderr, "WARNING: DATA RACE") {
		t.Errorf("gopi reported a data race:\n%s", stderr)
	}
}

// waitLimit bounds every wait for the binary; a hang fails the test with
// the transcript instead of stalling the suite.
const waitLimit = 20 * time.Second

// record is one line gopi wrote, decoded.
type record map[string]any

func (r record) str(k string) string { s, _ := r[k].(string); return s }
func (r record) obj(k string) record { m, _ := r[k].(map[string]any); return m }
func (r record) is(typ string) bool  { return r.str("type") == typ }

// proc is a running gopi, read one record at a time.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.Closer // the test's end of gopi's stdout
	lines  chan record
	stderr *syncBuffer
	done   chan struct{}

	mu  sync.Mutex
	log []string // every line read, for failure messages
}

type syncBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	grew chan struct{} // closed by the next write; nil until someone waits
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grew != nil {
		close(s.grew)
		s.grew = nil
	}
	return s.b.Write(p)
}

// await waits until the buffer holds text, for at most limit. What gopi
// wrote to stderr before a response may still be in the pipe when the
// test reads the response from stdout: a check of stderr made while gopi
// runs awaits the text first.
func (s *syncBuffer) await(text string, limit time.Duration) {
	timeout := time.After(limit)
	for {
		s.mu.Lock()
		if strings.Contains(s.b.String(), text) {
			s.mu.Unlock()
			return
		}
		if s.grew == nil {
			s.grew = make(chan struct{})
		}
		grew := s.grew
		s.mu.Unlock()
		select {
		case <-grew:
		case <-timeout:
			return
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// world is the environment a test runs gopi in: a cwd, an agent dir whose
// models.json points at a scripted model server.
type world struct {
	t        *testing.T
	cwd      string
	agentDir string
	srv      *llmtest.Server
}

// newWorld declares provider "scripted" with two Anthropic-Messages models
// served by srv: scripted-1 (reasoning) and scripted-2 (no reasoning).
func newWorld(t *testing.T, turns ...llmtest.Turn) *world {
	t.Helper()
	w := &world{t: t, cwd: t.TempDir(), agentDir: t.TempDir(), srv: llmtest.New(t, turns...)}
	model := func(id string, reasoning bool) map[string]any {
		return map[string]any{
			"id": id, "name": "Scripted " + id, "reasoning": reasoning, "input": []string{"text", "image"},
			"contextWindow": 100000, "maxTokens": 8000,
			"cost": map[string]any{"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
		}
	}
	cfg := map[string]any{"providers": map[string]any{
		"scripted": map[string]any{
			"baseUrl": w.srv.AnthropicURL(), "api": "anthropic-messages", "apiKey": "test-key",
			"models": []any{model("scripted-1", true), model("scripted-2", false)},
		},
	}}
	w.writeJSON(filepath.Join(w.agentDir, "models.json"), cfg)
	return w
}

// trustProject saves w.cwd as trusted in the agent dir's trust.json (pi
// 1.5's saved project-trust decision), so the project's own .pi settings
// and resources load.
func (w *world) trustProject() {
	w.t.Helper()
	dir, err := filepath.EvalSymlinks(w.cwd)
	require.NoError(w.t, err)
	w.writeJSON(filepath.Join(w.agentDir, "trust.json"), map[string]any{dir: true})
}

func (w *world) writeJSON(path string, v any) {
	w.t.Helper()
	b, err := json.Marshal(v)
	require.NoError(w.t, err)
	require.NoError(w.t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(w.t, os.WriteFile(path, b, 0o644))
}

// start runs gopi --mode rpc with the scripted model and extra args.
func (w *world) start(extra ...string) *proc {
	w.t.Helper()
	args := append([]string{"--mode", "rpc", "--model", "scripted/scripted-1"}, extra...)
	return startProc(w.t, w.cwd, w.agentDir, args...)
}

// startEnv is start with extra environment on top of the tests' (a
// variable one test needs: t.Setenv would rule out t.Parallel).
func (w *world) startEnv(env []string, extra ...string) *proc {
	w.t.Helper()
	args := append([]string{gopiBinary(w.t), "--mode", "rpc", "--model", "scripted/scripted-1"}, extra...)
	return launchArgv(w.t, w.cwd, w.agentDir, rpc.FramingNewline, env, args...)
}

func startProc(t *testing.T, cwd, agentDir string, args ...string) *proc {
	t.Helper()
	return launch(t, cwd, agentDir, rpc.FramingNewline, args...)
}

// launch starts gopi with args and reads what it writes as records in the
// given framing.
func launch(t *testing.T, cwd, agentDir string, framing rpc.Framing, args ...string) *proc {
	t.Helper()
	return launchArgv(t, cwd, agentDir, framing, nil, append([]string{gopiBinary(t)}, args...)...)
}

// launchArgv starts any pi-compatible agent (gopi, or pi itself when a
// transcript is recorded) with extra environment on top of the tests'.
func launchArgv(t *testing.T, cwd, agentDir string, framing rpc.Framing, env []string, argv ...string) *proc {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = cwd
	cmd.Env = append(append(binaryEnv(),
		"PI_CODING_AGENT_DIR="+agentDir,
		// Real keys on the developer's machine must not leak into tests.
		"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "GEMINI_API_KEY=",
		"TMPDIR="+t.TempDir(),
	), env...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &proc{t: t, cmd: cmd, stdin: stdin, stdout: stdout, lines: make(chan record, 4096), stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	require.NoError(t, cmd.Start())
	// 256 MiB: room for the 20 MB image prompt's echo and more.
	var in rpc.RecordReader = rpc.NewLineReader(stdout, 256<<20)
	if framing == rpc.FramingHeader {
		in = rpc.NewHeaderReader(stdout, 256<<20)
	}
	go func() {
		defer close(p.lines)
		for {
			rec, err := in.Next()
			if err != nil {
				return
			}
			line := string(rec)
			p.mu.Lock()
			p.log = append(p.log, line)
			p.mu.Unlock()
			var r record
			if err := json.Unmarshal(rec, &r); err != nil {
				r = record{"!invalid": line}
			}
			p.lines <- r
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(waitLimit):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		raceFree(t, p.stderr.String())
	})
	return p
}

func (p *proc) transcript() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	for _, l := range p.log {
		if len(l) > 400 {
			l = l[:400] + "…"
		}
		b.WriteString(l + "\n")
	}
	return b.String() + "--- stderr ---\n" + p.stderr.String()
}

// send writes one command.
func (p *proc) send(cmd map[string]any) {
	p.t.Helper()
	b, err := json.Marshal(cmd)
	require.NoError(p.t, err)
	p.sendRaw(string(b))
}

func (p *proc) sendRaw(line string) {
	p.t.Helper()
	_, err := io.WriteString(p.stdin, line+"\n")
	require.NoError(p.t, err)
}

// next returns the next record.
func (p *proc) next() record {
	p.t.Helper()
	select {
	case r, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("gopi closed stdout\n%s", p.transcript())
		}
		require.Nil(p.t, r["!invalid"], "gopi wrote a record that is not JSON")
		return r
	case <-time.After(waitLimit):
		p.t.Fatalf("timed out waiting for gopi\n%s", p.transcript())
	}
	return nil
}

// until reads records up to and including the first that matches, and
// returns all of them.
func (p *proc) until(match func(record) bool) []record {
	p.t.Helper()
	var seen []record
	for {
		r := p.next()
		seen = append(seen, r)
		if match(r) {
			return seen
		}
	}
}

// response waits for the response to command id.
func (p *proc) response(id string) record {
	p.t.Helper()
	seen := p.until(func(r record) bool { return r.is("response") && r["id"] == id })
	return seen[len(seen)-1]
}

// call sends a command with an id and returns its response.
func (p *proc) call(id string, cmd map[string]any) record {
	p.t.Helper()
	cmd["id"] = id
	p.send(cmd)
	return p.response(id)
}

// ok is call that requires success and returns data.
func (p *proc) ok(id string, cmd map[string]any) any {
	p.t.Helper()
	r := p.call(id, cmd)
	require.Equal(p.t, true, r["success"], "command %v failed: %v\n%s", cmd["type"], r["error"], p.transcript())
	return r["data"]
}

// idle waits for agent_end.
func (p *proc) idle() []record {
	p.t.Helper()
	return p.until(func(r record) bool { return r.is("agent_end") })
}

// exit closes stdin and waits for the process; it returns the exit code.
func (p *proc) exit() int {
	p.t.Helper()
	_ = p.stdin.Close()
	return p.wait()
}

func (p *proc) wait() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(waitLimit):
		p.t.Fatalf("gopi did not exit\n%s", p.transcript())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *proc) signal(s syscall.Signal) {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(s))
}

const pollEvery = 20 * time.Millisecond

// processRunning reports whether any process's command line contains s.
func processRunning(s string) bool {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			return true
		}
	}
	return false
}

// types lists the "type" of each record.
func types(rs []record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.str("type")
	}
	return out
}

// TestBinaryBuiltWithRace checks that under -race the binary the tests
// drive carries the race detector too, so races in it fail the suite.
func TestBinaryBuiltWithRace(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "version", "-m", gopiBinary(t)).Output()
	require.NoError(t, err)
	built := strings.Contains(string(out), "-race=true")
	require.Equal(t, raceEnabled, built, "the test binary's -race and the gopi binary's differ:\n%s", out)
}

// mustJSON encodes v, failing the test if it cannot.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
