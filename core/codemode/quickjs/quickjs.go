// Package quickjs runs JavaScript in QuickJS-NG compiled to WebAssembly
// (the quickjs-wasi build pi's codemode uses), on wazero: pure Go, no cgo.
//
// An [Engine] compiles the module once per process; each [VM] is a fresh
// instance of it with its own linear memory, so nothing one script does
// reaches another. A VM has no host API but the functions its owner
// gives it ([Config.Host]): no file system, network, timers or modules.
// WASI output is discarded and the clock is the system's.
//
// Limits: the context of every call is the hard deadline. A script that
// spins is stopped by QuickJS's interrupt handler, which this package
// answers from the context (an uncatchable "interrupted" error), and, for
// a built-in that does not poll it, by wazero closing the instance when
// the context ends. Memory is held to [Config.MemoryLimit] by the build's
// allocator (the script sees "InternalError: out of memory") and the
// instance's linear memory is capped above it.
//
// A VM is used by one goroutine at a time.
package quickjs

import (
	"bytes"
	"compress/gzip"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"unicode/utf8"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// wasmGz is quickjs-wasi's quickjs.wasm, gzipped (README.md says where
// it comes from and how it is refreshed): 280 KB in gopi's binary instead
// of 637 KB, unpacked once, when the first engine is made.
//
//go:embed quickjs.wasm.gz
var wasmGz []byte

// module is the WebAssembly module, unpacked on first use.
var module = sync.OnceValues(func() ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(wasmGz))
	if err != nil {
		return nil, fmt.Errorf("quickjs: unpacking the module: %w", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("quickjs: unpacking the module: %w", err)
	}
	return b, nil
})

// The build embedded: its package version and checksum (TestEmbeddedModule).
const (
	WasmVersion = "quickjs-wasi 3.6.2"
	wasmSHA256  = "d4c9375f2b1ca4dc95f72c8aa2982a7a9951ac8011490d79c6582df732b4bbd9"
)

// Value is a QuickJS value held by the VM: a pointer into its memory
// that the owner frees with [VM.Free] (values passed to a host function
// are the VM's and are freed for it).
type Value uint32

// Exception is a JavaScript exception that reached the host: its text is
// the value's string form ("TypeError: x is not a function"), its stack
// the frames QuickJS recorded (an Error's stack property), if any.
type Exception struct{ Text, Stack string }

func (e *Exception) Error() string { return e.Text }

// ErrClosed is returned by a VM used after Close, or whose instance
// wazero closed because its context ended.
var ErrClosed = errors.New("quickjs: the VM is closed")

// Eval flags (QuickJS's JS_EVAL_* values).
const (
	EvalGlobal = 0
	EvalStrict = 1 << 3
)

// Config configures one VM.
type Config struct {
	// MemoryLimit is the most the script's heap may hold, in bytes
	// (0: none but the instance's cap).
	MemoryLimit uint32
	// MaxStack bounds the JavaScript stack, in bytes (0: 1 MiB), so deep
	// recursion throws a RangeError instead of trapping.
	MaxStack uint32
	// Host is called when the script calls a function made by
	// [VM.NewFunction]: name is the function's name, args are the
	// arguments (the VM's: valid during the call only). It returns a
	// value the VM takes over (0 for undefined), or an error the script
	// sees thrown as an Error with its text.
	Host func(ctx context.Context, vm *VM, name string, args []Value) (Value, error)
}

// memoryCapPages is the instance's linear memory cap (wasm pages of 64 KiB):
// 4 GiB, wasm32's whole space; the allocator's MemoryLimit is the limit
// that matters, this only bounds a build that bypassed it.
const memoryCapPages = 65536

// Engine holds the compiled module. It is safe for concurrent use.
type Engine struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
}

// vmKey finds the VM whose call a host function serves.
type vmKey struct{}

// NewEngine compiles the module and the host functions it imports.
// Compiling quickjs.wasm to machine code takes most of a second; with
// cacheDir set, wazero keeps the machine code there and a later process
// loads it instead. A cache it cannot use (a directory it cannot make,
// read or write, an entry it cannot read) is left alone and the module
// is compiled as without one.
func NewEngine(ctx context.Context, cacheDir string) (*Engine, error) {
	if cacheDir != "" {
		if cache, err := wazero.NewCompilationCacheWithDir(cacheDir); err == nil {
			e, err := newEngine(ctx, cache)
			if err == nil {
				return e, nil
			}
			_ = cache.Close(ctx)
		}
	}
	return newEngine(ctx, nil)
}

