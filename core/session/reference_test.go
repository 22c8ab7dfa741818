package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

const refFile = "../../testdata/sessions/pi-0.73.1.jsonl"

// copyFixture copies a testdata file into a temp dir and returns its path.
func copyFixture(t testing.TB, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	require.NoError(t, os.WriteFile(dst, data, 0o644))
	return dst
}

func fileLines(t testing.TB, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			out = append(out, slices.Clone(sc.Bytes()))
		}
	}
	return out
}

func decodeAny(t testing.TB, data []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(data, &v), "%s", data)
	return v
}

func TestReferenceLoads(t *testing.T) {
	path := copyFixture(t, refFile)
	before, _ := os.ReadFile(path)
	s, rep, err := Open(path)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep)
	assert.Zero(t, rep.MigratedFrom)
	after, _ := os.ReadFile(path)
	assert.Equal(t, before, after, "loading a current file must not rewrite it")

	h := s.Header()
	assert.Equal(t, Header{Version: 3, ID: "01a1fe73-4f26-7251-b938-692c21ec01a2",
		Timestamp: "2026-11-21T14:12:12.199Z", Cwd: "/home/user/project"}, h)
	assert.Equal(t, h.ID, s.ID())
	assert.Equal(t, path, s.File())
	assert.Len(t, s.Entries(), 22)
	assert.Equal(t, "c5ad9af7", s.Leaf())
	assert.Equal(t, "reference session", s.Name())
	assert.Len(t, s.Path(), 22)

	ctx := s.Context()
	require.NotNil(t, ctx.Model)
	assert.Equal(t, ModelRef{Provider: "fake", ModelID: "fake-haiku"}, *ctx.Model)
	assert.Equal(t, llm.ThinkingOff, ctx.ThinkingLevel)

	// The compaction keeps from 2faae576 (a model_change), so every message
	// before it survives, after the summary; then the two that follow it.
	var roles []llm.Role
	for _, m := range ctx.Messages {
		roles = append(roles, m.MessageRole())
	}
	assert.Equal(t, []llm.Role{
		llm.RoleCompactionSummary,
		llm.RoleUser, llm.RoleAssistant, llm.RoleToolResult, llm.RoleAssistant,
		llm.RoleBashExecution,
		llm.RoleUser, llm.RoleAssistant, llm.RoleToolResult, llm.RoleAssistant,
		llm.RoleUser, llm.RoleAssistant, llm.RoleToolResult, llm.RoleAssistant,
		llm.RoleUser, llm.RoleAssistant,
	}, roles)
	sum := ctx.Messages[0].(*llm.CompactionSummaryMessage)
	assert.Equal(t, "## Goal\nSummarized conversation.\n\n## Progress\n- Earlier turns were compacted by the fake model.\n", sum.Summary)
	assert.Equal(t, 1697, sum.TokensBefore)
	assert.Equal(t, int64(1795270341270), sum.Timestamp) // 2026-11-21T14:12:21.270Z
	assert.Equal(t, "read: greeting.txt", ctx.Messages[1].(*llm.UserMessage).Content.Text())
	assert.Equal(t, "after-compaction", ctx.Messages[15].(*llm.AssistantMessage).Content.Text())
	tc := ctx.Messages[2].(*llm.AssistantMessage).Content.ToolCalls()
	require.Len(t, tc, 1)
	assert.JSONEq(t, `{"path":"greeting.txt"}`, string(tc[0].Arguments))

	llmMsgs := ConvertToLLM(ctx.Messages)
	require.Len(t, llmMsgs, 16)
	first := llmMsgs[0].(*llm.UserMessage).Content.Text()
	assert.True(t, strings.HasPrefix(first, CompactionSummaryPrefix+"## Goal"), first)
	assert.True(t, strings.HasSuffix(first, "model.\n\n</summary>"), first)
	assert.Equal(t, "Ran `echo from-user-bash`\n```\nfrom-user-bash\n\n```", llmMsgs[5].(*llm.UserMessage).Content.Text())
	for _, m := range llmMsgs {
		assert.Contains(t, []llm.Role{llm.RoleUser, llm.RoleAssistant, llm.RoleToolResult}, m.MessageRole())
	}

	// Before the compaction the context is everything, with the model of
	// the moment.
	require.NoError(t, s.SetLeaf("8ce66bb3"))
	ctx = s.Context()
	assert.Len(t, ctx.Messages, 9)
	assert.Equal(t, ModelRef{Provider: "fake", ModelID: "fake-sonnet"}, *ctx.Model)
	require.NoError(t, s.SetLeaf("a72aa98f"))
	assert.Equal(t, llm.ThinkingHigh, s.Context().ThinkingLevel)
}

