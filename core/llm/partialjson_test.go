package llm

import (
	"encoding/json"
	"testing"
)

func TestParsePartialJSON(t *testing.T) {
	cases := map[string]string{
		``:                              `{}`,
		`{`:                             `{}`,
		`{"pa`:                          `{}`,
		`{"path"`:                       `{}`,
		`{"path":`:                      `{}`,
		`{"path": "gree`:                `{"path": "gree"}`,
		`{"path":"a.txt","lim`:          `{"path":"a.txt"}`,
		`{"path":"a.txt",`:              `{"path":"a.txt"}`,
		`{"edits":[{"oldText":"x","new`: `{"edits":[{"oldText":"x"}]}`,
		`{"n": 12`:                      `{"n": 12}`,
		`{"s":"a\`:                      `{"s":"a"}`,
		`{"s":"a\u00`:                   `{"s":"a"}`,
		`{"b": tr`:                      `{}`,
		`{"a":1,"b": tr`:                `{"a":1}`,
		`{"command":"echo hi"}`:         `{"command":"echo hi"}`,
		`{"x":{"y":[1,2`:                `{"x":{"y":[1,2]}}`,
	}
	for in, want := range cases {
		got, ok := ParsePartialJSON(in)
		if !ok {
			t.Errorf("%q: not ok", in)
			continue
		}
		if string(got) != want {
			t.Errorf("%q: got %s want %s", in, got, want)
		}
		if !json.Valid(got) {
			t.Errorf("%q: invalid %s", in, got)
		}
	}
	if _, ok := ParsePartialJSON(`[1,2`); ok {
		t.Errorf("array accepted")
	}
}