func newEngine(ctx context.Context, cache wazero.CompilationCache) (*Engine, error) {
	cfg := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(memoryCapPages)
	if cache != nil {
		cfg = cfg.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("quickjs: wasi: %w", err)
	}
	_, err := rt.NewHostModuleBuilder("env").
		NewFunctionBuilder().WithFunc(hostCall).Export("host_call").
		NewFunctionBuilder().WithFunc(hostInterrupt).Export("host_interrupt").
		NewFunctionBuilder().WithFunc(hostPromiseRejection).Export("host_promise_rejection").
		NewFunctionBuilder().WithFunc(hostModuleNormalize).Export("host_module_normalize").
		NewFunctionBuilder().WithFunc(hostModuleLoad).Export("host_module_load").
		NewFunctionBuilder().WithFunc(hostTimezoneOffset).Export("host_get_timezone_offset").
		Instantiate(ctx)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("quickjs: host module: %w", err)
	}
	wasm, err := module()
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("quickjs: compiling the module: %w", err)
	}
	return &Engine{rt: rt, compiled: compiled}, nil
}

// Close releases the engine and every VM still open.
func (e *Engine) Close(ctx context.Context) error { return e.rt.Close(ctx) }

// VM is one QuickJS runtime and context in an instance of its own.
type VM struct {
	cfg Config
	mod api.Module
	mem api.Memory
	fn  map[string]api.Function
	// hostErr is set by a host function that failed in a way the script
	// must not catch (the VM's own memory could not be read or written).
	hostErr error
}

// exports the VM calls.
var exportNames = []string{
	"qjs_init", "qjs_destroy", "qjs_set_memory_limit", "qjs_set_max_stack_size",
	"qjs_set_interrupt_handler", "qjs_eval", "qjs_call", "qjs_new_string",
	"qjs_new_number", "qjs_get_string_len", "qjs_free_cstring", "qjs_free_value",
	"qjs_dup_value", "qjs_get_global", "qjs_get_prop_string", "qjs_set_prop_string",
	"qjs_new_host_function", "qjs_is_exception", "qjs_get_exception", "qjs_throw",
	"qjs_new_error", "qjs_is_job_pending", "qjs_execute_pending_job",
	"qjs_get_undefined", "qjs_get_true", "qjs_get_false", "qjs_is_undefined",
	"qjs_is_object", "qjs_is_string",
	"wasm_malloc", "wasm_free", "qjs_get_float64", "qjs_get_bool",
}

// New starts a VM. ctx bounds the start only.
func (e *Engine) New(ctx context.Context, cfg Config) (*VM, error) {
	mod, err := e.rt.InstantiateModule(ctx, e.compiled, wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithSysWalltime().WithSysNanotime())
	if err != nil {
		return nil, fmt.Errorf("quickjs: instantiating: %w", err)
	}
	vm := &VM{cfg: cfg, mod: mod, mem: mod.Memory(), fn: map[string]api.Function{}}
	for _, n := range exportNames {
		f := mod.ExportedFunction(n)
		if f == nil {
			mod.Close(ctx)
			return nil, fmt.Errorf("quickjs: the module lacks %s", n)
		}
		vm.fn[n] = f
	}
	ctx = context.WithValue(ctx, vmKey{}, vm)
	if r, err := vm.call(ctx, "qjs_init"); err != nil || int32(r) != 0 {
		mod.Close(ctx)
		return nil, fmt.Errorf("quickjs: init failed (%d): %w", int32(r), err)
	}
	if cfg.MemoryLimit > 0 {
		if _, err := vm.call(ctx, "qjs_set_memory_limit", uint64(cfg.MemoryLimit)); err != nil {
			mod.Close(ctx)
			return nil, err
		}
	}
	stack := cfg.MaxStack
	if stack == 0 {
		stack = 1 << 20
	}
	if _, err := vm.call(ctx, "qjs_set_max_stack_size", uint64(stack)); err != nil {
		mod.Close(ctx)
		return nil, err
	}
	if _, err := vm.call(ctx, "qjs_set_interrupt_handler", 1); err != nil {
		mod.Close(ctx)
		return nil, err
	}
	return vm, nil
}

