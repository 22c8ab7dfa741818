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
	var key string
	switch string(typ) {
	case "text_delta":
		field, key = &d.Delta.Text, `","text":"`
	case "thinking_delta":
		field, key = &d.Delta.Thinking, `","thinking":"`
	case "input_json_delta":
		field, key = &d.Delta.PartialJSON, `","partial_json":"`
	case "signature_delta":
		field, key = &d.Delta.Signature, `","signature":"`
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
	} else {
		// Escapes, or bytes that are not UTF-8: encoding/json decodes the
		// string as it would inside the event.
		full := make([]byte, 0, end+2)
		full = append(append(full, '"'), rest[:end+1]...)
		if err := json.Unmarshal(full, &str); err != nil {
			return false
		}
	}
	*d = deltaEvent{Index: idx}
	d.Delta.Type = string(typ)
	*field = str
	return true
}
