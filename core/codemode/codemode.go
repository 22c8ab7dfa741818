// Package codemode is pi's codemode tool: the model writes a JavaScript
// script that calls the session's other tools (in parallel, with
// Promise.all), filters what they return, and only the script's output
// reaches the model.
//
// Each script runs as the body of an async function in a fresh QuickJS VM
// (core/codemode/quickjs) with no host API: no require, process, fetch,
// timers or modules. Its globals are the tools (tools.<name>(args)),
// text(), image(), console.*, return, exit(), store()/load(), ALL_TOOLS,
// searchTools(), describeTool(), describeNamespace() and models.*. Its
// limits: an optional deadline (`// @options: {"timeout_ms": …}`), a
// 256 MiB heap, cancellation by the tool call's context (abort), which
// also cancels its running calls.
//
// What it uses it is given through small interfaces: the tool calls
// ([Caller], the host's pipeline), the store ([Store], codemode-store
// entries), the model catalog ([Models]). The result is pi's, byte for
// byte where pi's is fixed: "Script completed"/"Script failed", the wall
// time, the output, "Script error:".
package codemode

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/codemode/quickjs"
	"github.com/gopi-dev/gopi/core/llm"
)

// Name is the tool's name (pi's).
const Name = "codemode"

// StoreEntryType is the customType of the session entries that keep the
// store's writes (pi's).
const StoreEntryType = "codemode-store"

// DefaultInlineBudget is codemode.inlineBudget's default: the estimated
// tokens the description may spend on tool declarations.
const DefaultInlineBudget = 3000

// Tool is a tool scripts may call.
type Tool struct {
	Spec llm.ToolSpec
	// Output is the JSON Schema of what a call resolves to; nil: a
	// string (the tool's text).
	Output json.RawMessage
	// Namespace groups the tool (an MCP server's tools); nil for none.
	Namespace *Namespace
	// Unlisted tools are callable but not in the description (deferred
	// MCP tools; with codemode.mode "on", the tools declared to the model
	// directly): scripts find them with searchTools() and ALL_TOOLS.
	Unlisted bool
}

// Namespace is a group of tools, such as one MCP server's.
type Namespace struct {
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	Instructions string `json:"instructions,omitempty"`
}

// Nested is one tool call a script makes.
type Nested struct {
	// ID is the call's id: the codemode call's, "/", its number.
	ID string
	// Parent is the id of the codemode call that made it.
	Parent string
	Tool   string
	Args   json.RawMessage
}

// Caller runs a script's tool calls: the host's tool pipeline (the same
// validation, hooks, approval and sandbox as the model's own calls). It
// is called from several goroutines at once.
type Caller interface {
	Call(ctx context.Context, call Nested) (agent.Result, error)
}

// StoreEntry is one successful script's store() writes, the data of a
// codemode-store custom entry (pi's shape).
type StoreEntry struct {
	Set    map[string]json.RawMessage `json:"set"`
	Delete []string                   `json:"delete"`
}

// Store keeps store() values across calls: the host reads them from the
// codemode-store entries on the session's branch and appends one entry
// per successful script that wrote.
type Store interface {
	Load(ctx context.Context) (map[string]json.RawMessage, error)
	Save(ctx context.Context, e StoreEntry) error
}

// FoldStore is the store's values after entries, in order: each entry's
// deletes, then its sets.
func FoldStore(entries []StoreEntry) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, e := range entries {
		for _, k := range e.Delete {
			delete(out, k)
		}
		maps.Copy(out, e.Set)
	}
	return out
}

// ModelInfo is a catalog entry as scripts see it (pi's field names).
type ModelInfo struct {
	Type          string   `json:"type"`
	Provider      string   `json:"provider"`
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	API           string   `json:"api"`
	Input         []string `json:"input"`
	ContextWindow int      `json:"contextWindow,omitempty"`
	Reasoning     bool     `json:"reasoning,omitempty"`
}

// Models is gopi's model catalog: chat models only.
type Models interface {
	// List is every model gopi knows.
	List() []ModelInfo
	// Available are those whose provider has credentials.
	Available() []ModelInfo
}

