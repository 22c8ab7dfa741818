package codemode

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/codemode/quickjs"
)

//go:embed prelude.js
var preludeSource string

// Limits of one script, as pi has them.
const (
	// MemoryLimit is a script VM's heap: past it the script gets
	// "InternalError: out of memory".
	MemoryLimit = 256 << 20
	// maxOutputChars and maxOutputItems bound what text(), image() and
	// console calls may add (characters of text and base64).
	maxOutputChars = 16 << 20
	maxOutputItems = 100_000
	// maxStoreValue and maxStoreTotal bound store(): one value's JSON,
	// and all values' keys and JSON together.
	maxStoreValue = 256 << 10
	maxStoreTotal = 1 << 20
)

// item is one piece of a script's output, in order.
type item struct {
	kind     string // "text", "console" or "image"
	text     string // the text, or an image's base64
	mimeType string
}

// scriptError is why a script failed: kind "script" (what it threw),
// "timeout", "aborted" or "sandbox" (gopi's side failed).
type scriptError struct {
	kind, name, message, stack string
}

// outcome is what one run of a script gave.
type outcome struct {
	ok     bool
	value  *string // the returned value's JSON; nil for undefined
	err    scriptError
	output []item
	writes [][]json.RawMessage // store writes: [key, json] or [key]
}

// global serves one of the script's asynchronous globals: args is the
// call's arguments as a JSON array; the value returned is JSON (nil for
// undefined).
type global func(ctx context.Context, args []json.RawMessage) (json.RawMessage, error)

// callFunc runs one tool call of the script, under callCtx: the payload
// is JSON when ok, else the error's text.
type callFunc func(callCtx context.Context, tool string, args json.RawMessage) (ok bool, payload string)

// scriptTool is a tool as the prelude lists it.
type scriptTool struct {
	Name        string `json:"name"`
	JSName      string `json:"jsName"`
	Description string `json:"description"`
}

// runSpec is one script's run: its code and what it may reach.
type runSpec struct {
	code    string
	tools   []scriptTool
	globals map[string]global
	store   map[string]string // key -> JSON text
	call    callFunc
	memory  uint32 // the heap's limit
	// timeout is the script's deadline, counted from when its VM is
	// ready; 0: none.
	timeout time.Duration
}

// settlement answers one pending call of the script.
type settlement struct {
	id      float64
	ok      bool
	payload *string
}

// runner is the state of one script's run; its VM is used by the
// goroutine in run alone, the call goroutines only post settlements.
type runner struct {
	spec runSpec
	vm   *quickjs.VM
	api  api
	out  outcome
	done bool
	// callCtx is the context of the script's tool calls, cancelled when
	// the script ends.
	callCtx context.Context
	calls   sync.WaitGroup

	mu sync.Mutex // guards ready
	// ready are the settlements not yet handed to the script.
	ready []settlement
	wake  chan struct{}
}

// run runs spec.code in a fresh VM until it finishes, fails, ctx ends
// (abort) or spec.timeout passes. The deadline starts once the VM and its
// prelude are ready: setting them up is gopi's time, not the script's.
// Calls still running when it returns are cancelled and waited for.
func run(ctx context.Context, eng *quickjs.Engine, spec runSpec) outcome {
	r := &runner{spec: spec, wake: make(chan struct{}, 1)}
	vm, err := eng.New(context.WithoutCancel(ctx), quickjs.Config{MemoryLimit: spec.memory, Host: r.host})
	if err != nil {
		return sandboxFailure(err)
	}
	defer vm.Close(context.WithoutCancel(ctx))
	r.vm = vm
	if err := r.prelude(ctx); err != nil {
		return r.fail(ctx, err)
	}
	if spec.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.timeout)
		defer cancel()
	}
	callCtx, cancelCalls := context.WithCancel(ctx)
	r.callCtx = callCtx
	defer func() {
		cancelCalls()
		r.calls.Wait()
	}()
	if err := r.start(ctx); err != nil {
		return r.fail(ctx, err)
	}
	for !r.done {
		if err := vm.RunJobs(ctx); err != nil {
			return r.fail(ctx, err)
		}
		if r.done {
			break
		}
		if _, err := r.callValue(ctx, r.api.stalled); err != nil {
			return r.fail(ctx, err)
		}
		if r.done {
			break
		}
		select {
		case <-r.wake:
		case <-ctx.Done():
			return r.fail(ctx, ctx.Err())
		}
		if err := r.settle(ctx); err != nil {
			return r.fail(ctx, err)
		}
	}
	return r.out
}

// api holds the prelude's three functions.
type api struct{ obj, settle, run, stalled quickjs.Value }

