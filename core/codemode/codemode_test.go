package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeCaller serves read (the file's text from files) and bash (the
// command's text as output, exit code 1 when it says "fail"); a tool
// named block waits for its context to end and reports it on ended.
type fakeCaller struct {
	mu      sync.Mutex
	calls   []Nested
	files   map[string]string
	started chan string
	ended   chan string
	barrier *sync.WaitGroup // each bash call waits for the others
}

func (f *fakeCaller) Call(ctx context.Context, n Nested) (agent.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, n)
	f.mu.Unlock()
	if f.started != nil {
		f.started <- n.Tool
	}
	var args map[string]any
	_ = json.Unmarshal(n.Args, &args)
	switch n.Tool {
	case "read":
		text, ok := f.files[args["path"].(string)]
		if !ok {
			return agent.ErrorResult("ENOENT: no such file or directory, access '%s'", args["path"]), nil
		}
		return agent.Result{Content: llm.Contents{llm.TextContent{Text: text}}, StructuredContent: text}, nil
	case "bash":
		cmd, _ := args["command"].(string)
		if f.barrier != nil && strings.HasPrefix(cmd, "echo") {
			f.barrier.Done()
			f.barrier.Wait()
		}
		code := 0
		res := agent.TextResult(cmd)
		if strings.Contains(cmd, "fail") {
			code = 1
			res = agent.ErrorResult("%s\n\nCommand exited with code 1", cmd)
		}
		res.StructuredContent = map[string]any{"output": cmd, "truncated": false, "exit_code": code, "wall_time_seconds": 0}
		return res, nil
	case "block":
		<-ctx.Done()
		if f.ended != nil {
			f.ended <- n.Tool
		}
		return agent.Result{}, ctx.Err()
	}
	return agent.Result{}, errors.New("unknown tool " + n.Tool)
}

var bashOutput = json.RawMessage(`{"type":"object","properties":{"exit_code":{"type":"number"},"full_output_path":{"type":"string","description":"Full output, when truncated"},"output":{"type":"string","description":"Combined stdout and stderr, possibly truncated"},"truncated":{"type":"boolean"},"wall_time_seconds":{"type":"number"}},"required":["output","truncated","exit_code","wall_time_seconds"]}`)