// Config is what the tool is given.
type Config struct {
	// Caller runs the script's tool calls; nil: scripts can call none.
	Caller Caller
	// Tools are the tools scripts may call (never codemode itself),
	// asked once per script and for each description.
	Tools func() []Tool
	// Store keeps store() values; nil: each script starts empty and its
	// writes are dropped.
	Store Store
	// Models is the catalog models.* reads; nil: empty.
	Models Models
	// InlineBudget is codemode.inlineBudget; nil: the default.
	InlineBudget func() int
	// CacheDir keeps wazero's compiled QuickJS between processes ("":
	// none).
	CacheDir string
	// TempDir is where truncated output and images are saved ("": the
	// system's).
	TempDir string
	// MemoryLimit is a script's heap in bytes; 0: [MemoryLimit] (pi's).
	MemoryLimit uint32
}

// Codemode is the codemode tool.
type Codemode struct {
	cfg Config

	once      sync.Once
	engine    *quickjs.Engine
	engineErr error

	mu sync.Mutex // guards desc
	// desc is the description Refresh made last ("": none yet).
	desc string
}

var _ agent.Tool = (*Codemode)(nil)

// New is the tool. The QuickJS engine is compiled on the first script.
func New(cfg Config) *Codemode { return &Codemode{cfg: cfg} }

// Close releases the engine.
func (c *Codemode) Close() error {
	if c.engine != nil {
		return c.engine.Close(context.Background())
	}
	return nil
}

func (c *Codemode) getEngine() (*quickjs.Engine, error) {
	c.once.Do(func() {
		c.engine, c.engineErr = quickjs.NewEngine(context.Background(), c.cfg.CacheDir)
	})
	return c.engine, c.engineErr
}

func (c *Codemode) tools() []Tool {
	if c.cfg.Tools == nil {
		return nil
	}
	var out []Tool
	for _, t := range c.cfg.Tools() {
		if t.Spec.Name != Name {
			out = append(out, t)
		}
	}
	return out
}

func (c *Codemode) budget() int {
	if c.cfg.InlineBudget != nil {
		return c.cfg.InlineBudget()
	}
	return DefaultInlineBudget
}

// Refresh rebuilds the description from the callable tools now. The host
// calls it before each model request, where it holds no lock, so that
// Spec never calls out: hosts ask for tools' specs under their locks.
func (c *Codemode) Refresh() {
	d := Description(c.tools(), c.budget())
	c.mu.Lock()
	c.desc = d
	c.mu.Unlock()
}

// Spec is the tool as the model sees it: the description Refresh made
// last (before any, one that lists no tools).
func (c *Codemode) Spec() llm.ToolSpec {
	c.mu.Lock()
	d := c.desc
	c.mu.Unlock()
	if d == "" {
		d = Description(nil, c.budget())
	}
	return llm.ToolSpec{
		Name:        Name,
		Description: d,
		Parameters:  json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","description":"Raw JavaScript source."}},"required":["code"]}`),
	}
}

// PromptSnippet is the tool's line in the system prompt.
func (c *Codemode) PromptSnippet() string { return "Run JavaScript that calls the other tools" }

// PromptGuidelines are its guidelines there.
func (c *Codemode) PromptGuidelines() []string {
	return []string{"Use codemode to run independent tool calls together (Promise.allSettled), to chain them, or to cut large output down, instead of making many separate calls."}
}

// CallRecord is one of a script's tool calls in the result's details.
type CallRecord struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Args       string  `json:"args"`
	Status     string  `json:"status"` // running, ok, error, cancelled
	DurationMs float64 `json:"durationMs,omitempty"`
	Error      string  `json:"error,omitempty"`
}

// Details are the result's details (pi's).
type Details struct {
	Calls          []CallRecord `json:"calls"`
	FullOutputPath string       `json:"fullOutputPath,omitempty"`
}

const (
	argsPreview  = 200
	errorPreview = 500
)

// preview is s cut to n UTF-16 units, "..." at the end when cut.
func preview(s string, n int) string {
	if jsLen(s) <= n {
		return s
	}
	return HeadUTF16(s, n-3) + "..."
}

// calls keeps the script's call records and reports them as they change.
type calls struct {
	mu     sync.Mutex // guards list and serialises update
	list   []CallRecord
	update func(agent.Result)
}