// Close frees the VM: its whole memory goes with the instance.
func (vm *VM) Close(ctx context.Context) {
	_ = vm.mod.Close(context.WithoutCancel(ctx))
}

// MemorySize is the size of the instance's linear memory, in bytes.
func (vm *VM) MemorySize() uint32 { return vm.mem.Size() }

// call calls an export with the VM in ctx, so its host functions find it.
func (vm *VM) call(ctx context.Context, name string, args ...uint64) (uint64, error) {
	if ctx.Value(vmKey{}) != vm {
		ctx = context.WithValue(ctx, vmKey{}, vm)
	}
	res, err := vm.fn[name].Call(ctx, args...)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return 0, fmt.Errorf("quickjs: %s: %w", name, ctxErr)
		}
		if vm.mod.IsClosed() {
			return 0, ErrClosed
		}
		return 0, fmt.Errorf("quickjs: %s: %w", name, err)
	}
	if vm.hostErr != nil {
		err := vm.hostErr
		vm.hostErr = nil
		return 0, err
	}
	if len(res) == 0 {
		return 0, nil
	}
	return res[0], nil
}

// value calls an export that returns a new value, and turns a QuickJS
// exception into an [*Exception].
func (vm *VM) value(ctx context.Context, name string, args ...uint64) (Value, error) {
	r, err := vm.call(ctx, name, args...)
	if err != nil {
		return 0, err
	}
	v := Value(r)
	if v == 0 {
		return 0, fmt.Errorf("quickjs: %s: out of memory", name)
	}
	exc, err := vm.call(ctx, "qjs_is_exception", uint64(v))
	if err != nil {
		return 0, err
	}
	if exc != 0 {
		vm.Free(ctx, v)
		return 0, vm.exception(ctx)
	}
	return v, nil
}

// exception takes the pending exception as an error.
func (vm *VM) exception(ctx context.Context) error {
	r, err := vm.call(ctx, "qjs_get_exception")
	if err != nil {
		return err
	}
	defer vm.Free(ctx, Value(r))
	s, err := vm.String(ctx, Value(r))
	if err != nil {
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil && s == "InternalError: interrupted" {
		return fmt.Errorf("quickjs: %w", ctxErr)
	}
	exc := &Exception{Text: s}
	if obj, _ := vm.call(ctx, "qjs_is_object", r); obj != 0 {
		if st, err := vm.Get(ctx, Value(r), "stack"); err == nil {
			if str, _ := vm.call(ctx, "qjs_is_string", uint64(st)); str != 0 {
				exc.Stack, _ = vm.String(ctx, st)
			}
			vm.Free(ctx, st)
		}
	}
	return exc
}

// alloc copies b into the VM's memory, NUL-terminated; free it with
// wasm_free.
func (vm *VM) alloc(ctx context.Context, b []byte) (uint32, error) {
	r, err := vm.call(ctx, "wasm_malloc", uint64(len(b)+1))
	if err != nil {
		return 0, err
	}
	p := uint32(r)
	if p == 0 {
		return 0, errors.New("quickjs: wasm_malloc: out of memory")
	}
	if !vm.mem.Write(p, b) || !vm.mem.WriteByte(p+uint32(len(b)), 0) {
		return 0, errors.New("quickjs: writing outside the VM's memory")
	}
	return p, nil
}

func (vm *VM) free(ctx context.Context, p uint32) {
	_, _ = vm.call(ctx, "wasm_free", uint64(p))
}

// Eval evaluates code as a global script named filename.
func (vm *VM) Eval(ctx context.Context, code, filename string, flags int) (Value, error) {
	c, err := vm.alloc(ctx, []byte(code))
	if err != nil {
		return 0, err
	}
	defer vm.free(ctx, c)
	f, err := vm.alloc(ctx, []byte(filename))
	if err != nil {
		return 0, err
	}
	defer vm.free(ctx, f)
	return vm.value(ctx, "qjs_eval", uint64(c), uint64(len(code)), uint64(f), uint64(flags))
}

// Call calls fn with this and args.
func (vm *VM) Call(ctx context.Context, fn, this Value, args ...Value) (Value, error) {
	if this == 0 {
		u, err := vm.Undefined(ctx)
		if err != nil {
			return 0, err
		}
		defer vm.Free(ctx, u)
		this = u
	}
	var argv uint32
	if len(args) > 0 {
		b := make([]byte, 4*len(args))
		for i, a := range args {
			putU32(b[4*i:], uint32(a))
		}
		p, err := vm.alloc(ctx, b)
		if err != nil {
			return 0, err
		}
		defer vm.free(ctx, p)
		argv = p
	}
	return vm.value(ctx, "qjs_call", uint64(fn), uint64(this), uint64(len(args)), uint64(argv))
}

// RunJobs runs the pending promise jobs, checking ctx between them.
func (vm *VM) RunJobs(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("quickjs: %w", err)
		}
		p, err := vm.call(ctx, "qjs_is_job_pending")
		if err != nil {
			return err
		}
		if p == 0 {
			return nil
		}
		r, err := vm.call(ctx, "qjs_execute_pending_job")
		if err != nil {
			return err
		}
		if int32(r) < 0 {
			return vm.exception(ctx)
		}
	}
}

