package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/core/session"
)

func permOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	return info.Mode().Perm()
}

// userTexts lists the text of the user messages of every entry of a
// session file, all branches, in file order.
func userTexts(st *session.Store) []string {
	var out []string
	for _, e := range st.Entries() {
		if me, ok := e.(*session.MessageEntry); ok && me.Role() == llm.RoleUser {
			out = append(out, me.Message().(*llm.UserMessage).Content.Text())
		}
	}
	return out
}

// Issue 25: a session holds what the agent read, so gopi makes its file
// 0600 and the directories it makes for it 0700, as the bash full-output
// files are; a new HTML export is 0600 too. A file that exists keeps its
// mode.
func TestRPCSessionFilesArePrivate(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("secret reply"), llmtest.Text("again"))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "read .env"})
	p.idle()
	file := p.state("2")["sessionFile"].(string)
	assert.Equal(t, os.FileMode(0o600), permOf(t, file), "the session file")
	assert.Equal(t, os.FileMode(0o700), permOf(t, filepath.Dir(file)), "the cwd's session directory")
	assert.Equal(t, os.FileMode(0o700), permOf(t, filepath.Join(w.agentDir, "sessions")), "the sessions directory")

	page := filepath.Join(w.cwd, "page.html")
	p.ok("3", map[string]any{"type": "export_html", "outputPath": page})
	assert.Equal(t, os.FileMode(0o600), permOf(t, page), "a new export")

	// A session file the user opened up keeps its mode.
	shared := filepath.Join(w.cwd, "shared.jsonl")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(shared, data, 0o644))
	require.NoError(t, os.Chmod(shared, 0o644))
	p.ok("4", map[string]any{"type": "switch_session", "sessionPath": shared})
	p.ok("5", map[string]any{"type": "prompt", "message": "more"})
	p.idle()
	assert.Equal(t, 0, p.exit())
	assert.Equal(t, os.FileMode(0o644), permOf(t, shared))
	assert.Equal(t, []string{"read .env", "more"}, userTexts(loadSession(t, shared)))
}

// Issue 25: switch_session and --session on a file that is not a session
// (NOTES.md) used to succeed, and the next prompt replaced the notes with
// a session. Such a file is refused and left as it was. export_html over
// a session file is refused too.
func TestRPCNonSessionFilesAreRefusedAndLeftAlone(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("fine"))
	notes := filepath.Join(w.cwd, "NOTES.md")
	const text = "# Notes\n\n- call the plumber\n"
	require.NoError(t, os.WriteFile(notes, []byte(text), 0o644))

	p := w.start()
	r := p.call("1", map[string]any{"type": "switch_session", "sessionPath": "NOTES.md"})
	assert.Equal(t, false, r["success"])
	assert.Contains(t, r.str("error"), "not a session file")
	assert.NotEqual(t, notes, p.state("2")["sessionFile"])
	p.ok("3", map[string]any{"type": "prompt", "message": "hello"})
	p.idle()
	// An export over a session file would leave one that does not open.
	file := p.state("4")["sessionFile"].(string)
	r = p.call("5", map[string]any{"type": "export_html", "outputPath": file})
	assert.Equal(t, false, r["success"])
	assert.Contains(t, r.str("error"), "refusing to export over the session file")
	assert.Equal(t, 0, p.exit())
	assert.Equal(t, []string{"hello"}, userTexts(loadSession(t, file)))
	got, err := os.ReadFile(notes)
	require.NoError(t, err)
	assert.Equal(t, text, string(got))

	q := w.start("--session", "NOTES.md")
	assert.Equal(t, 1, q.wait())
	assert.Contains(t, q.stderr.String(), "not a session file")
	got, err = os.ReadFile(notes)
	require.NoError(t, err)
	assert.Equal(t, text, string(got))
}

// Issue 25: two gopi on the same new --session file, taking turns A, B,
// A, B: B's first save used to replace the file whole, losing A's first
// exchange. Every entry of both is now in the file, which loads: the file
// is appended to under a lock, and B's conversation follows A's as a
// second root of the tree.
func TestRPCTwoProcessesOnOneSessionFileKeepEveryEntry(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("to A1"), llmtest.Text("to B1"), llmtest.Text("to A2"), llmtest.Text("to B2"))
	file := filepath.Join(w.cwd, "new.jsonl")
	a := w.start("--session", file)
	b := w.start("--session", file)
	for i, turn := range []struct {
		p    *proc
		text string
	}{{a, "A1"}, {b, "B1"}, {a, "A2"}, {b, "B2"}} {
		turn.p.ok(string(rune('1'+i)), map[string]any{"type": "prompt", "message": turn.text})
		turn.p.idle()
	}
	assert.Equal(t, 0, a.exit())
	assert.Equal(t, 0, b.exit())

	st := loadSession(t, file)
	assert.Equal(t, []string{"A1", "A2", "B1", "B2"}, slices.Sorted(slices.Values(userTexts(st))))
	seen := map[string]bool{}
	for _, e := range st.Entries() {
		if parent := e.Base().ParentID; parent != "" {
			assert.True(t, seen[parent], "entry %s points at %s, which is not before it in the file", e.Base().ID, parent)
		}
		seen[e.Base().ID] = true
	}
	var assistants []string
	for _, e := range st.Entries() {
		if me, ok := e.(*session.MessageEntry); ok && me.Role() == llm.RoleAssistant {
			assistants = append(assistants, me.Message().(*llm.AssistantMessage).Content.Text())
		}
	}
	assert.Equal(t, []string{"to A1", "to A2", "to B1", "to B2"}, slices.Sorted(slices.Values(assistants)))

	// The file opens in gopi, at the last exchange written.
	c := w.start("--session", file)
	msgs := c.messages("1")
	require.NotEmpty(t, msgs)
	assert.Equal(t, "to B2", messageText(msgs[len(msgs)-1]))
	assert.Equal(t, 0, c.exit())
}

