package anthropic

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// deltaEvent is a content_block_delta event's payload.
type deltaEvent struct {
	Index int64 `json:"index"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		Signature   string `json:"signature"`
	} `json:"delta"`
}

// decodeDelta decodes a content_block_delta event. The API writes these
// in one fixed shape, {"type":"content_block_delta","index":N,"delta":
// {"type":"…","<field>":"…"}}, and a reply is made of little else, so
// that shape is read directly; anything else (other field orders, extra
// fields, whitespace) goes through encoding/json, which gives the same
// result (FuzzDecodeDelta holds the two to that).
func decodeDelta(data []byte, d *deltaEvent) error {
	if fastDelta(data, d) {
		return nil
	}
	*d = deltaEvent{}
	return json.Unmarshal(data, d)
}

func fastDelta(data []byte, d *deltaEvent) bool {
	const head = `{"type":"content_block_delta","index":`
	rest, ok := bytes.CutPrefix(data, []byte(head))
	if !ok {
		return false
	}
	comma := bytes.IndexByte(rest, ',')
	if comma <= 0 || comma > 18 {
		return false
	}
	for _, c := range rest[:comma] {
		if c < '0' || c > '9' {
			return false
		}
	}
	if comma > 1 && rest[0] == '0' {
		return false // a leading zero is not JSON
	}
	idx, err := strconv.ParseInt(string(rest[:comma]), 10, 64)
	if err != nil {
		return false
	}
	rest, ok = bytes.CutPrefix(rest[comma:], []byte(`,"delta":{"type":"`))
	if !ok {
		return false
	}
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return false
	}
	typ := rest[:q]
	var field *string
	var kind, key string // kind is a constant: naming it costs no allocation
	switch string(typ) {
	case "text_delta":
		field, kind, key = &d.Delta.Text, "text_delta", `","text":"`
	case "thinking_delta":
		field, kind, key = &d.Delta.Thinking, "thinking_delta", `","thinking":"`
	case "input_json_delta":
		field, kind, key = &d.Delta.PartialJSON, "input_json_delta", `","partial_json":"`
	case "signature_delta":
		field, kind, key = &d.Delta.Signature, "signature_delta", `","signature":"`
	default:
		return false
	}
	rest, ok = bytes.CutPrefix(rest[q:], []byte(key))
	if !ok {
		return false
	}
	// The string runs to the first quote that is not escaped; only the
	// closing braces may follow it.
	end, escaped := -1, false
	for i := 0; i < len(rest); {
		switch c := rest[i]; {
		case c == '\\':
			escaped = true
			i += 2
			continue
		case c == '"':
			end = i
		case c < 0x20:
			return false // a raw control character is not JSON
		}
		if end >= 0 {
			break
		}
		i++
	}
	if end < 0 || string(rest[end:]) != `"}}` {
		return false
	}
	var str string
	if raw := rest[:end]; !escaped && utf8.Valid(raw) {
		str = string(raw)
	} else if str, ok = unquote(rest[:end+1]); !ok {
		return false
	}
	*d = deltaEvent{Index: idx}
	d.Delta.Type = kind
	*field = str
	return true
}

// unquote decodes a JSON string's body and closing quote with escapes, or
// bytes that are not UTF-8, as encoding/json would inside the event. It
// is apart from fastDelta so that only this rarer path pays for a string
// that escapes to the heap.
func unquote(body []byte) (string, bool) {
	full := make([]byte, 0, len(body)+1)
	full = append(append(full, '"'), body...)
	var s string
	if err := json.Unmarshal(full, &s); err != nil {
		return "", false
	}
	return s, true
}
