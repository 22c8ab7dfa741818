package ext

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// nopPeer answers nothing; the benchmarks' extensions ask nothing.
type nopPeer struct{}

func (nopPeer) Request(context.Context, Method, json.RawMessage) (any, error) { return nil, nil }
func (nopPeer) Notification(Method, json.RawMessage)                          {}

// benchHost starts a Node host with one extension whose tool_call handler
// lets every call through. It needs GOPI_NODE and GOPI_PI_PACKAGE (make
// bench sets them when pi 1.6.0 is installed).
func benchHost(b *testing.B, n int) *Manager {
	b.Helper()
	node, pkg := os.Getenv("GOPI_NODE"), os.Getenv("GOPI_PI_PACKAGE")
	if node == "" || pkg == "" {
		b.Skip("GOPI_NODE and GOPI_PI_PACKAGE are not set")
	}
	dir := b.TempDir()
	var paths []string
	for i := range n {
		p := filepath.Join(dir, "ext"+string(rune('a'+i))+".ts")
		src := `export default function (pi) { pi.on("tool_call", (e) => { if (e.input.command === "never") return { block: true }; }); }` + "\n"
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	nh := &NodeHost{Find: RuntimeOptions{Getenv: os.Getenv}, Paths: paths, Cwd: dir, ScriptDir: dir}
	m := NewManager(nh)
	m.Start(context.Background(), nopPeer{})
	if len(m.Registrations().Loaded) != n {
		b.Fatalf("loaded %v", m.Registrations())
	}
	b.Cleanup(func() { _ = m.Close() })
	return m
}

// BenchmarkToolCallHook is one tool_call through the pipe, the host and
// pi's runner and back: the latency a hooked tool call adds. p50 and p99
// are reported in microseconds.
func BenchmarkToolCallHook(b *testing.B) {
	m := benchHost(b, 1)
	ctx := context.Background()
	input := json.RawMessage(`{"command":"ls"}`)
	st := &State{Snapshot: Snapshot{Idle: false}}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		res, err := m.ToolCall(ctx, "bash", "c1", input, st)
		if err != nil || res.Block {
			b.Fatal(err, res)
		}
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	if len(times) > 0 {
		b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
	}
}

// BenchmarkHostStart is starting the Node host and loading n extensions.
func BenchmarkHostStart(b *testing.B) {
	for _, n := range []int{1, 5} {
		b.Run(string(rune('0'+n))+"-extensions", func(b *testing.B) {
			for b.Loop() {
				m := benchHost(b, n)
				_ = m.Close()
			}
		})
	}
}