// Issue 25: the session file removed between two replies used to come
// back with only the new entries and no header, a file --session refused.
// It is now written again whole.
func TestRPCSessionFileRemovedMidRunIsWrittenWhole(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("a"), llmtest.Text("b"))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "reply: a"})
	p.idle()
	file := p.state("2")["sessionFile"].(string)
	require.NoError(t, os.Remove(file))
	p.ok("3", map[string]any{"type": "prompt", "message": "reply: b"})
	p.idle()
	assert.Equal(t, 0, p.exit())
	assert.NotContains(t, p.stderr.String(), "problem")

	q := w.start("--session", file)
	msgs := q.messages("1")
	var texts []string
	for _, m := range msgs {
		texts = append(texts, messageText(m))
	}
	assert.Equal(t, []string{"reply: a", "a", "reply: b", "b"}, texts)
	assert.Equal(t, 0, q.exit())
}

// Issue 25: a byte order mark before the header (an editor saved the
// file) made it "not a session file". It is skipped: --session opens the
// file, list_sessions lists it and --continue finds it.
func TestRPCSessionWithAByteOrderMark(t *testing.T) {
	t.Parallel()
	ref, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sessions", "pi-0.73.1.jsonl"))
	require.NoError(t, err)
	w := newWorld(t, llmtest.Text("continued"))
	cwd, err := filepath.EvalSymlinks(w.cwd)
	require.NoError(t, err)
	dir := session.DefaultDir(w.agentDir, cwd)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	file := filepath.Join(dir, "2026-11-21T14-12-12-199Z_01a1fe73-4f26-7251-b938-692c21ec01a2.jsonl")
	require.NoError(t, os.WriteFile(file, append([]byte("\xef\xbb\xbf"), ref...), 0o600))

	p := w.start("--session", file)
	st := p.state("1")
	assert.Equal(t, "01a1fe73-4f26-7251-b938-692c21ec01a2", st["sessionId"])
	list := p.ok("2", map[string]any{"type": "list_sessions"}).(map[string]any)["sessions"].([]any)
	require.Len(t, list, 1)
	assert.Equal(t, file, list[0].(map[string]any)["path"])
	p.ok("3", map[string]any{"type": "prompt", "message": "and now?"})
	p.idle()
	assert.Equal(t, 0, p.exit())

	q := w.start("--continue")
	st = q.state("1")
	assert.Equal(t, file, st["sessionFile"])
	assert.Equal(t, "continued", q.ok("2", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)["text"])
	assert.Equal(t, 0, q.exit())
}

// Issue 25: a project deeper than about 250 bytes made gopi exit 1: its
// session directory is named after the whole path, past what a file name
// may be (pi 1.5 fails the same way). The name is shortened with a hash;
// gopi starts, saves, and --continue and list_sessions find the session.
// The path is over 512 bytes, so the session header is too (--continue
// read only 512 bytes of it).
func TestRPCDeepProjectPathStartsAndContinues(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("deep reply"), llmtest.Text("deeper"))
	deep := w.cwd
	for len(deep) <= 560 {
		deep = filepath.Join(deep, "a-rather-long-directory-name-"+strings.Repeat("x", 10))
	}
	require.NoError(t, os.MkdirAll(deep, 0o755))
	w.cwd = deep

	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "hello from deep down"})
	p.idle()
	file := p.state("2")["sessionFile"].(string)
	assert.LessOrEqual(t, len(filepath.Base(filepath.Dir(file))), 255)
	assert.Equal(t, 0, p.exit())

	q := w.start("--continue")
	assert.Equal(t, file, q.state("1")["sessionFile"])
	list := q.ok("2", map[string]any{"type": "list_sessions"}).(map[string]any)["sessions"].([]any)
	require.Len(t, list, 1)
	assert.Equal(t, file, list[0].(map[string]any)["path"])
	assert.Equal(t, "hello from deep down", list[0].(map[string]any)["firstMessage"])
	q.ok("3", map[string]any{"type": "prompt", "message": "still here"})
	q.idle()
	assert.Equal(t, 0, q.exit())
	assert.Equal(t, []string{"hello from deep down", "still here"}, userTexts(loadSession(t, file)))
}
