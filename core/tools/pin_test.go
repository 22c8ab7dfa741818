//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
)

// runPinned asks about a call (CallTarget), lets fn change the disk while
// the question waits, then runs the approved call (PinCall, WithPin) and
// returns its result.
func runPinned(t *testing.T, cwd, tool, args string, fn func()) agent.Result {
	t.Helper()
	target, ok := CallTarget(context.Background(), cwd, tool, json.RawMessage(args))
	require.True(t, ok)
	fn()
	pinned, pin, ok := PinCall(tool, json.RawMessage(args), target)
	require.True(t, ok)
	tl, err := New(tool, cwd)
	require.NoError(t, err)
	res, err := tl.Run(WithPin(context.Background(), pin), agent.Call{ID: "c1", Name: tool, Args: pinned}, func(agent.Result) {})
	require.NoError(t, err)
	return res
}

func TestPinnedCallsWorkOnTheFileTheQuestionNamed(t *testing.T) {
	proj, out := t.TempDir(), t.TempDir()
	outside := filepath.Join(out, "rc")
	require.NoError(t, os.WriteFile(outside, []byte("key=1\n"), 0o644))
	conf := filepath.Join(proj, "conf.txt")
	swap := func() {
		require.NoError(t, os.Remove(conf))
		require.NoError(t, os.Symlink(outside, conf))
	}
	for _, tc := range []struct{ tool, args string }{
		{NameEdit, `{"path":"conf.txt","edits":[{"oldText":"key=1","newText":"key=2"}]}`},
		{NameWrite, `{"path":"conf.txt","content":"key=2\n"}`},
		{NameRead, `{"path":"conf.txt"}`},
	} {
		require.NoError(t, os.RemoveAll(conf))
		require.NoError(t, os.WriteFile(conf, []byte("key=1\n"), 0o644))
		res := runPinned(t, proj, tc.tool, tc.args, swap)
		assert.True(t, res.IsError, tc.tool)
		assert.Contains(t, text(res), conf+" changed while the approval question waited (it is now a link to "+outside+")", tc.tool)
		data, err := os.ReadFile(outside)
		require.NoError(t, err)
		assert.Equal(t, "key=1\n", string(data), tc.tool)
	}

	// Unchanged, the same calls run.
	require.NoError(t, os.Remove(conf))
	require.NoError(t, os.WriteFile(conf, []byte("key=1\n"), 0o644))
	res := runPinned(t, proj, NameEdit, `{"path":"conf.txt","edits":[{"oldText":"key=1","newText":"key=2"}]}`, func() {})
	assert.False(t, res.IsError, text(res))
	res = runPinned(t, proj, NameWrite, `{"path":"a/b/new.txt","content":"new\n"}`, func() {})
	assert.False(t, res.IsError, text(res))
	data, err := os.ReadFile(filepath.Join(proj, "a", "b", "new.txt"))
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(data))

	// A link put where a new file was to go is not followed.
	res = runPinned(t, proj, NameWrite, `{"path":"fresh.txt","content":"x"}`, func() {
		require.NoError(t, os.Symlink(outside, filepath.Join(proj, "fresh.txt")))
	})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "nothing was read or written")
	data, err = os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "key=1\n", string(data))
}

// A call whose path is a link the question followed works on the link's
// target as it was: the path becomes the target's, and a link changed
// afterwards leads nowhere else.
func TestPinCallNamesTheRealFile(t *testing.T) {
	proj, out := t.TempDir(), t.TempDir()
	real, other := filepath.Join(out, "real.txt"), filepath.Join(out, "other.txt")
	require.NoError(t, os.WriteFile(real, []byte("real\n"), 0o644))
	link := filepath.Join(proj, "notes.txt")
	require.NoError(t, os.Symlink(real, link))
	res := runPinned(t, proj, NameWrite, `{"path":"notes.txt","content":"approved\n"}`, func() {
		require.NoError(t, os.Remove(link))
		require.NoError(t, os.Symlink(other, link))
	})
	assert.False(t, res.IsError, text(res))
	data, err := os.ReadFile(real)
	require.NoError(t, err)
	assert.Equal(t, "approved\n", string(data))
	assert.NoFileExists(t, other)

	_, _, ok := PinCall(NameBash, json.RawMessage(`{"command":"true"}`), Target{})
	assert.False(t, ok, "only read, edit and write are pinned")
}