// NewString is a JavaScript string of s.
func (vm *VM) NewString(ctx context.Context, s string) (Value, error) {
	p, err := vm.alloc(ctx, []byte(s))
	if err != nil {
		return 0, err
	}
	defer vm.free(ctx, p)
	return vm.value(ctx, "qjs_new_string", uint64(p), uint64(len(s)))
}

// NewNumber is a JavaScript number.
func (vm *VM) NewNumber(ctx context.Context, f float64) (Value, error) {
	return vm.value(ctx, "qjs_new_number", math.Float64bits(f))
}

// NewBool is true or false.
func (vm *VM) NewBool(ctx context.Context, b bool) (Value, error) {
	if b {
		return vm.value(ctx, "qjs_get_true")
	}
	return vm.value(ctx, "qjs_get_false")
}

// Undefined is a new handle to undefined.
func (vm *VM) Undefined(ctx context.Context) (Value, error) {
	return vm.value(ctx, "qjs_get_undefined")
}

// IsUndefined reports whether v is undefined.
func (vm *VM) IsUndefined(ctx context.Context, v Value) (bool, error) {
	r, err := vm.call(ctx, "qjs_is_undefined", uint64(v))
	return r != 0, err
}

// Number is v as a number (ToNumber).
func (vm *VM) Number(ctx context.Context, v Value) (float64, error) {
	r, err := vm.call(ctx, "qjs_get_float64", uint64(v))
	return math.Float64frombits(r), err
}

// Bool is v's truthiness.
func (vm *VM) Bool(ctx context.Context, v Value) (bool, error) {
	r, err := vm.call(ctx, "qjs_get_bool", uint64(v))
	return r != 0, err
}

// String is v as a string (ToString, which may run the script's code).
// Lone surrogates, which Go strings cannot hold, become U+FFFD.
func (vm *VM) String(ctx context.Context, v Value) (string, error) {
	lenp, err := vm.call(ctx, "wasm_malloc", 4)
	if err != nil {
		return "", err
	}
	defer vm.free(ctx, uint32(lenp))
	r, err := vm.call(ctx, "qjs_get_string_len", uint64(v), lenp)
	if err != nil {
		return "", err
	}
	if r == 0 {
		return "", vm.exception(ctx)
	}
	defer func() { _, _ = vm.call(ctx, "qjs_free_cstring", r) }()
	n, ok := vm.mem.ReadUint32Le(uint32(lenp))
	if !ok {
		return "", errors.New("quickjs: reading outside the VM's memory")
	}
	b, ok := vm.mem.Read(uint32(r), n)
	if !ok {
		return "", errors.New("quickjs: reading outside the VM's memory")
	}
	if utf8.Valid(b) {
		return string(b), nil
	}
	return string([]rune(string(b))), nil
}

// Global is the global object.
func (vm *VM) Global(ctx context.Context) (Value, error) { return vm.value(ctx, "qjs_get_global") }

// Get is obj[name].
func (vm *VM) Get(ctx context.Context, obj Value, name string) (Value, error) {
	p, err := vm.alloc(ctx, []byte(name))
	if err != nil {
		return 0, err
	}
	defer vm.free(ctx, p)
	return vm.value(ctx, "qjs_get_prop_string", uint64(obj), uint64(p))
}

