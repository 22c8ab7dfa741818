package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The ACP figures of docs/performance.md: the same streamed reply in the
// three dialects, end to end through the binary (bytes on stdout and time
// per 1,000 text deltas), the time from session/new to the first
// agent_message_chunk, and the memory each idle ACP session adds.
//
//	go test -run '^$' -bench 'Dialects|ACP' -benchtime 20x ./cmd/gopi

// bproc is gopi speaking one message per line, read and counted.
type bproc struct {
	b     *testing.B
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	read  int64 // bytes read from stdout
	id    int
}

func startBench(b *testing.B, args ...string) *bproc {
	b.Helper()
	cwd, agentDir := b.TempDir(), b.TempDir()
	cmd := exec.Command(gopiBinary(b), append([]string{"--model", "faux/faux-fast", "--no-session"}, args...)...)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "PI_CODING_AGENT_DIR="+agentDir, "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "GEMINI_API_KEY=")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &bproc{b: b, cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20)}
	b.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return p
}

func (p *bproc) send(msg map[string]any) {
	p.b.Helper()
	line, err := json.Marshal(msg)
	if err != nil {
		p.b.Fatal(err)
	}
	if _, err := p.stdin.Write(append(line, '\n')); err != nil {
		p.b.Fatal(err)
	}
}

// request sends a JSON-RPC request and returns its id.
func (p *bproc) request(method string, params any) float64 {
	p.id++
	p.send(map[string]any{"jsonrpc": "2.0", "id": p.id, "method": method, "params": params})
	return float64(p.id)
}

// next reads one message.
func (p *bproc) next() record {
	p.b.Helper()
	line, err := p.out.ReadBytes('\n')
	p.read += int64(len(line))
	if err != nil {
		p.b.Fatalf("reading gopi: %v", err)
	}
	var r record
	if err := json.Unmarshal(line, &r); err != nil {
		p.b.Fatalf("gopi wrote %q: %v", line, err)
	}
	return r
}

// until reads messages up to the first that done accepts; requests of
// gopi's are answered with null on the way.
func (p *bproc) until(done func(record) bool) record {
	for {
		r := p.next()
		if r["method"] != nil && r["id"] != nil {
			p.send(map[string]any{"jsonrpc": "2.0", "id": r["id"], "result": nil})
		}
		if done(r) {
			return r
		}
	}
}

// benchDeltas is how many text deltas the streamed reply has.
const benchDeltas = 1000

// BenchmarkDialects streams a faux reply of 1,000 text deltas ("stream:
// 1000", one number and a space each) in each dialect, from the prompt
// sent to the run's end, and reports the bytes gopi wrote for it.
func BenchmarkDialects(b *testing.B) {
	prompt := fmt.Sprintf("stream: %d", benchDeltas)
	b.Run("rpc", func(b *testing.B) {
		p := startBench(b, "--mode", "rpc")
		b.ResetTimer()
		p.read = 0
		for range b.N {
			p.send(map[string]any{"type": "prompt", "message": prompt})
			p.until(func(r record) bool { return r.str("type") == "agent_end" })
		}
		b.ReportMetric(float64(p.read)/float64(b.N), "wire-bytes/op")
	})
	b.Run("jsonrpc", func(b *testing.B) {
		p := startBench(b, "--mode", "jsonrpc")
		id := p.request("initialize", map[string]any{})
		p.until(func(r record) bool { return r["id"] == id })
		p.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
		b.ResetTimer()
		p.read = 0
		for range b.N {
			p.request("pi/prompt", map[string]any{"message": prompt})
			p.until(func(r record) bool { return event(r, "agent_end") })
		}
		b.ReportMetric(float64(p.read)/float64(b.N), "wire-bytes/op")
	})
	b.Run("acp", func(b *testing.B) {
		p := startBench(b, "--mode", "acp")
		sid := p.acpSession()
		b.ResetTimer()
		p.read = 0
		for range b.N {
			id := p.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": prompt}}})
			p.until(func(r record) bool { return r["id"] == id })
		}
		b.ReportMetric(float64(p.read)/float64(b.N), "wire-bytes/op")
	})
}

// acpSession initializes and opens one session; it returns its id.
func (p *bproc) acpSession() string {
	id := p.request("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	p.until(func(r record) bool { return r["id"] == id })
	return p.acpNew()
}

func (p *bproc) acpNew() string {
	p.b.Helper()
	id := p.request("session/new", map[string]any{"cwd": p.cmd.Dir, "mcpServers": []any{}})
	r := p.until(func(r record) bool { return r["id"] == id })
	sid := r.obj("result").str("sessionId")
	if sid == "" {
		p.b.Fatalf("session/new: %v", r)
	}
	return sid
}

// BenchmarkACPFirstChunk times session/new and a prompt up to the first
// agent_message_chunk: what a user waits for before text appears in a
// fresh session. The session is closed after each, untimed.
func BenchmarkACPFirstChunk(b *testing.B) {
	p := startBench(b, "--mode", "acp")
	p.acpSession()
	b.ResetTimer()
	for range b.N {
		sid := p.acpNew()
		id := p.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hello"}}})
		p.until(func(r record) bool {
			return r.str("method") == "session/update" && r.obj("params").obj("update").str("sessionUpdate") == "agent_message_chunk"
		})
		b.StopTimer()
		p.until(func(r record) bool { return r["id"] == id })
		closed := p.request("session/close", map[string]any{"sessionId": sid})
		p.until(func(r record) bool { return r["id"] == closed })
		b.StartTimer()
	}
}

// BenchmarkACPIdleSessions opens ten sessions in one process and reports
// the resident memory the nine after the first added, each (from
// /proc/<pid>/status), beside the process's size with one.
func BenchmarkACPIdleSessions(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc")
	}
	var one, perSession float64
	for range b.N {
		p := startBench(b, "--mode", "acp")
		p.acpSession()
		time.Sleep(200 * time.Millisecond) // let the first session settle
		r1 := rss(b, p.cmd.Process.Pid)
		for range 9 {
			p.acpNew()
		}
		time.Sleep(200 * time.Millisecond)
		r10 := rss(b, p.cmd.Process.Pid)
		one += float64(r1)
		perSession += float64(r10-r1) / 9
	}
	b.ReportMetric(one/float64(b.N)/(1<<20), "MiB-rss-1-session")
	b.ReportMetric(perSession/float64(b.N)/(1<<20), "MiB-rss/added-session")
}

// rss is the process's resident set size in bytes.
func rss(b *testing.B, pid int) int64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
