package llm

import (
	"reflect"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// A content block read straight from the stream (its "type" first) decodes
// to what reading it on its own gives, and fails where that fails.
func FuzzContentBlock(f *testing.F) {
	for _, b := range []string{
		`{"type":"text","text":"hi \"there\"\u2028"}`,
		`{"type":"text" ,"text":"a","textSignature":"s"}`,
		`{"type":"thinking","thinking":"hm","thinkingSignature":"x","redacted":true}`,
		`{"type":"image","data":"aGk=","mimeType":"image/png"}`,
		`{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}`,
		`{"type":"toolCall","id":"c1","name":"read","arguments":null}`,
		`{"type":"text","TEXT":"case","text":"dup"}`,
		`{"type":"text","text":5}`,
		`{"type":"video"}`,
	} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, block []byte) {
		if !jsontext.Value(block).IsValid(Lenient) {
			return // not one block: the message would hold another list
		}
		want, werr := UnmarshalContent(block)
		msg := append(append([]byte(`{"role":"user","content":[`), block...), `],"timestamp":1}`...)
		m, err := UnmarshalMessage(msg)
		if werr != nil {
			if err == nil {
				t.Fatalf("the block alone fails (%v), in a message it decodes: %s", werr, block)
			}
			return
		}
		if err != nil {
			t.Fatalf("the block alone decodes, in a message it fails: %v: %s", err, block)
		}
		got := m.(*UserMessage).Content
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Fatalf("in a message %#v, alone %#v: %s", got, want, block)
		}
	})
}
