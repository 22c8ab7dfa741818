package quickjs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	engineOnce sync.Once
	engine     *Engine
	engineErr  error
)

func testEngine(t testing.TB) *Engine {
	t.Helper()
	engineOnce.Do(func() { engine, engineErr = NewEngine(context.Background(), "") })
	if engineErr != nil {
		t.Fatal(engineErr)
	}
	return engine
}

func newVM(t testing.TB, cfg Config) *VM {
	t.Helper()
	vm, err := testEngine(t).New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vm.Close(context.Background()) })
	return vm
}

func evalString(t *testing.T, vm *VM, ctx context.Context, code string) (string, error) {
	t.Helper()
	v, err := vm.Eval(ctx, code, "test.js", EvalGlobal)
	if err != nil {
		return "", err
	}
	defer vm.Free(ctx, v)
	return vm.String(ctx, v)
}

func TestEval(t *testing.T) {
	vm := newVM(t, Config{})
	ctx := context.Background()
	s, err := evalString(t, vm, ctx, `JSON.stringify({a: [1, 2, 3].map(x => x * 2), s: "é☃"})`)
	if err != nil || s != `{"a":[2,4,6],"s":"é☃"}` {
		t.Fatalf("got %q, %v", s, err)
	}
	_, err = evalString(t, vm, ctx, `null.x`)
	var exc *Exception
	if !errors.As(err, &exc) || !strings.HasPrefix(exc.Text, "TypeError:") {
		t.Fatalf("want a TypeError, got %v", err)
	}
}

func TestNoHostAPI(t *testing.T) {
	vm := newVM(t, Config{})
	ctx := context.Background()
	s, err := evalString(t, vm, ctx, `[typeof require, typeof process, typeof fetch, typeof setTimeout, typeof setInterval, typeof XMLHttpRequest, typeof WebAssembly, typeof std, typeof os].join(",")`)
	if err != nil {
		t.Fatal(err)
	}
	if s != "undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined" {
		t.Fatalf("host APIs reachable: %s", s)
	}
}

func TestHostFunction(t *testing.T) {
	ctx := context.Background()
	vm := newVM(t, Config{Host: func(ctx context.Context, vm *VM, name string, args []Value) (Value, error) {
		if name == "fail" {
			return 0, errors.New("no such thing")
		}
		var parts []string
		for _, a := range args {
			s, err := vm.String(ctx, a)
			if err != nil {
				return 0, err
			}
			parts = append(parts, s)
		}
		return vm.NewString(ctx, name+"("+strings.Join(parts, ",")+")")
	}})
	g, err := vm.Global(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Free(ctx, g)
	for _, n := range []string{"echo", "fail"} {
		f, err := vm.NewFunction(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if err := vm.Set(ctx, g, n, f); err != nil {
			t.Fatal(err)
		}
		vm.Free(ctx, f)
	}
	s, err := evalString(t, vm, ctx, `echo(1, "two", {}) + "|" + (() => { try { fail() } catch (e) { return e.message } })()`)
	if err != nil || s != "echo(1,two,[object Object])|no such thing" {
		t.Fatalf("got %q, %v", s, err)
	}
}

func TestDeadlineStopsALoop(t *testing.T) {
	vm := newVM(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := evalString(t, vm, ctx, `while (true) {}`)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the deadline, got %v", err)
	}
	// The engine keeps serving.
	vm2 := newVM(t, Config{})
	if s, err := evalString(t, vm2, context.Background(), `1 + 1`); err != nil || s != "2" {
		t.Fatalf("got %q, %v", s, err)
	}
}

func TestDeadlineStopsACatchingLoop(t *testing.T) {
	vm := newVM(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := evalString(t, vm, ctx, `for (;;) { try { while (true) {} } catch (e) {} }`)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the deadline, got %v", err)
	}
}

func TestMemoryLimit(t *testing.T) {
	vm := newVM(t, Config{MemoryLimit: 16 << 20})
	ctx := context.Background()
	s, err := evalString(t, vm, ctx, `let a = []; try { for (;;) a.push("x".repeat(1000) + a.length) } catch (e) { a = null; String(e) }`)
	if err != nil || s != "InternalError: out of memory" {
		t.Fatalf("got %q, %v", s, err)
	}
	if vm.MemorySize() > 64<<20 {
		t.Fatalf("memory grew to %d", vm.MemorySize())
	}
}

func TestEmbeddedModule(t *testing.T) {
	wasm, err := module()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	if got := hex.EncodeToString(sum[:]); got != wasmSHA256 {
		t.Fatalf("quickjs.wasm has SHA-256 %s, README.md and wasmSHA256 record %s", got, wasmSHA256)
	}
}

// The compilation cache: a second engine loads what the first stored; a
// cache that cannot be written, or whose directory is a file, is left
// alone and the engine still works.
func TestCompilationCache(t *testing.T) {
	ctx := context.Background()
	works := func(e *Engine) {
		t.Helper()
		defer e.Close(ctx)
		vm, err := e.New(ctx, Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer vm.Close(ctx)
		v, err := vm.Eval(ctx, "6 * 7", "t.js", EvalGlobal)
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := vm.String(ctx, v); s != "42" {
			t.Fatalf("got %q", s)
		}
	}
	dir := t.TempDir()
	e, err := NewEngine(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	works(e)
	entries, _ := filepath.Glob(filepath.Join(dir, "wazero-*", "*"))
	if len(entries) == 0 {
		t.Fatal("nothing was cached")
	}
	e, err = NewEngine(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	works(e)

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e, err = NewEngine(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	works(e)

	if os.Geteuid() != 0 { // root writes anywhere
		ro := t.TempDir()
		if err := os.Chmod(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(ro, 0o700) })
		e, err = NewEngine(ctx, ro)
		if err != nil {
			t.Fatal(err)
		}
		works(e)
	}
	// An entry that is not wazero's: dropped or ignored, never fatal.
	for _, entry := range entries {
		if err := os.WriteFile(entry, []byte("not machine code"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e, err = NewEngine(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	works(e)
}