// prelude evaluates the prelude: it locks the built-ins and defines the
// script's globals.
func (r *runner) prelude(ctx context.Context) error {
	vm := r.vm
	factory, err := vm.Eval(ctx, preludeSource, "codemode-prelude.js", quickjs.EvalStrict)
	if err != nil {
		return fmt.Errorf("codemode: the prelude: %w", err)
	}
	defer vm.Free(ctx, factory)
	bridge, err := vm.NewFunction(ctx, "bridge")
	if err != nil {
		return err
	}
	defer vm.Free(ctx, bridge)
	globals := make([]string, 0, len(r.spec.globals))
	for name := range r.spec.globals {
		globals = append(globals, name)
	}
	tools := r.spec.tools
	if tools == nil {
		tools = []scriptTool{}
	}
	store := r.spec.store
	if store == nil {
		store = map[string]string{}
	}
	limits := map[string]int{
		"outputChars": maxOutputChars, "outputItems": maxOutputItems,
		"storeValue": maxStoreValue, "storeTotal": maxStoreTotal,
	}
	args := []any{tools, globals, store, limits}
	vals := []quickjs.Value{bridge}
	defer func() {
		for _, v := range vals[1:] {
			vm.Free(ctx, v)
		}
	}()
	for _, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("codemode: %w", err)
		}
		v, err := vm.NewString(ctx, string(b))
		if err != nil {
			return err
		}
		vals = append(vals, v)
	}
	obj, err := vm.Call(ctx, factory, 0, vals...)
	if err != nil {
		return fmt.Errorf("codemode: the prelude: %w", err)
	}
	r.api.obj = obj
	for _, f := range []struct {
		name string
		v    *quickjs.Value
	}{{"settle", &r.api.settle}, {"run", &r.api.run}, {"stalled", &r.api.stalled}} {
		if *f.v, err = vm.Get(ctx, obj, f.name); err != nil {
			return err
		}
	}
	return nil
}

// start compiles the script and runs it to its first wait.
func (r *runner) start(ctx context.Context) error {
	vm := r.vm
	// The script shares its first line with the wrapper, so the line
	// numbers of its errors are the script's own.
	fn, err := vm.Eval(ctx, "(async (tools, console) => {"+r.spec.code+"\n})", "codemode.js", quickjs.EvalGlobal)
	if err != nil {
		var exc *quickjs.Exception
		if errors.As(err, &exc) {
			r.finishThrown(exc)
			return nil
		}
		return err
	}
	defer vm.Free(ctx, fn)
	_, err = r.callValue(ctx, r.api.run, fn)
	return err
}

// finishThrown ends the script with an exception that reached the host
// (a syntax error): its text and its frames, as the prelude reports one.
func (r *runner) finishThrown(exc *quickjs.Exception) {
	name, message, _ := strings.Cut(exc.Text, ": ")
	text := exc.Text
	for _, line := range strings.Split(exc.Stack, "\n") {
		if strings.TrimSpace(line) != "" && !strings.Contains(line, "codemode-prelude.js") {
			text += "\n" + line
		}
	}
	r.done = true
	r.out.ok = false
	r.out.err = scriptError{kind: "script", name: name, message: message, stack: text}
}

// callValue calls f with the prelude's object as this; the result is
// freed (the prelude's functions return nothing the host reads).
func (r *runner) callValue(ctx context.Context, f quickjs.Value, args ...quickjs.Value) (struct{}, error) {
	v, err := r.vm.Call(ctx, f, r.api.obj, args...)
	if err != nil {
		return struct{}{}, err
	}
	r.vm.Free(ctx, v)
	return struct{}{}, nil
}

// settle hands the ready settlements to the script.
func (r *runner) settle(ctx context.Context) error {
	r.mu.Lock()
	ready := r.ready
	r.ready = nil
	r.mu.Unlock()
	for _, s := range ready {
		if r.done {
			return nil
		}
		id, err := r.vm.NewNumber(ctx, s.id)
		if err != nil {
			return err
		}
		ok, err := r.vm.NewBool(ctx, s.ok)
		if err != nil {
			r.vm.Free(ctx, id)
			return err
		}
		var payload quickjs.Value
		if s.payload != nil {
			payload, err = r.vm.NewString(ctx, *s.payload)
		} else {
			payload, err = r.vm.Undefined(ctx)
		}
		if err != nil {
			r.vm.Free(ctx, id)
			r.vm.Free(ctx, ok)
			return err
		}
		_, err = r.callValue(ctx, r.api.settle, id, ok, payload)
		r.vm.Free(ctx, id)
		r.vm.Free(ctx, ok)
		r.vm.Free(ctx, payload)
		if err != nil {
			return err
		}
		if err := r.vm.RunJobs(ctx); err != nil {
			return err
		}
	}
	return nil
}