func testTools() []Tool {
	return []Tool{
		{Spec: llm.ToolSpec{Name: "read", Description: "Read the contents of a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Path to the file to read (relative or absolute)"},"offset":{"type":"number","description":"Line number to start reading from (1-indexed)"},"limit":{"type":"number","description":"Maximum number of lines to read"}},"required":["path"]}`)},
			Output: json.RawMessage(`{"anyOf":[{"type":"string"},{"type":"object","properties":{"type":{"const":"image"},"data":{"type":"string"},"mimeType":{"type":"string"},"note":{"type":"string"}},"required":["type","data","mimeType","note"]}]}`)},
		{Spec: llm.ToolSpec{Name: "bash", Description: "Execute a bash command.", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"Shell command to execute"},"timeout":{"type":"number","description":"Timeout in seconds (optional, no default timeout)"}},"required":["command"]}`)},
			Output: bashOutput},
		{Spec: llm.ToolSpec{Name: "block", Description: "Waits until cancelled.", Parameters: json.RawMessage(`{"type":"object"}`)}},
		{Spec: llm.ToolSpec{Name: "mcp__dev-radius__search_issues", Description: "Search the issue tracker for issues matching a query.", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
			Namespace: &Namespace{Name: "dev-radius", Description: "Radius, the team's issue tracker"}, Unlisted: true},
		{Spec: llm.ToolSpec{Name: "mcp__dev-radius__create_issue", Description: "Create a new issue.", Parameters: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`)},
			Namespace: &Namespace{Name: "dev-radius", Description: "Radius, the team's issue tracker"}, Unlisted: true},
	}
}

type memStore struct {
	mu      sync.Mutex
	entries []StoreEntry
}

func (m *memStore) Load(context.Context) (map[string]json.RawMessage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return FoldStore(m.entries), nil
}

func (m *memStore) Save(_ context.Context, e StoreEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = append(m.entries, e)
	return nil
}

type fakeModels struct{}

func (fakeModels) List() []ModelInfo {
	return []ModelInfo{{Type: "chat", Provider: "anthropic", ID: "claude-x", Name: "Claude X", API: "anthropic-messages", Input: []string{"text", "image"}}}
}
func (fakeModels) Available() []ModelInfo { return nil }

var (
	shared     *Codemode
	sharedOnce sync.Once
)

// newTool is a codemode tool over the fakes; the engine is shared, so the
// module is compiled once per test binary.
func newTool(t *testing.T, caller Caller, store Store) *Codemode {
	t.Helper()
	sharedOnce.Do(func() { shared = New(Config{}) })
	eng, err := shared.getEngine()
	if err != nil {
		t.Fatal(err)
	}
	c := New(Config{Caller: caller, Tools: testTools, Store: store, Models: fakeModels{}, TempDir: t.TempDir(), MemoryLimit: 32 << 20})
	c.once.Do(func() { c.engine = eng })
	return c
}

var wallTime = regexp.MustCompile(`Wall time \d+\.\d seconds`)

// runScript runs code and gives the result's text blocks joined by "|"
// with the wall time as "Wall time T".
func runScript(t *testing.T, c *Codemode, ctx context.Context, code string) (string, agent.Result) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"code": code})
	res, err := c.Run(ctx, agent.Call{ID: "call1", Name: Name, Args: args}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, b := range res.Content {
		switch b := b.(type) {
		case llm.TextContent:
			parts = append(parts, b.Text)
		case llm.ImageContent:
			parts = append(parts, "<image "+b.MimeType+">")
		}
	}
	return wallTime.ReplaceAllString(strings.Join(parts, "|"), "Wall time T"), res
}

// The results of these scripts are pi 1.6.0's, block for block (taken
// from pi's own executeCodemode on the same scripts).
func TestResultsArePis(t *testing.T) {
	c := newTool(t, &fakeCaller{}, nil)
	ok := "Script completed\nWall time T\nOutput:\n"
	failed := "Script failed\nWall time T\nOutput:\n"
	for _, tc := range []struct{ code, want string }{
		{`text("a"); console.log("c1", {x:1}, 2); text({b:2}); return [1,2]`,
			ok + "|==> text 1/3 <==\na\n==> text 2/3 <==\n{\"b\":2}\n==> text 3/3 <==\n[1,2]\n<console_output>\nc1 {\"x\":1} 2\n</console_output>"},
		{`return "only"`, ok + "|only"},
		{`console.log("x")`, ok + "|<console_output>\nx\n</console_output>"},
		{`text("partial"); null.foo`, failed + "|partial\nScript error:\nTypeError: cannot read property 'foo' of null\n    at <anonymous> (codemode.js:1:45)\n\nNo tool calls were made."},
		{`throw "str"`, failed + "|Script error:\nError: str\n\nNo tool calls were made."},
		{`exit(); text("no")`, ok},
		{`await new Promise(()=>{})`, failed + "|Script error:\nError: The script is waiting on a promise that can never settle: no tool call is pending, and there are no timers.\n\nNo tool calls were made."},
		{`syntax error here`, failed + "|Script error:\nSyntaxError: expecting ';'\n    at codemode.js:1:36\n\nNo tool calls were made."},
		{`return [typeof require, typeof process, typeof setTimeout, typeof fetch]`, ok + `|["undefined","undefined","undefined","undefined"]`},
		{`text(undefined); text(null); text(3); text("")`, ok + "|==> text 1/4 <==\nundefined\n==> text 2/4 <==\nnull\n==> text 3/4 <==\n3\n==> text 4/4 <==\n"},
		{`return undefined`, ok},
		{`return null`, ok + "|null"},
		{`text("x"); console.error(new Error("boom"))`, ok + "|x\n<console_output>\nError: boom\n    at <anonymous> (codemode.js:1:58)\n</console_output>"},
		{`class E extends Error {}; throw new E("sub")`, failed + "|Script error:\nError: sub\n    at E (codemode.js:1:1)\n    at <anonymous> (codemode.js:1:65)\n\nNo tool calls were made."},
		{`await Promise.reject(42)`, failed + "|Script error:\nError: 42\n\nNo tool calls were made."},
		{`store("k", 1); return load("k")`, ok + "|1"},
	} {
		got, res := runScript(t, c, context.Background(), tc.code)
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.code, got, tc.want)
		}
		if res.IsError != strings.HasPrefix(tc.want, "Script failed") {
			t.Errorf("%s: isError %v", tc.code, res.IsError)
		}
	}
}

func TestSourceErrors(t *testing.T) {
	c := newTool(t, &fakeCaller{}, nil)
	for code, want := range map[string]string{
		"\n// @options: {}\nreturn 1":              "the // @options: line must be the first line of the input; found one on line 2",
		"// @options: {\"bogus\": 1}\nreturn 1":    "@options supports only `max_output_tokens` and `timeout_ms`; got `bogus`",
		"// @options: {\"timeout_ms\": 0}\nreturn": "@options field `timeout_ms` must be a positive integer up to 2147483647",
		"   ":             "expected JavaScript source (not empty)",
		"// @options: {}": "the @options line must be followed by JavaScript on the next lines",
	} {
		got, res := runScript(t, c, context.Background(), code)
		if !res.IsError || !strings.HasPrefix(got, want) {
			t.Errorf("%q: got %q (isError %v), want %q", code, got, res.IsError, want)
		}
	}
}

func TestToolCallsInParallel(t *testing.T) {
	var barrier sync.WaitGroup
	barrier.Add(2)
	f := &fakeCaller{files: map[string]string{"a.txt": "alpha\nbeta\n"}, barrier: &barrier}
	c := newTool(t, f, nil)
	got, res := runScript(t, c, context.Background(), `
const [a, b, file] = await Promise.all([
  tools.bash({ command: "echo one" }),
  tools.bash({ command: "echo two" }),
  tools.read({ path: "a.txt" }),
]);
const failed = await tools.bash({ command: "fail" });
const missing = await tools.read({ path: "nope" }).catch(e => e.message);
return { a: a.output, b: b.exit_code, lines: file.split("\n").length, failed: failed.exit_code, missing };`)
	want := `Script completed` + "\nWall time T\nOutput:\n|" + `{"a":"echo one","b":0,"lines":3,"failed":1,"missing":"ENOENT: no such file or directory, access 'nope'"}`
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	d := res.Details.(Details)
	if len(d.Calls) != 5 {
		t.Fatalf("calls %+v", d.Calls)
	}
	for _, c := range f.calls {
		if c.Parent != "call1" || !strings.HasPrefix(c.ID, "call1/") {
			t.Errorf("nested call %+v", c)
		}
	}
	statuses := map[string]int{}
	for _, r := range d.Calls {
		statuses[r.Status]++
	}
	if statuses["ok"] != 3 || statuses["error"] != 2 {
		t.Errorf("statuses %v", statuses)
	}
}

func TestFailedCallsAreListed(t *testing.T) {
	c := newTool(t, &fakeCaller{files: map[string]string{}}, nil)
	got, _ := runScript(t, c, context.Background(), `await tools.bash({command: "ls"}); await tools.read({path: "x"})`)
	want := "Script failed\nWall time T\nOutput:\n|Script error:\nError: ENOENT: no such file or directory, access 'x'\n    at settle (native)\n\nTool calls made before the failure (they are not undone): bash (ok), read (error)"
	if !strings.HasPrefix(got, "Script failed") || !strings.Contains(got, "Error: ENOENT") || !strings.HasSuffix(got, "Tool calls made before the failure (they are not undone): bash (ok), read (error)") {
		t.Fatalf("got %q\nwant like %q", got, want)
	}
}

func TestDeadlineStopsTheScriptAndTheToolGoesOn(t *testing.T) {
	c := newTool(t, &fakeCaller{}, nil)
	got, res := runScript(t, c, context.Background(), "// @options: {\"timeout_ms\": 1000}\ntext(\"before\"); while(true){}")
	want := "Script failed\nWall time T\nOutput:\n|before\nScript error:\nScript timed out: Execution timed out after 1000 ms\n\nNo tool calls were made."
	if got != want || !res.IsError {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// A loop that catches everything is stopped too, and the next script runs.
	got, _ = runScript(t, c, context.Background(), "// @options: {\"timeout_ms\": 100}\nfor (;;) { try { while (true) {} } catch (e) {} }")
	if !strings.Contains(got, "Script timed out: Execution timed out after 100 ms") {
		t.Fatalf("got %q", got)
	}
	if got, _ := runScript(t, c, context.Background(), `return 1 + 1`); !strings.HasSuffix(got, "|2") {
		t.Fatalf("after a timeout: %q", got)
	}
}

func TestDeadlineCancelsRunningCalls(t *testing.T) {
	f := &fakeCaller{ended: make(chan string, 1)}
	c := newTool(t, f, nil)
	// The deadline counts from the script's start, so it must leave time
	// for the call to begin on a loaded machine; the call itself never ends.
	got, res := runScript(t, c, context.Background(), "// @options: {\"timeout_ms\": 3000}\nawait tools.block({})")
	if !strings.Contains(got, "Script timed out") || !strings.HasSuffix(got, "block (cancelled)") {
		t.Fatalf("got %q", got)
	}
	select {
	case <-f.ended:
	default:
		t.Fatal("the running call was not cancelled before Run returned")
	}
	if d := res.Details.(Details); d.Calls[0].Status != "cancelled" {
		t.Fatalf("calls %+v", d.Calls)
	}
}

func TestAbortCancelsTheScriptAndItsCalls(t *testing.T) {
	f := &fakeCaller{started: make(chan string, 1), ended: make(chan string, 1)}
	c := newTool(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-f.started
		cancel()
	}()
	got, res := runScript(t, c, ctx, `text("waiting"); await tools.block({}); text("never")`)
	want := "Script failed\nWall time T\nOutput:\n|waiting\nScript error:\nScript aborted: This operation was aborted\n\nTool calls made before the failure (they are not undone): block (cancelled)"
	if got != want || !res.IsError {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if name := <-f.ended; name != "block" {
		t.Fatal(name)
	}
}

func TestUnawaitedCallsAreCancelledWhenTheScriptEnds(t *testing.T) {
	f := &fakeCaller{ended: make(chan string, 1)}
	c := newTool(t, f, nil)
	got, res := runScript(t, c, context.Background(), `tools.block({}); return "done"`)
	if !strings.HasSuffix(got, "|done") || res.IsError {
		t.Fatalf("got %q", got)
	}
	select {
	case <-f.ended:
	default:
		t.Fatal("the unawaited call still runs")
	}
	if d := res.Details.(Details); d.Calls[0].Status != "cancelled" {
		t.Fatalf("calls %+v", d.Calls)
	}
}

func TestMemoryLimit(t *testing.T) {
	c := newTool(t, &fakeCaller{}, nil)
	c.cfg.MemoryLimit = 8 << 20
	got, res := runScript(t, c, context.Background(), `let a = []; for (;;) a.push("x".repeat(4096) + a.length)`)
	if !res.IsError || !strings.Contains(got, "Script error:\nInternalError: out of memory\n    at <anonymous> (codemode.js:1:") {
		t.Fatalf("got %q", got)
	}
	got, _ = runScript(t, c, context.Background(), `let a = []; try { for (;;) a.push("x".repeat(4096) + a.length) } catch (e) { a = null; return String(e) }`)
	if !strings.HasSuffix(got, "|InternalError: out of memory") {
		t.Fatalf("a script cannot catch its own out of memory: %q", got)
	}
}

func TestNoHostAPI(t *testing.T) {
	c := newTool(t, &fakeCaller{}, nil)
	got, _ := runScript(t, c, context.Background(), `
const names = ["require", "process", "fetch", "setTimeout", "setInterval", "setImmediate", "XMLHttpRequest", "WebSocket", "WebAssembly", "std", "os", "Deno", "Bun", "bridge", "__bridge"];
const reachable = names.filter(n => typeof globalThis[n] !== "undefined");
let imported = "no";
try { await import("os"); imported = "yes" } catch (e) { imported = String(e) }
return { reachable, imported, globals: Object.keys(globalThis).sort() }`)
	want := `{"reachable":[],"imported":"ReferenceError: could not load module 'os'","globals":["ALL_TOOLS","console","describeNamespace","describeTool","exit","image","load","models","performance","searchTools","store","text","tools"]}`
	if !strings.HasSuffix(got, "|"+want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestStorePersistsOnSuccessOnly(t *testing.T) {
	st := &memStore{}
	c := newTool(t, &fakeCaller{}, st)
	runScript(t, c, context.Background(), `store("a", {n: 1}); store("b", [1]); store("c", "x")`)
	runScript(t, c, context.Background(), `store("a", 2); throw new Error("no")`)
	runScript(t, c, context.Background(), `store("b", undefined)`)
	got, _ := runScript(t, c, context.Background(), `return [load("a"), load("b"), load("c")]`)
	if !strings.HasSuffix(got, `|[{"n":1},null,"x"]`) {
		t.Fatalf("got %q", got)
	}
	if len(st.entries) != 2 || string(st.entries[0].Set["a"]) != `{"n":1}` || len(st.entries[1].Delete) != 1 || st.entries[1].Delete[0] != "b" {
		t.Fatalf("entries %+v", st.entries)
	}
	b, _ := json.Marshal(st.entries[1])
	if string(b) != `{"set":{},"delete":["b"]}` {
		t.Fatalf("entry data %s", b)
	}
	got, _ = runScript(t, c, context.Background(), `store("big", "x".repeat(300000))`)
	if !strings.Contains(got, "RangeError: store(\"big\") value has 300002 characters of JSON, over the limit of 262144.") {
		t.Fatalf("got %q", got)
	}
}

func TestDiscovery(t *testing.T) {
	c := newTool(t, &fakeCaller{}, nil)
	got, _ := runScript(t, c, context.Background(), `
const found = await searchTools("create an issue");
const inNs = await searchTools("issues", { namespace: "dev_radius", limit: 1 });
const ns = await describeNamespace("dev-radius");
const d = await describeTool("mcp__dev_radius__create_issue");
const none = await describeTool("nope");
return { all: ALL_TOOLS.map(t => t.name), found: found.map(t => t.name), inNs: inNs.map(t => t.name), ns, d: d.includes("declare const tools: { mcp__dev_radius__create_issue(args: { title?: string; }): Promise<string>; };"), none: none === undefined }`)
	want := `{"all":["read","bash","block","mcp__dev_radius__search_issues","mcp__dev_radius__create_issue"],"found":["mcp__dev_radius__create_issue","mcp__dev_radius__search_issues"],"inNs":["mcp__dev_radius__search_issues"],"ns":{"name":"dev-radius","description":"Radius, the team's issue tracker","tools":["mcp__dev_radius__search_issues","mcp__dev_radius__create_issue"]},"d":true,"none":true}`
	if !strings.HasSuffix(got, "|"+want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	got, _ = runScript(t, c, context.Background(), `await tools.nope({})`)
	if !strings.Contains(got, "TypeError: tools.nope does not exist. Available: read, bash, block, mcp__dev_radius__search_issues, mcp__dev_radius__create_issue. ALL_TOOLS lists every tool; searchTools(query) finds tools by topic.") {
		t.Fatalf("got %q", got)
	}
	// A tool is callable by its identifier and by its name.
	got, _ = runScript(t, c, context.Background(), `return [typeof tools.mcp__dev_radius__create_issue, typeof tools["mcp__dev-radius__create_issue"]]`)
	if !strings.HasSuffix(got, `|["function","function"]`) {
		t.Fatalf("got %q", got)
	}
}

func TestModels(t *testing.T) {
	c := newTool(t, &fakeCaller{}, nil)
	got, _ := runScript(t, c, context.Background(), `
const list = await models.list();
const classifiers = await models.getModelsOfType("classifier");
const one = await models.getModelOfType("chat", "anthropic", "claude-x");
const err = await models.classify({provider: "x", id: "y"}, {}).catch(e => e.message);
return { list: list.map(m => m.provider + "/" + m.id), classifiers, one: one.name, err }`)
	want := `{"list":["anthropic/claude-x"],"classifiers":[],"one":"Claude X","err":"models.classify(): gopi has no classifier or image models; models.list() shows the chat models, which scripts cannot run"}`
	if !strings.HasSuffix(got, "|"+want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestOutputBudgetKeepsStartAndEnd(t *testing.T) {
	c := newTool(t, &fakeCaller{}, nil)
	got, res := runScript(t, c, context.Background(), "// @options: {\"max_output_tokens\": 10}\nreturn \"x\".repeat(100) + \"\\n\" + \"y\".repeat(100)")
	d := res.Details.(Details)
	want := "Script completed\nWall time T\nOutput:\n|Warning: truncated output (original token count: 51)\nTotal output lines: 2\n\nxxxxxxxxxxxxxxxxxxxx…41 tokens truncated…yyyyyyyyyyyyyyyyyyyy\n\n[Full output: " + d.FullOutputPath + " (read with offset/limit)]"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	full, err := os.ReadFile(d.FullOutputPath)
	if err != nil || string(full) != strings.Repeat("x", 100)+"\n"+strings.Repeat("y", 100) {
		t.Fatalf("full output %q, %v", full, err)
	}
	if fi, _ := os.Stat(d.FullOutputPath); fi.Mode().Perm() != 0o600 {
		t.Fatalf("full output's mode %v", fi.Mode())
	}
}

func TestOutputLimitFailsTheScript(t *testing.T) {
	c := newTool(t, &fakeCaller{}, nil)
	got, res := runScript(t, c, context.Background(), `const mb = "x".repeat(1 << 20); for (;;) text(mb)`)
	if !res.IsError || !strings.Contains(got, "RangeError: the script's output passed 16777216 characters or 100000 text(), image() and console calls.") {
		t.Fatalf("got %.300q", got)
	}
}

// A 1x1 PNG.
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

func TestImage(t *testing.T) {
	c := newTool(t, &fakeCaller{}, nil)
	got, res := runScript(t, c, context.Background(), `text("look"); image({type: "image", data: "`+png+`", mimeType: "image/png"}); image("data:image/png;base64,`+png+`")`)
	img := res.Content[1].(llm.TextContent).Text
	path := strings.TrimSuffix(strings.TrimPrefix(img, "look\n[Image saved to "), " (image/png, 70B)]")
	if !strings.HasSuffix(path, ".png") {
		t.Fatalf("got %q", got)
	}
	want := "Script completed\nWall time T\nOutput:\n|look\n[Image saved to " + path + " (image/png, 70B)]|<image image/png>|[Image saved to " + path + " (image/png, 70B)]|<image image/png>"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	got, _ = runScript(t, c, context.Background(), `image("https://example.com/a.png")`)
	if !strings.Contains(got, "TypeError: image() does not fetch remote URLs") {
		t.Fatalf("got %q", got)
	}
}

func TestDescription(t *testing.T) {
	tools := testTools()
	d := Description(tools, DefaultInlineBudget)
	for _, want := range []string{
		"### `bash`\nExecute a bash command.\n\ncodemode tool declaration:\n```ts\ndeclare const tools: { bash(args: {\n  // Shell command to execute\n  command: string;\n  // Timeout in seconds (optional, no default timeout)\n  timeout?: number;\n}): Promise<{\n  exit_code: number;\n  // Full output, when truncated\n  full_output_path?: string;\n  // Combined stdout and stderr, possibly truncated\n  output: string;\n  truncated: boolean;\n  wall_time_seconds: number;\n}>; };\n```",
		"}): Promise<string | { data: string; mimeType: string; note: string; type: \"image\"; }>; };",
		"### `block`\nWaits until cancelled.\n\ncodemode tool declaration:\n```ts\ndeclare const tools: { block(args: Record<string, unknown>): Promise<string>; };\n```",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("the description lacks\n%s\n\n%s", want, d)
		}
	}
	if strings.Contains(d, "mcp__dev") {
		t.Error("unlisted tools are described")
	}
	// Listed MCP tools are grouped under their namespace; a budget that
	// fits one section lists the cheapest of the first group.
	for i := range tools {
		tools[i].Unlisted = false
	}
	d = Description(tools, DefaultInlineBudget)
	if !strings.Contains(d, "## dev-radius\nRadius, the team's issue tracker\n\n### `mcp__dev_radius__search_issues` (`mcp__dev-radius__search_issues`)") {
		t.Errorf("no namespace group:\n%s", d)
	}
	d = Description(tools, 0)
	if !strings.Contains(d, "Nested tools:\n\n## dev-radius (tools not listed)\nRadius, the team's issue tracker") || strings.Contains(d, "###") {
		t.Errorf("budget 0:\n%s", d)
	}
	d = Description(tools, 60)
	if !strings.Contains(d, "### `block`") || strings.Contains(d, "### `bash`") || !strings.Contains(d, "## dev-radius (tools not listed)") {
		t.Errorf("budget 60:\n%s", d)
	}
	// Every group places its cheapest tool before any group places a
	// second: some budget lists block and one dev-radius tool only.
	found := false
	for b := 60; b < 400 && !found; b++ {
		d = Description(tools, b)
		found = strings.Contains(d, "## dev-radius (some tools not listed)") && strings.Count(d, "### ") == 2 && strings.Contains(d, "### `block`")
	}
	if !found {
		t.Error("no budget lists one tool of each group")
	}
}

func TestFoldStore(t *testing.T) {
	got := FoldStore([]StoreEntry{
		{Set: map[string]json.RawMessage{"a": json.RawMessage(`1`), "b": json.RawMessage(`2`)}},
		{Set: map[string]json.RawMessage{"a": json.RawMessage(`3`)}, Delete: []string{"b"}},
		{Delete: []string{"a"}, Set: map[string]json.RawMessage{"a": json.RawMessage(`4`)}},
	})
	if len(got) != 1 || string(got["a"]) != "4" {
		t.Fatalf("got %v", got)
	}
}

func TestRank(t *testing.T) {
	docs := []searchDoc{
		{name: "window", text: "Focus a window"},
		{name: "mcp__peekaboo__screenshot", text: "Take a screenshot of the screen or of a window", namespace: "peekaboo macOS automation"},
		{name: "mcp__peekaboo__app", text: "Launch or quit applications", namespace: "peekaboo macOS automation"},
		{name: "mcp__app__thread_read", text: "Read a thread"},
	}
	for q, want := range map[string]string{
		"screenshot window": "mcp__peekaboo__screenshot",
		"peekaboo app":      "mcp__peekaboo__app",
		"thread_read":       "mcp__app__thread_read",
		"the":               "",
	} {
		got := rank(q, docs, 1)
		if want == "" && len(got) != 0 || want != "" && (len(got) != 1 || got[0] != want) {
			t.Errorf("%q: got %v, want %s", q, got, want)
		}
	}
}

func TestRunReturnsOnlyWhenItsCallsHaveEnded(t *testing.T) {
	// Many parallel calls, a failure in the middle: every goroutine is
	// waited for (goleak checks the package at the end too).
	f := &fakeCaller{files: map[string]string{"a": "1"}}
	c := newTool(t, f, nil)
	got, _ := runScript(t, c, context.Background(), `
const ps = []; for (let i = 0; i < 50; i++) ps.push(tools.read({ path: i === 25 ? "missing" : "a" }));
const rs = await Promise.allSettled(ps);
return rs.filter(r => r.status === "fulfilled").length`)
	if !strings.HasSuffix(got, "|49") {
		t.Fatalf("got %q", got)
	}
	_ = time.Second
}

func TestScriptNote(t *testing.T) {
	tools := testTools()
	assert := func(got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	}
	assert(ScriptNote(tools[0]), "Codemode: `tools.read(args)` resolves to `string | { data: string; mimeType: string; note: string; type: \"image\"; }`.")
	assert(ScriptNote(tools[1]), "Codemode: `tools.bash(args)` resolves to `{ exit_code, full_output_path?, output, truncated, wall_time_seconds }`.")
	assert(ScriptNote(tools[2]), "Codemode: `tools.block(args)` resolves to a string.")
	mcpResult := Tool{Spec: llm.ToolSpec{Name: "mcp__x__y"}, Output: json.RawMessage(`{"type":"object","properties":{"content":{"type":"array"},"structuredContent":{"type":"object","properties":{"action":{"const":"start"},"id":{"type":"string"}},"required":["action"]},"isError":{"type":"boolean"}},"required":["content"]}`)}
	assert(ScriptNote(mcpResult), "Codemode: `tools.mcp__x__y(args)` resolves to `{ content, structuredContent?: { action: \"start\", id? }, isError? }`.")
	union := Tool{Spec: llm.ToolSpec{Name: "u"}, Output: json.RawMessage(`{"oneOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"type":"number"}},"required":["b"]}]}`)}
	assert(ScriptNote(union), "Codemode: `tools.u(args)` resolves to `{ a? } | { b }`.")
}

// The built-ins are frozen before the script runs, as pi freezes them: a
// script that patches one cannot spoil what the prelude reports, and an
// Error subclass may still name its instances.
func TestBuiltinsAreFrozen(t *testing.T) {
	c := newTool(t, &fakeCaller{}, nil)
	ok := "Script completed\nWall time T\nOutput:\n|"
	for _, tc := range []struct{ code, want string }{
		{`Array.prototype.toJSON = () => "spoiled"; return [1, 2]`, ok + "[1,2]"},
		{`Object.prototype.toJSON = () => "spoiled"; text({ a: 1 }); return { b: 2 }`, ok + "==> text 1/2 <==\n{\"a\":1}\n==> text 2/2 <==\n{\"b\":2}"},
		{`JSON = { stringify: () => "spoiled" }; return [1]`, ok + "[1]"},
		{`return [Object.isFrozen(Array.prototype), Object.isFrozen(JSON), Object.isFrozen(Object.getPrototypeOf([].values())), Object.isFrozen(Math)]`, ok + "[true,true,true,true]"},
		{`class E extends Error { constructor(m) { super(m); this.name = "E"; } }; const o = {}; o.toString = () => "own"; return [String(new E("x")), String(o)]`, ok + `["E: x","own"]`},
		{`"use strict"; Array.prototype.push = null`, "Script failed\nWall time T\nOutput:\n|Script error:\nTypeError: "},
	} {
		got, _ := runScript(t, c, context.Background(), tc.code)
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.code, got, tc.want)
		}
	}
}

// Scripts share the process's workers (PI_CODEMODE_MAX_WORKERS, pi's two
// by default): at capacity a script waits, its wait counts toward its
// deadline, an abort ends it, and a freed worker goes to the first in
// line.
func TestScriptsWaitForAFreeWorker(t *testing.T) {
	t.Setenv("PI_CODEMODE_MAX_WORKERS", "1")
	f := &fakeCaller{started: make(chan string, 1), ended: make(chan string, 1)}
	c := newTool(t, f, nil)
	holdCtx, release := context.WithCancel(context.Background())
	held := make(chan string, 1)
	go func() {
		got, _ := runScript(t, c, holdCtx, `await tools.block({})`)
		held <- got
	}()
	<-f.started // the first script runs, and holds the only worker

	got, res := runScript(t, c, context.Background(), "// @options: {\"timeout_ms\": 50}\nreturn 1")
	want := "Script failed\nWall time T\nOutput:\n|Script error:\nScript timed out: Execution timed out after 50 ms while waiting for a free codemode worker\n\nThe script did not start."
	if got != want || !res.IsError {
		t.Fatalf("a deadline while waiting:\n got %q\nwant %q", got, want)
	}

	abortCtx, abort := context.WithCancel(context.Background())
	args, _ := json.Marshal(map[string]string{"code": `return "ran"`})
	res, err := c.Run(abortCtx, agent.Call{ID: "call2", Name: Name, Args: args}, func(agent.Result) { abort() })
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[1].(llm.TextContent).Text; text != "Script error:\nScript aborted: This operation was aborted\n\nThe script did not start." {
		t.Fatalf("an abort while waiting: %q", text)
	}

	saved := workerWait
	workerWait = 10 * time.Millisecond
	got, _ = runScript(t, c, context.Background(), `return 1`)
	workerWait = saved
	if !strings.Contains(got, "No codemode worker became free within 0 seconds. All 1 workers, shared by every session in this process, are held by other scripts.") {
		t.Fatalf("no worker within the wait: %q", got)
	}

	// The next script in line runs once the worker is free.
	waited := make(chan string, 1)
	go func() {
		got, _ := runScript(t, c, context.Background(), `return "after"`)
		waited <- got
	}()
	for {
		workers.mu.Lock()
		queued := len(workers.queue)
		workers.mu.Unlock()
		if queued == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	release()
	<-f.ended
	if got := <-held; !strings.Contains(got, "Script aborted") {
		t.Fatalf("the first script: %q", got)
	}
	if got := <-waited; !strings.HasSuffix(got, "|after") {
		t.Fatalf("the waiting script: %q", got)
	}
}