// Set sets obj[name] to v (v stays the caller's).
func (vm *VM) Set(ctx context.Context, obj Value, name string, v Value) error {
	p, err := vm.alloc(ctx, []byte(name))
	if err != nil {
		return err
	}
	defer vm.free(ctx, p)
	r, err := vm.call(ctx, "qjs_set_prop_string", uint64(obj), uint64(p), uint64(v))
	if err != nil {
		return err
	}
	if int32(r) < 0 {
		return vm.exception(ctx)
	}
	return nil
}

// NewFunction is a function that calls [Config.Host] with name.
func (vm *VM) NewFunction(ctx context.Context, name string) (Value, error) {
	p, err := vm.alloc(ctx, []byte(name))
	if err != nil {
		return 0, err
	}
	defer vm.free(ctx, p)
	return vm.value(ctx, "qjs_new_host_function", uint64(p), uint64(len(name)), 0)
}

// Dup is a second handle to v.
func (vm *VM) Dup(ctx context.Context, v Value) (Value, error) {
	return vm.value(ctx, "qjs_dup_value", uint64(v))
}

// Free releases a value the caller owns.
func (vm *VM) Free(ctx context.Context, v Value) {
	if v != 0 && !vm.mod.IsClosed() {
		_, _ = vm.call(context.WithoutCancel(ctx), "qjs_free_value", uint64(v))
	}
}

// throw makes msg the pending exception, as an Error.
func (vm *VM) throw(ctx context.Context, msg string) {
	e, err := vm.value(ctx, "qjs_new_error")
	if err != nil {
		vm.hostErr = err
		return
	}
	defer vm.Free(ctx, e)
	m, err := vm.NewString(ctx, msg)
	if err != nil {
		vm.hostErr = err
		return
	}
	defer vm.Free(ctx, m)
	if err := vm.Set(ctx, e, "message", m); err != nil {
		vm.hostErr = err
		return
	}
	r, err := vm.call(ctx, "qjs_throw", uint64(e))
	if err != nil {
		vm.hostErr = err
		return
	}
	vm.Free(ctx, Value(r))
}

// hostCall serves a call of a function made by NewFunction. The
// trampoline owns this and the arguments; it takes over the returned
// value (0: an exception is pending).
func hostCall(ctx context.Context, m api.Module, namePtr, nameLen, _, argc, argvPtr uint32) uint32 {
	vm, _ := ctx.Value(vmKey{}).(*VM)
	if vm == nil || vm.cfg.Host == nil {
		return 0
	}
	name, ok := m.Memory().Read(namePtr, nameLen)
	if !ok {
		vm.hostErr = errors.New("quickjs: host call: bad name")
		return 0
	}
	args := make([]Value, argc)
	for i := range args {
		p, ok := m.Memory().ReadUint32Le(argvPtr + 4*uint32(i))
		if !ok {
			vm.hostErr = errors.New("quickjs: host call: bad arguments")
			return 0
		}
		args[i] = Value(p)
	}
	v, err := vm.cfg.Host(ctx, vm, string(name), args)
	if err != nil {
		vm.throw(ctx, err.Error())
		return 0
	}
	if v == 0 {
		u, err := vm.Undefined(ctx)
		if err != nil {
			vm.hostErr = err
			return 0
		}
		return uint32(u)
	}
	return uint32(v)
}

// hostInterrupt answers QuickJS's periodic question: stop now? Yes once
// the context of the call is done.
func hostInterrupt(ctx context.Context) uint32 {
	if ctx.Err() != nil {
		return 1
	}
	return 0
}

// hostPromiseRejection is never enabled; it frees what it is given.
func hostPromiseRejection(ctx context.Context, _ api.Module, promise, reason, _ uint32) {
	if vm, _ := ctx.Value(vmKey{}).(*VM); vm != nil {
		vm.Free(ctx, Value(promise))
		vm.Free(ctx, Value(reason))
	}
}

// hostModuleNormalize and hostModuleLoad: modules are never enabled, so
// an import fails in QuickJS ("could not load module").
func hostModuleNormalize(context.Context, uint32, uint32) uint32 { return 0 }
func hostModuleLoad(context.Context, uint32, uint32) uint32      { return 0 }

// hostTimezoneOffset: scripts see UTC.
func hostTimezoneOffset(context.Context, int32, uint32) int32 { return 0 }

func putU32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}
