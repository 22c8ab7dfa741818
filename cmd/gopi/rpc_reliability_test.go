package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Issue 17: a session file whose parentId chain loops used to load one
// message twice.
func TestRPCSessionWithAParentLoopLoadsEachMessageOnce(t *testing.T) {
	w := newWorld(t)
	file := filepath.Join(t.TempDir(), "loop.jsonl")
	lines := `{"type":"session","version":3,"id":"s1","timestamp":"2026-11-21T14:12:12.199Z","cwd":"/x"}
{"type":"message","id":"aaaa0001","parentId":"aaaa0003","timestamp":"2026-11-21T14:12:13.000Z","message":{"role":"user","content":"one","timestamp":1}}
{"type":"message","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-11-21T14:12:14.000Z","message":{"role":"user","content":"two","timestamp":2}}
{"type":"message","id":"aaaa0003","parentId":"aaaa0002","timestamp":"2026-11-21T14:12:15.000Z","message":{"role":"user","content":"three","timestamp":3}}
`
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	p := w.start("--session", file)
	var texts []any
	for _, m := range p.messages("1") {
		texts = append(texts, m.(map[string]any)["content"])
	}
	assert.Len(t, texts, 3, "%v", texts)
	tree := p.ok("2", map[string]any{"type": "get_tree"}).(map[string]any)["tree"].([]any)
	assert.NotEmpty(t, tree, "the loop still shows in the tree")
	assert.Equal(t, 0, p.exit())
}

// Issue 17: {"type":"prompt"} without a message used to be accepted and
// send an empty message; pi refuses it.
func TestRPCPromptWithoutMessageIsRefused(t *testing.T) {
	w := newWorld(t)
	p := w.start()
	r := p.call("1", map[string]any{"type": "prompt"})
	assert.Equal(t, false, r["success"])
	assert.Contains(t, r.str("error"), "message")
	assert.Empty(t, w.srv.Requests(), "nothing reached the model")
	assert.Equal(t, 0, p.exit())
}
