// Package enginebench compares the two JavaScript engines codemode could
// run scripts in: QuickJS-NG compiled to WebAssembly on wazero (the one
// gopi uses, core/codemode/quickjs) and goja. It is a module of its own
// so that goja stays out of gopi's go.mod. Figures and the commands are
// in docs/performance.md ("Codemode's engine").
package enginebench

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/dop251/goja"
	"github.com/gopi-dev/gopi/core/codemode/quickjs"
)

// small is a script of the size codemode runs: build, filter and
// serialise some data.
const small = `(() => {
	const rows = [];
	for (let i = 0; i < 1000; i++) rows.push({ id: i, name: "file" + i + ".go", size: (i * 7919) % 4096 });
	const big = rows.filter(r => r.size > 3000).map(r => r.name);
	return JSON.stringify({ count: big.length, first: big.slice(0, 3) });
})()`

var (
	once   sync.Once
	engine *quickjs.Engine
)

func qjsEngine(b testing.TB) *quickjs.Engine {
	once.Do(func() {
		var err error
		engine, err = quickjs.NewEngine(context.Background(), "")
		if err != nil {
			b.Fatal(err)
		}
	})
	return engine
}

func runQuickJS(b testing.TB, e *quickjs.Engine, code string) string {
	return runQuickJSLimit(b, e, 256<<20, code)
}

func runQuickJSLimit(b testing.TB, e *quickjs.Engine, limit uint32, code string) string {
	ctx := context.Background()
	vm, err := e.New(ctx, quickjs.Config{MemoryLimit: limit})
	if err != nil {
		b.Fatal(err)
	}
	defer vm.Close(ctx)
	v, err := vm.Eval(ctx, code, "bench.js", quickjs.EvalGlobal)
	if err != nil {
		b.Fatal(err)
	}
	s, err := vm.String(ctx, v)
	if err != nil {
		b.Fatal(err)
	}
	vm.Free(ctx, v)
	return s
}

func runGoja(b testing.TB, code string) string {
	v, err := goja.New().RunString(code)
	if err != nil {
		b.Fatal(err)
	}
	return v.String()
}

// BenchmarkCompileQuickJS is the once-per-process cost: wazero compiles
// quickjs.wasm to machine code.
func BenchmarkCompileQuickJS(b *testing.B) {
	for b.Loop() {
		e, err := quickjs.NewEngine(context.Background(), "")
		if err != nil {
			b.Fatal(err)
		}
		e.Close(context.Background())
	}
}

// BenchmarkCompileQuickJSCached: the same with wazero's compilation
// cache on disk, filled by an earlier process.
func BenchmarkCompileQuickJSCached(b *testing.B) {
	dir := b.TempDir()
	e, err := quickjs.NewEngine(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	e.Close(context.Background())
	for b.Loop() {
		e, err := quickjs.NewEngine(context.Background(), dir)
		if err != nil {
			b.Fatal(err)
		}
		e.Close(context.Background())
	}
}

// BenchmarkStart*: a fresh, isolated runtime per script, running 1+1.
func BenchmarkStartQuickJS(b *testing.B) {
	e := qjsEngine(b)
	for b.Loop() {
		runQuickJS(b, e, "1+1")
	}
}

func BenchmarkStartGoja(b *testing.B) {
	for b.Loop() {
		runGoja(b, "1+1")
	}
}

// BenchmarkSmall*: a fresh runtime and the small script.
func BenchmarkSmallQuickJS(b *testing.B) {
	e := qjsEngine(b)
	for b.Loop() {
		runQuickJS(b, e, small)
	}
}

func BenchmarkSmallGoja(b *testing.B) {
	for b.Loop() {
		runGoja(b, small)
	}
}

// memory held by n live runtimes that each ran the small script, per
// runtime: the Go heap and what the process took from the system.
func perRuntime(b *testing.B, start func() func()) {
	const n = 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	closers := make([]func(), n)
	for i := range closers {
		closers[i] = start()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	for _, c := range closers {
		c()
	}
	b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/n/1024, "heap-KiB/runtime")
	b.ReportMetric(float64(after.Sys-before.Sys)/n/1024, "sys-KiB/runtime")
}

func BenchmarkMemoryQuickJS(b *testing.B) {
	e := qjsEngine(b)
	ctx := context.Background()
	for b.Loop() {
		perRuntime(b, func() func() {
			vm, err := e.New(ctx, quickjs.Config{MemoryLimit: 256 << 20})
			if err != nil {
				b.Fatal(err)
			}
			v, err := vm.Eval(ctx, small, "bench.js", quickjs.EvalGlobal)
			if err != nil {
				b.Fatal(err)
			}
			vm.Free(ctx, v)
			return func() { vm.Close(ctx) }
		})
	}
}

func BenchmarkMemoryGoja(b *testing.B) {
	for b.Loop() {
		perRuntime(b, func() func() {
			vm := goja.New()
			if _, err := vm.RunString(small); err != nil {
				b.Fatal(err)
			}
			return func() { runtime.KeepAlive(vm) }
		})
	}
}

// BenchmarkDeadline*: how long after a 20 ms deadline a while(true){}
// stops (the metric is the overrun).
func BenchmarkDeadlineQuickJS(b *testing.B) {
	e := qjsEngine(b)
	for b.Loop() {
		vm, err := e.New(context.Background(), quickjs.Config{})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		start := time.Now()
		_, err = vm.Eval(ctx, "while (true) {}", "spin.js", quickjs.EvalGlobal)
		b.ReportMetric(float64(time.Since(start)-20*time.Millisecond)/1e6, "ms-overrun")
		cancel()
		vm.Close(context.Background())
		if !errors.Is(err, context.DeadlineExceeded) {
			b.Fatalf("want the deadline, got %v", err)
		}
	}
}

func BenchmarkDeadlineGoja(b *testing.B) {
	for b.Loop() {
		vm := goja.New()
		start := time.Now()
		t := time.AfterFunc(20*time.Millisecond, func() { vm.Interrupt("deadline") })
		_, err := vm.RunString("while (true) {}")
		b.ReportMetric(float64(time.Since(start)-20*time.Millisecond)/1e6, "ms-overrun")
		t.Stop()
		var ie *goja.InterruptedError
		if !errors.As(err, &ie) {
			b.Fatalf("want an interrupt, got %v", err)
		}
	}
}

// TestMemoryLimitQuickJS: a script that keeps allocating gets QuickJS's
// own error at the limit and can catch it. goja has no such limit (a
// runaway script grows gopi's heap until the process dies), so there is
// no goja twin of this test.
func TestMemoryLimitQuickJS(t *testing.T) {
	s := runQuickJSLimit(t, qjsEngine(t), 32<<20, `let a = []; try { for (;;) a.push("x".repeat(4096) + a.length) } catch (e) { a = null; String(e) }`)
	if s != "InternalError: out of memory" {
		t.Fatalf("got %q", s)
	}
}
