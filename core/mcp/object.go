package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
)

// member is one key of a JSON object with its value as written.
type member struct {
	key   string
	value json.RawMessage
}

// object is a JSON object whose keys keep the order of the file, as a
// JavaScript object keeps them: pi takes the first matching toolExposure
// pattern and lists servers in file order, and `gopi mcp add` writes a
// file back without reordering what it did not change.
type object []member

// errNotObject is decodeObject's answer for JSON that is valid but not an
// object.
var errNotObject = errors.New("not an object")

// decodeObject reads a JSON object, keeping its key order. A key given
// twice keeps its first place and its last value, as JSON.parse does.
func decodeObject(data []byte) (object, error) {
	var whole json.RawMessage
	if err := json.Unmarshal(data, &whole); err != nil {
		return nil, err
	}
	if jsonKind(whole) != "an object" {
		return nil, errNotObject
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // the opening brace
		return nil, err
	}
	var o object
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string) // the decoder allows only strings as keys
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.set(key, v)
	}
	return o, nil
}

func (o object) get(key string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// set replaces key's value in its place, or appends it.
func (o *object) set(key string, v json.RawMessage) {
	for i := range *o {
		if (*o)[i].key == key {
			(*o)[i].value = v
			return
		}
	}
	*o = append(*o, member{key, v})
}

func (o *object) remove(key string) bool {
	for i := range *o {
		if (*o)[i].key == key {
			*o = append((*o)[:i], (*o)[i+1:]...)
			return true
		}
	}
	return false
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(m.key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// jsonKind names the JSON type of a raw value, for error messages.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// isKind reports whether v is JSON of the kind jsonKind names.
func isKind(v json.RawMessage, kind string) bool { return jsonKind(v) == kind }

// asString decodes a JSON string.
func asString(v json.RawMessage) (string, bool) {
	var s string
	if !isKind(v, "a string") || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// stringMap reports whether v is an object of strings.
func stringMap(v json.RawMessage) bool {
	o, err := decodeObject(v)
	if err != nil {
		return false
	}
	for _, m := range o {
		if !isKind(m.value, "a string") {
			return false
		}
	}
	return true
}