func (cs *calls) publish() {
	if cs.update != nil {
		cs.update(agent.Result{Content: llm.Contents{}, Details: Details{Calls: append([]CallRecord{}, cs.list...)}})
	}
}

func (cs *calls) add(r CallRecord) int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.list = append(cs.list, r)
	cs.publish()
	return len(cs.list) - 1
}

func (cs *calls) set(i int, f func(*CallRecord)) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	f(&cs.list[i])
	cs.publish()
}

// snapshot is a copy of the records, [] (never nil) for none: pi's
// details always list the calls.
func (cs *calls) snapshot() []CallRecord {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append([]CallRecord{}, cs.list...)
}

// Run runs one script.
func (c *Codemode) Run(ctx context.Context, call agent.Call, update func(agent.Result)) (agent.Result, error) {
	started := time.Now()
	var in struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return agent.Result{}, fmt.Errorf("codemode: reading its arguments: %w", err)
	}
	code, opts, err := parseSource(in.Code)
	if err != nil {
		return agent.ErrorResult("%s", err.Error()), nil
	}
	eng, err := c.getEngine()
	if err != nil {
		return agent.Result{}, err
	}
	rec := &calls{update: update}
	rec.publish()

	tools := c.tools()
	byName := map[string]Tool{}
	var scriptTools []scriptTool
	samples := map[string]string{}
	for _, t := range tools {
		byName[t.Spec.Name] = t
		s := sample(t)
		samples[t.Spec.Name] = s
		scriptTools = append(scriptTools, scriptTool{Name: t.Spec.Name, JSName: identifier(t.Spec.Name), Description: s})
	}
	store := map[string]string{}
	if c.cfg.Store != nil {
		vals, err := c.cfg.Store.Load(ctx)
		if err != nil {
			return agent.Result{}, fmt.Errorf("codemode: loading the store: %w", err)
		}
		for k, v := range vals {
			store[k] = string(v)
		}
	}

	// The script waits for one of the process's workers; the wait counts
	// toward its deadline, and an abort ends it.
	waitCtx := ctx
	var deadline time.Time
	if opts.timeoutMS > 0 {
		deadline = started.Add(time.Duration(opts.timeoutMS) * time.Millisecond)
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	if got := workers.acquire(waitCtx, workerWait); got != slotTaken {
		return notStarted(ctx, got, opts.timeoutMS, started), nil
	}
	var timeout time.Duration
	if !deadline.IsZero() {
		timeout = max(time.Until(deadline), time.Millisecond)
	}
	var n int
	var nMu sync.Mutex
	out := run(ctx, eng, runSpec{
		timeout: timeout,
		code:    code,
		tools:   scriptTools,
		globals: c.globals(tools, samples),
		store:   store,
		memory:  cmp.Or(c.cfg.MemoryLimit, MemoryLimit),
		call: func(callCtx context.Context, name string, args json.RawMessage) (bool, string) {
			nMu.Lock()
			n++
			id := call.ID + "/" + strconv.Itoa(n)
			nMu.Unlock()
			return c.nested(callCtx, rec, byName[name], Nested{ID: id, Parent: call.ID, Tool: name, Args: args})
		},
	})
	workers.release() // run closed the script's VM
	records := rec.snapshot()
	for i := range records {
		if records[i].Status == "running" {
			records[i].Status = "cancelled"
		}
	}

	items := out.output
	if out.ok {
		if c.cfg.Store != nil && len(out.writes) > 0 {
			if err := c.cfg.Store.Save(ctx, storeEntry(out.writes)); err != nil {
				return agent.Result{}, fmt.Errorf("codemode: saving the store: %w", err)
			}
		}
		if out.value != nil {
			items = append(items, item{kind: "text", text: valueText(*out.value)})
		}
	}
	parts := layout(items)
	if !out.ok {
		parts = append(parts, part{text: "Script error:\n" + errorText(out.err, opts.timeoutMS, abortReason(ctx), records)})
	}
	maxTokens := defaultMaxOutputTokens
	if opts.hasMaxOutput {
		maxTokens = opts.maxOutputTokens
	}
	parts, fullPath := budget(joinText(parts), maxTokens, c.cfg.TempDir)
	parts = joinText(saveImages(parts, c.cfg.TempDir))
	res := agent.Result{
		Content: contents(header(out.ok, time.Since(started)), parts),
		Details: Details{Calls: records, FullOutputPath: fullPath},
		IsError: !out.ok,
	}
	return res, nil
}

