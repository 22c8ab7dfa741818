package lspbridge

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/api"
)

func fileURI(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

func TestInitializeResult(t *testing.T) {
	h := startBridge(t, stateRT(), config{})
	resp := h.initialize(`{}`, "")
	require.Nil(t, resp.errObj(), resp)

	var res struct {
		Capabilities struct {
			Experimental struct {
				Pi struct {
					ProtocolVersion int      `json:"protocolVersion"`
					Commands        []string `json:"commands"`
					Events          []string `json:"events"`
				} `json:"pi"`
			} `json:"experimental"`
		} `json:"capabilities"`
		ServerInfo struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
	}
	require.NoError(t, json.Unmarshal(resp.result(), &res))
	assert.Equal(t, "gopi", res.ServerInfo.Name)
	assert.Equal(t, "1.2.3-test", res.ServerInfo.Version)
	pi := res.Capabilities.Experimental.Pi
	assert.Equal(t, ProtocolVersion, pi.ProtocolVersion)
	assert.Equal(t, 1, pi.ProtocolVersion)
	// One pi/ method per native command.
	require.Len(t, pi.Commands, len(api.Commands()))
	for i, c := range api.Commands() {
		assert.Equal(t, "pi/"+c, pi.Commands[i])
	}
	assert.Contains(t, pi.Commands, "pi/get_state")
	assert.Contains(t, pi.Commands, "pi/prompt")
	assert.Equal(t, Events(), pi.Events)
	for _, ev := range []string{"agent_start", "agent_end", "message_update", "tool_execution_start",
		"auto_compaction_start", "auto_retry_end", "extension_error"} {
		assert.Contains(t, pi.Events, ev)
	}

	// initialized is a no-op, and the connection serves.
	h.notify("initialized", `{}`)
	assert.Empty(t, h.sync())
	resp = h.request("pi/get_state", nil)
	assert.Nil(t, resp.errObj(), resp)
}

func TestInitializeOnlyOnceAndFirst(t *testing.T) {
	t.Run("twice", func(t *testing.T) {
		h := startBridge(t, stateRT(), config{})
		require.Nil(t, h.initialize(`{}`, "").errObj())
		errorResponse(t, h.initialize(`{}`, ""), "2", -32600)
	})
	t.Run("after a pi request", func(t *testing.T) {
		h := startBridge(t, stateRT(), config{})
		// Lifecycle messages and unknown methods do not count.
		h.notify("initialized", nil)
		errorResponse(t, h.request("foo/bar", nil), "1", -32601)
		require.Nil(t, h.request("pi/get_state", nil).errObj())
		e := errorResponse(t, h.initialize(`{}`, ""), "3", -32600)
		assert.Contains(t, e.Message, "pi/")
	})
	t.Run("not required", func(t *testing.T) {
		h := startBridge(t, stateRT(), config{})
		resp := h.request("pi/get_state", nil)
		require.Nil(t, resp.errObj(), resp)
		assert.Contains(t, string(resp.result()), `"sessionId":"s1"`)
	})
}

// reconfigureCall is one call of a fake Reconfigure.
type reconfigureCall struct {
	cwd  string
	opts InitOptions
}

type fakeReconfigure struct {
	mu    sync.Mutex
	calls []reconfigureCall
	next  *fakeRT
	err   error
}

func (f *fakeReconfigure) fn(_ context.Context, cwd string, opts InitOptions) (Runtime, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, reconfigureCall{cwd, opts})
	if f.err != nil {
		return nil, f.err
	}
	return f.next, nil
}

func (f *fakeReconfigure) got() []reconfigureCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]reconfigureCall(nil), f.calls...)
}

