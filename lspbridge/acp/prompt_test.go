package acp

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func blocks(t *testing.T, bs ...string) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, len(bs))
	for i, b := range bs {
		require.True(t, json.Valid([]byte(b)), b)
		out[i] = json.RawMessage(b)
	}
	return out
}

func TestPromptContent(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG fake"))
	zip := base64.StdEncoding.EncodeToString(make([]byte, 300))
	in, err := promptContent(blocks(t,
		`{"type":"text","text":"Look at these"}`,
		`{"type":"image","data":"`+png+`","mimeType":"image/png"}`,
		`{"type":"resource_link","uri":"file:///work/src/main.go","name":"main.go","size":120}`,
		`{"type":"resource_link","uri":"https://example.com/spec","name":"spec","title":"The spec"}`,
		`{"type":"resource","resource":{"uri":"file:///work/src/util.go","text":"package util\n// unsaved\n","mimeType":"text/x-go"}}`,
		`{"type":"resource","resource":{"uri":"zed://scratch/1","text":"notes"}}`,
		`{"type":"resource","resource":{"uri":"file:///work/shot.jpg","blob":"`+png+`","mimeType":"image/jpeg"}}`,
		`{"type":"resource","resource":{"uri":"file:///work/a.zip","blob":"`+zip+`","mimeType":"application/zip"}}`,
	))
	require.NoError(t, err)
	assert.Equal(t, "Look at these\n"+
		"[Linked file: /work/src/main.go (120 bytes)]\n"+
		"[Linked resource: https://example.com/spec (title The spec)]\n"+
		"<attached_file path=\"/work/src/util.go\">\npackage util\n// unsaved\n</attached_file>\n"+
		"<attached_file uri=\"zed://scratch/1\">\nnotes\n</attached_file>\n"+
		"[Attached image: /work/shot.jpg]\n"+
		"[Attached application/zip: /work/a.zip, 300 bytes; its content is not included]", in.text)
	require.Len(t, in.images, 2)
	assert.Equal(t, "image/png", in.images[0].MimeType)
	assert.Equal(t, png, in.images[0].Data)
	assert.Equal(t, "image/jpeg", in.images[1].MimeType)
}

func TestPromptContentRefuses(t *testing.T) {
	for raw, want := range map[string]string{
		`{"type":"audio","data":"AAAA","mimeType":"audio/wav"}`:          "prompt[1] is audio",
		`{"type":"image","mimeType":"image/png"}`:                        `prompt[1] (image) needs "data"`,
		`{"type":"image","data":"not base64!","mimeType":"image/png"}`:   "prompt[1].data must be the image's bytes in base64",
		`{"type":"image","data":"AAAA","mimeType":"text/plain"}`:         "prompt[1].mimeType must be an image type",
		`{"type":"resource_link","uri":"file:///x"}`:                     `prompt[1] (resource_link) needs "name"`,
		`{"type":"resource","resource":{"uri":"file:///x"}}`:             `prompt[1].resource needs "uri" and "text" or "blob"`,
		`{"type":"video","data":"AAAA"}`:                                 `prompt[1] has type "video"`,
		`{"text":"no type"}`:                                             `prompt[1] needs a string "type"`,
		`"just a string"`:                                                "prompt[1] must be an object",
		`{"type":"text","text":42}`:                                      "prompt[1] is not a valid text block",
		`{"type":"resource","resource":{"uri":"file:///x","blob":"%%"}}`: "prompt[1].resource.blob is not base64",
	} {
		_, err := promptContent(blocks(t, `{"type":"text","text":"hi"}`, raw))
		var re *rpcError
		require.ErrorAs(t, err, &re, raw)
		assert.Equal(t, codeInvalidParams, re.Code, raw)
		assert.Contains(t, re.Message, want, raw)
	}
	_, err := promptContent(blocks(t, `{"type":"text","text":"  "}`))
	assert.ErrorContains(t, err, `"prompt" has no content`)
	in, err := promptContent(blocks(t, `{"type":"image","data":"AAAA","mimeType":"image/png"}`))
	require.NoError(t, err, "an image alone is a prompt")
	assert.Len(t, in.images, 1)
}