// post queues a settlement and wakes the run.
func (r *runner) post(s settlement) {
	r.mu.Lock()
	r.ready = append(r.ready, s)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// fail ends the run with err: the context's end (timeout or abort), or
// gopi's side failing. An exception here is one the script could not
// catch (out of memory while unwinding, say): it is the script's.
func (r *runner) fail(ctx context.Context, err error) outcome {
	out := r.out
	if r.done {
		return out
	}
	out.ok = false
	var exc *quickjs.Exception
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		out.err = scriptError{kind: "timeout"}
	case ctx.Err() != nil:
		out.err = scriptError{kind: "aborted"}
	case errors.As(err, &exc):
		name, message, _ := strings.Cut(exc.Text, ": ")
		out.err = scriptError{kind: "script", name: name, message: message, stack: exc.Text}
	default:
		out.err = scriptError{kind: "sandbox", message: err.Error()}
	}
	return out
}

func sandboxFailure(err error) outcome {
	return outcome{err: scriptError{kind: "sandbox", message: err.Error()}}
}

// host serves the prelude's bridge.
func (r *runner) host(ctx context.Context, vm *quickjs.VM, name string, args []quickjs.Value) (quickjs.Value, error) {
	if name != "bridge" || len(args) < 1 {
		return 0, fmt.Errorf("codemode: unknown host function %q", name)
	}
	str := func(i int) (string, bool, error) {
		if i >= len(args) {
			return "", false, nil
		}
		if u, err := vm.IsUndefined(ctx, args[i]); err != nil || u {
			return "", false, err
		}
		s, err := vm.String(ctx, args[i])
		return s, err == nil, err
	}
	kind, _, err := str(0)
	if err != nil {
		return 0, err
	}
	switch kind {
	case "call", "global":
		id, err := vm.Number(ctx, args[1])
		if err != nil {
			return 0, err
		}
		target, _, err := str(2)
		if err != nil {
			return 0, err
		}
		argJSON, has, err := str(3)
		if err != nil {
			return 0, err
		}
		if kind == "call" {
			if !has {
				argJSON = "{}"
			}
			r.startCall(id, target, json.RawMessage(argJSON))
		} else {
			r.serveGlobal(ctx, id, target, argJSON)
		}
	case "output":
		k, _, err := str(1)
		if err != nil {
			return 0, err
		}
		data, _, err := str(2)
		if err != nil {
			return 0, err
		}
		mime, _, err := str(3)
		if err != nil {
			return 0, err
		}
		r.out.output = append(r.out.output, item{kind: k, text: data, mimeType: mime})
	case "done":
		ok, err := vm.Bool(ctx, args[1])
		if err != nil {
			return 0, err
		}
		payload, has, err := str(2)
		if err != nil {
			return 0, err
		}
		r.done = true
		r.out.ok = ok
		if ok {
			if has {
				r.out.value = &payload
			}
			writes, _, err := str(3)
			if err != nil {
				return 0, err
			}
			if writes != "" {
				if err := json.Unmarshal([]byte(writes), &r.out.writes); err != nil {
					return 0, fmt.Errorf("codemode: the store's writes: %w", err)
				}
			}
		} else {
			var e struct{ Name, Message, Stack string }
			if err := json.Unmarshal([]byte(payload), &e); err != nil {
				return 0, fmt.Errorf("codemode: the script's error: %w", err)
			}
			r.out.err = scriptError{kind: "script", name: e.Name, message: e.Message, stack: e.Stack}
		}
	default:
		return 0, fmt.Errorf("codemode: unknown bridge call %q", kind)
	}
	return 0, nil
}

// startCall runs one tool call in a goroutine the run owns.
func (r *runner) startCall(id float64, tool string, args json.RawMessage) {
	r.calls.Add(1)
	go func() {
		defer r.calls.Done()
		ok, payload := r.spec.call(r.callCtx, tool, args)
		r.post(settlement{id: id, ok: ok, payload: &payload})
	}()
}

// serveGlobal answers a global's call at once: it settles on the next
// turn of the run, as a promise does.
func (r *runner) serveGlobal(ctx context.Context, id float64, name, argJSON string) {
	g := r.spec.globals[name]
	var args []json.RawMessage
	if argJSON != "" {
		if err := json.Unmarshal([]byte(argJSON), &args); err != nil {
			msg := err.Error()
			r.post(settlement{id: id, payload: &msg})
			return
		}
	}
	if g == nil {
		msg := name + " is not available"
		r.post(settlement{id: id, payload: &msg})
		return
	}
	v, err := g(ctx, args)
	if err != nil {
		msg := err.Error()
		r.post(settlement{id: id, payload: &msg})
		return
	}
	if v == nil {
		r.post(settlement{id: id, ok: true})
		return
	}
	s := string(v)
	r.post(settlement{id: id, ok: true, payload: &s})
}