func TestInitializeReconfiguresTheRuntime(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	for _, tc := range []struct {
		name  string
		extra string
		cwd   string
		opts  InitOptions
	}{
		{"workspace folder wins over rootUri", `"rootUri":"` + fileURI(other) + `","workspaceFolders":[{"uri":"` + fileURI(dir) + `","name":"w"}]`, dir, InitOptions{}},
		{"rootUri", `"rootUri":"` + fileURI(dir) + `"`, dir, InitOptions{}},
		{"rootPath", `"rootPath":` + string(mustJSON(dir)), dir, InitOptions{}},
		{"options only", `"initializationOptions":{"provider":"faux","model":"m1","thinkingLevel":"high","sessionFile":"s.jsonl","continue":true,"noSession":true}`, "",
			InitOptions{Provider: "faux", Model: "m1", ThinkingLevel: "high", SessionFile: "s.jsonl", Continue: true, NoSession: true}},
		{"folder and options", `"workspaceFolders":[{"uri":"` + fileURI(dir) + `","name":"w"}],"initializationOptions":{"model":"m2"}`, dir, InitOptions{Model: "m2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := stateRT()
			second := newFakeRT()
			second.getState = func(context.Context) (api.State, error) { return api.State{SessionID: "second"}, nil }
			rc := &fakeReconfigure{next: second}
			h := startBridge(t, first, config{reconfigure: rc.fn})

			resp := h.initialize(`{}`, tc.extra)
			require.Nil(t, resp.errObj(), resp)
			require.Len(t, rc.got(), 1)
			assert.Equal(t, reconfigureCall{tc.cwd, tc.opts}, rc.got()[0])

			// The new runtime serves, hears the bridge, and the old one is
			// let go.
			resp = h.request("pi/get_state", nil)
			require.Nil(t, resp.errObj(), resp)
			assert.Contains(t, string(resp.result()), `"sessionId":"second"`)
			assert.Same(t, h.b, second.ui())
			assert.Equal(t, 1, second.subscribers())
			assert.Nil(t, first.ui())
			assert.Zero(t, first.subscribers())
		})
	}
}

// replayRT tells its first subscriber, at once, what happened before it
// subscribed, as the host does with its MCP servers' states.
type replayRT struct {
	*fakeRT
	before api.Event
}

func (r replayRT) Subscribe(fn func(api.Event)) func() {
	unsub := r.fakeRT.Subscribe(fn)
	fn(r.before)
	return unsub
}

// Events a runtime emits while initialize is answered (the new runtime's
// first subscriber hears what happened before) come after the response:
// LSP has the server send nothing earlier, and vscode-languageclient drops
// what does. Later events go out at once.
func TestInitializeResponseComesBeforeEvents(t *testing.T) {
	dir := t.TempDir()
	second := replayRT{newFakeRT(), api.MCPServerState{Server: api.MCPServer{Name: "broken", State: api.MCPFailed}}}
	h := startBridge(t, stateRT(), config{reconfigure: func(context.Context, string, InitOptions) (Runtime, error) { return second, nil }})
	id := h.call("initialize", `{"capabilities":{},"rootUri":"`+fileURI(dir)+`"}`)
	first := h.next()
	require.True(t, isResponseTo(id)(first), "the response comes first: %s", first.raw)
	require.Nil(t, first.errObj(), first)
	ev := h.next()
	assert.Equal(t, methodEvent, ev.method())
	assert.Contains(t, string(ev.params()), `"type":"mcp_server_state"`)
	second.emit(api.MCPServerState{Server: api.MCPServer{Name: "broken", State: api.MCPConnecting}})
	ev = h.next()
	assert.Contains(t, string(ev.params()), `"state":"connecting"`)
}