// Every line decodes into its typed entry and encodes back to the same JSON
// value (same keys, same values).
func TestReferenceRoundTrip(t *testing.T) {
	lines := fileLines(t, refFile)
	s, rep, err := Open(copyFixture(t, refFile))
	require.NoError(t, err)
	require.True(t, rep.OK())

	hb, err := json.Marshal(s.Header())
	require.NoError(t, err)
	assert.Equal(t, decodeAny(t, lines[0]), decodeAny(t, hb))

	entries := s.Entries()
	require.Len(t, entries, len(lines)-1)
	for i, e := range entries {
		if _, unknown := e.(*UnknownEntry); unknown {
			t.Fatalf("line %d decoded as unknown", i+2)
		}
		b, err := json.Marshal(e)
		require.NoError(t, err)
		assert.Equal(t, decodeAny(t, lines[i+1]), decodeAny(t, b), "line %d", i+2)
	}
}

// keyShape is the set of top-level keys of one line, plus the message's
// keys for message entries, keyed by entry type (and message role).
func keyShape(t testing.TB, lines [][]byte) map[string][]string {
	t.Helper()
	shapes := map[string][]string{}
	for _, l := range lines {
		var obj map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(l, &obj))
		var typ string
		_ = json.Unmarshal(obj["type"], &typ)
		key := typ
		if typ == "message" {
			var msg map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(obj["message"], &msg))
			var role string
			_ = json.Unmarshal(msg["role"], &role)
			key = "message/" + role
			shapes[key+"/message"] = slices.Sorted(maps.Keys(msg))
		}
		shapes[key] = slices.Sorted(maps.Keys(obj))
	}
	return shapes
}

// A file gopi writes has the reference's shape for every entry type the
// reference holds.
func TestWrittenShapeMatchesReference(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, "/home/user/project", Options{})
	require.NoError(t, err)
	exit0 := 0
	must := func(_ string, err error) { t.Helper(); require.NoError(t, err) }
	must(s.AppendModelChange("fake", "fake-sonnet"))
	must(s.AppendThinkingLevelChange(llm.ThinkingOff))
	must(s.AppendMessage(llm.UserText("read: greeting.txt")))
	must(s.AppendMessage(&llm.AssistantMessage{
		Content: llm.Contents{llm.ToolCall{ID: "toolu_1", Name: "read", Arguments: json.RawMessage(`{"path":"greeting.txt"}`)}},
		API:     llm.APIAnthropicMessages, Provider: "fake", Model: "fake-sonnet", ResponseID: "msg_fake",
		StopReason: llm.StopToolUse, Timestamp: llm.Now(),
	}))
	must(s.AppendMessage(&llm.ToolResultMessage{ToolCallID: "toolu_1", ToolName: "read",
		Content: llm.Contents{llm.TextContent{Text: "hello file\n"}}, Timestamp: llm.Now()}))
	must(s.AppendMessage(&llm.BashExecutionMessage{Command: "echo hi", Output: "hi\n", ExitCode: &exit0, Timestamp: llm.Now()}))
	must(s.AppendSessionInfo("  gopi session "))
	must(s.AppendCompaction("summary", s.Entries()[0].Base().ID, 1697,
		map[string]any{"readFiles": []string{}, "modifiedFiles": []string{}}, false, nil))

	got := keyShape(t, fileLines(t, s.File()))
	want := keyShape(t, fileLines(t, refFile))
	for k, w := range want {
		assert.Equal(t, w, got[k], "keys of %s", k)
	}
	assert.Equal(t, "gopi session", s.Name())

	// File name and header as pi writes them.
	h := s.Header()
	assert.Equal(t, strings.NewReplacer(":", "-", ".", "-").Replace(h.Timestamp)+"_"+h.ID+".jsonl", filepath.Base(s.File()))
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, h.Timestamp)
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, h.ID)
	for _, e := range s.Entries() {
		assert.Regexp(t, `^[0-9a-f]{8}$`, e.Base().ID)
		assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, e.Base().Timestamp)
	}

	// And it loads back to the same entries.
	re, rep, err := Open(s.File())
	require.NoError(t, err)
	assert.True(t, rep.OK())
	assert.Equal(t, s.Leaf(), re.Leaf())
	assert.Equal(t, len(s.Entries()), len(re.Entries()))
	assert.Equal(t, s.Context().Messages[0], re.Context().Messages[0])
}
