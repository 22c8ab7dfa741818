package session

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gopi-dev/gopi/core/llm"
)

// object is a JSON object that keeps its keys in order and its values raw,
// so a migration changes only what it means to and a rewritten line reads
// like the original.
type object []field

type field struct {
	key string
	val json.RawMessage
}

func parseObject(data []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errNotObject
	}
	var o object
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		o = append(o, field{key, val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o object) get(key string) (json.RawMessage, bool) {
	for _, f := range o {
		if f.key == key {
			return f.val, true
		}
	}
	return nil, false
}

func (o object) str(key string) string {
	v, _ := o.get(key)
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}

// set replaces key in place or appends it, as assigning a property of a
// JavaScript object does.
func (o *object) set(key string, val any) {
	raw, err := json.Marshal(val)
	if err != nil {
		panic(fmt.Sprintf("session: marshal %T: %v", val, err)) // only called with plain values
	}
	for i := range *o {
		if (*o)[i].key == key {
			(*o)[i].val = raw
			return
		}
	}
	*o = append(*o, field{key, raw})
}

func (o *object) del(key string) {
	for i, f := range *o {
		if f.key == key {
			*o = append((*o)[:i], (*o)[i+1:]...)
			return
		}
	}
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// migrate brings the parsed lines of a file (header first) from version
// to the current version, in place, following pi's rules:
//
//   - v1 → v2: every entry gets an 8-hex id and the previous entry as its
//     parent (a linear chain); a compaction's firstKeptEntryIndex (an index
//     into the file's lines, header included) becomes firstKeptEntryId.
//   - v2 → v3: the message role "hookMessage" becomes "custom".
//
// The header's version is set to the new value.
func migrate(objs []object, version int) error {
	if version < 2 {
		ids := map[string]bool{}
		prev := ""
		for i := range objs {
			o := &objs[i]
			if o.str("type") == string(EntrySession) {
				o.set("version", 2)
				continue
			}
			id := newEntryID(func(id string) bool { return ids[id] })
			ids[id] = true
			o.set("id", id)
			if prev == "" {
				o.set("parentId", nil)
			} else {
				o.set("parentId", prev)
			}
			prev = id
			if o.str("type") != string(EntryCompaction) {
				continue
			}
			raw, ok := o.get("firstKeptEntryIndex")
			if !ok {
				continue
			}
			var idx float64
			if json.Unmarshal(raw, &idx) != nil {
				continue // pi only converts numbers and leaves anything else
			}
			// Only entries before this one have ids yet; pi's lookup of a
			// later one finds none and writes nothing.
			if t := int(idx); float64(t) == idx && t >= 0 && t < i && objs[t].str("type") != string(EntrySession) {
				o.set("firstKeptEntryId", objs[t].str("id"))
			}
			o.del("firstKeptEntryIndex")
		}
	}
	if version < 3 {
		for i := range objs {
			o := &objs[i]
			switch EntryType(o.str("type")) {
			case EntrySession:
				o.set("version", 3)
			case EntryMessage:
				raw, ok := o.get("message")
				if !ok {
					continue
				}
				msg, err := parseObject(raw)
				if err != nil || msg.str("role") != "hookMessage" {
					continue
				}
				msg.set("role", llm.RoleCustom)
				b, err := msg.MarshalJSON()
				if err != nil {
					return err
				}
				o.set("message", json.RawMessage(b))
			}
		}
	}
	return nil
}