// Nothing goes to the client before it speaks (LSP: nothing before the
// initialize response): an event emitted before its first message follows
// the response when that message is initialize, and goes before anything
// else otherwise (a client that skips initialize).
func TestEventsWaitForTheClientsFirstMessage(t *testing.T) {
	for _, first := range []string{"initialize", "pi/get_state"} {
		t.Run(first, func(t *testing.T) {
			rt := stateRT()
			h := startBridge(t, rt, config{})
			rt.emit(api.ExtensionError{ExtensionPath: "/x.ts", Event: "load", Error: "early"})
			var params any
			if first == "initialize" {
				params = `{"capabilities":{}}`
			}
			id := h.call(first, params)
			var got []*msg
			for len(got) < 2 {
				got = append(got, h.next())
			}
			ev, resp := got[0], got[1]
			if first == "initialize" {
				resp, ev = got[0], got[1]
			}
			require.True(t, isResponseTo(id)(resp), "%s", resp.raw)
			require.True(t, isEvent(ev), "%s", ev.raw)
			assert.Contains(t, string(ev.params()), `"error":"early"`)
		})
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestInitializeRejectsWhatItCannotServe(t *testing.T) {
	dir := t.TempDir()
	bad := []struct {
		name  string
		extra string
	}{
		{"non-file uri", `"rootUri":"https://example.com/repo"`},
		{"remote host", `"rootUri":"file://elsewhere/repo"`},
		{"missing dir", `"workspaceFolders":[{"uri":"` + fileURI(filepath.Join(dir, "missing")) + `","name":"w"}]`},
		{"not a dir", `"rootPath":` + string(mustJSON(filepath.Join(dir, "f")))},
		{"wrong type", `"initializationOptions":{"model":5}`},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, writeFile(filepath.Join(dir, "f")))
			rc := &fakeReconfigure{next: newFakeRT()}
			h := startBridge(t, stateRT(), config{reconfigure: rc.fn})
			errorResponse(t, h.initialize(`{}`, tc.extra), "1", -32602)
			assert.Empty(t, rc.got())
			// Initialize may be retried, and the first runtime still serves.
			require.Nil(t, h.initialize(`{}`, "").errObj())
			assert.Contains(t, string(h.request("pi/get_state", nil).result()), `"s1"`)
		})
	}

	t.Run("reconfigure fails", func(t *testing.T) {
		first := stateRT()
		rc := &fakeReconfigure{err: errors.New("no model named m9")}
		h := startBridge(t, first, config{reconfigure: rc.fn})
		e := errorResponse(t, h.initialize(`{}`, `"initializationOptions":{"model":"m9"}`), "1", -32803)
		assert.Equal(t, "no model named m9", e.Message)
		assert.JSONEq(t, `{"command":"initialize"}`, string(e.Data))
		// The runtime served so far still serves and still hears the bridge.
		assert.Contains(t, string(h.request("pi/get_state", nil).result()), `"s1"`)
		assert.Same(t, h.b, first.ui())
		assert.Equal(t, 1, first.subscribers())
	})

	t.Run("no reconfigure", func(t *testing.T) {
		for _, extra := range []string{
			`"rootUri":"` + fileURI(dir) + `"`,
			`"workspaceFolders":[{"uri":"` + fileURI(dir) + `","name":"w"}]`,
			`"initializationOptions":{"model":"m1"}`,
		} {
			h := startBridge(t, stateRT(), config{})
			errorResponse(t, h.initialize(`{}`, extra), "1", -32602)
		}
		// What changes only the bridge needs no Reconfigure.
		h := startBridge(t, stateRT(), config{})
		require.Nil(t, h.initialize(`{}`, `"initializationOptions":{"fullUpdates":true}`).errObj())
	})
}

func writeFile(path string) error { return os.WriteFile(path, []byte("x"), 0o644) }

func TestShutdownThenExit(t *testing.T) {
	rt := stateRT()
	h := startBridge(t, rt, config{})
	require.Nil(t, h.initialize(`{}`, "").errObj())

	resp := h.request("shutdown", nil)
	require.Nil(t, resp.errObj(), resp)
	assert.Equal(t, "null", string(resp.result()))
	assert.Equal(t, int32(1), rt.abortBashes.Load(), "shutdown stops a running bash command")
	assert.Len(t, rt.aborts, 1, "shutdown aborts the run")

	// Only exit is accepted now: requests fail, a second shutdown too,
	// and notifications are dropped unheard.
	errorResponse(t, h.request("pi/get_state", nil), "3", -32600)
	errorResponse(t, h.request("foo/bar", nil), "4", -32600)
	errorResponse(t, h.request("shutdown", nil), "5", -32600)
	var named atomic.Bool
	rt.setSessionName = func(context.Context, api.NameParams) error { named.Store(true); return nil }
	h.notify("pi/set_session_name", map[string]any{"name": "late"})
	h.sync()
	assert.False(t, named.Load(), "a pi/ notification after shutdown is not carried out")

	h.notify("exit", nil)
	assert.Equal(t, 0, h.exitCode())
}

func TestExitWithoutShutdownReturnsOne(t *testing.T) {
	h := startBridge(t, stateRT(), config{})
	require.Nil(t, h.initialize(`{}`, "").errObj())
	h.notify("exit", nil)
	assert.Equal(t, 1, h.exitCode())
}

// Serve ends on exit though the client keeps its end of the input open
// and the pump is blocked reading it: a read of stdin cannot be
// interrupted, so closing must not wait for it.
func TestExitDoesNotWaitForTheBlockedRead(t *testing.T) {
	h := startBridge(t, stateRT(), config{})
	require.Nil(t, h.request("pi/get_state", nil).errObj())
	h.notify("exit", nil)
	select {
	case <-h.served:
	case <-time.After(waitTimeout):
		t.Fatal("Serve waited for more input after exit")
	}
	assert.Equal(t, 1, h.code)
}

func TestEndOfInputEndsServe(t *testing.T) {
	h := startBridge(t, stateRT(), config{})
	require.Nil(t, h.request("pi/get_state", nil).errObj())
	h.closeInput()
	assert.Equal(t, 0, h.exitCode())
}

func TestContextEndsServe(t *testing.T) {
	h := startBridge(t, stateRT(), config{})
	require.Nil(t, h.request("pi/get_state", nil).errObj())
	h.cancel()
	assert.Equal(t, 0, h.exitCode())
}