// notStarted is the result of a script that got no worker: aborted,
// past its deadline, or none free within workerWait.
func notStarted(ctx context.Context, got waitOutcome, timeoutMS int64, started time.Time) agent.Result {
	var why string
	switch {
	case got == waitEnded && ctx.Err() != nil:
		why = "Script aborted: " + abortReason(ctx)
	case got == waitEnded:
		why = fmt.Sprintf("Script timed out: Execution timed out after %d ms while waiting for a free codemode worker", timeoutMS)
	default:
		why = fmt.Sprintf("No codemode worker became free within %d seconds. All %d workers, shared by every session in this process, are held by other scripts. Retry after they finish.",
			int(workerWait.Seconds()), maxWorkers())
	}
	return agent.Result{
		Content: llm.Contents{
			llm.TextContent{Text: header(false, time.Since(started))},
			llm.TextContent{Text: "Script error:\n" + why + "\n\nThe script did not start."},
		},
		Details: Details{Calls: []CallRecord{}},
		IsError: true,
	}
}

// abortReason is what "Script aborted:" says: the cause the call was
// cancelled with, or the text pi's runtime gives an abort without one.
func abortReason(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
		return cause.Error()
	}
	return "This operation was aborted"
}

// valueText is a returned value as text() would add it: strings as they
// are, other values as JSON.
func valueText(js string) string {
	var s string
	if strings.HasPrefix(js, `"`) && json.Unmarshal([]byte(js), &s) == nil {
		return s
	}
	return js
}

// storeEntry turns the prelude's writes into an entry: sets and deletes.
func storeEntry(writes [][]json.RawMessage) StoreEntry {
	e := StoreEntry{Set: map[string]json.RawMessage{}, Delete: []string{}}
	for _, w := range writes {
		if len(w) == 0 {
			continue
		}
		var key string
		if json.Unmarshal(w[0], &key) != nil {
			continue
		}
		if len(w) == 1 {
			e.Delete = append(e.Delete, key)
			continue
		}
		var text string
		if json.Unmarshal(w[1], &text) == nil {
			e.Set[key] = json.RawMessage(text)
		}
	}
	return e
}

// nested runs one of the script's tool calls through the Caller and says
// what the script receives: a tool with an output schema (structured
// content) resolves to it, also when it failed; any other to its text;
// a failure rejects with the tool's error text.
func (c *Codemode) nested(ctx context.Context, rec *calls, t Tool, n Nested) (bool, string) {
	argText := string(n.Args)
	i := rec.add(CallRecord{ID: n.ID, Name: n.Tool, Args: preview(argText, argsPreview), Status: "running"})
	started := time.Now()
	finish := func(status, errText string) {
		rec.set(i, func(r *CallRecord) {
			r.Status = status
			r.DurationMs = float64(time.Since(started).Microseconds()) / 1000
			if errText != "" {
				r.Error = preview(errText, errorPreview)
			}
		})
	}
	if c.cfg.Caller == nil {
		finish("error", "tool calls need a session")
		return false, "Tool calls need a session"
	}
	res, err := c.cfg.Caller.Call(ctx, n)
	if err != nil {
		status := "error"
		if ctx.Err() != nil {
			status = "cancelled"
		}
		finish(status, err.Error())
		return false, err.Error()
	}
	text := resultText(res)
	if res.IsError {
		status := "error"
		if ctx.Err() != nil {
			status = "cancelled"
		}
		msg := text
		if msg == "" {
			msg = fmt.Sprintf("Tool %q failed", n.Tool)
		}
		finish(status, msg)
		if t.Output != nil && res.StructuredContent != nil {
			return true, string(jsonOf(res.StructuredContent))
		}
		return false, msg
	}
	finish("ok", "")
	if t.Output != nil && res.StructuredContent != nil {
		return true, string(jsonOf(res.StructuredContent))
	}
	return true, string(jsonOf(text))
}

// resultText is a result's text blocks, one per line.
func resultText(res agent.Result) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(llm.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}
