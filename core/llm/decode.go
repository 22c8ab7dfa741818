package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Stored messages are decoded with json/v2, which validates as it decodes.
// encoding/json scanned a message several times over (for its role, then
// whole, then each content block for its type, then the block), which is
// where opening a long session went. Now a message is read once, and a
// content block twice (its bounds, then its fields).

// Lenient accepts what encoding/json accepts: duplicate names (the last
// wins), invalid UTF-8 (replaced with U+FFFD) and names in another case.
// Session files written by any version of pi or gopi read the same.
var Lenient = jsonv2.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
	jsonv2.MatchCaseInsensitiveNames(true),
)

var decoders = sync.Pool{New: func() any { return new(Decoder) }}

// Decoder is a pooled Lenient jsontext.Decoder that reads a byte slice in
// place (a bytes.Buffer is parsed without being copied).
type Decoder struct {
	jsontext.Decoder
	buf bytes.Buffer
}

// NewDecoder returns a Decoder reading data. Free it once nothing it
// returned is in use.
func NewDecoder(data []byte) *Decoder {
	d := decoders.Get().(*Decoder)
	d.buf = *bytes.NewBuffer(data)
	d.Reset(&d.buf, Lenient)
	return d
}

// Free returns d to the pool.
func (d *Decoder) Free() {
	d.buf = bytes.Buffer{}
	d.Reset(&d.buf)
	decoders.Put(d)
}

// memberString returns the string value of the top-level member name of
// the JSON object in data ("" when it is absent or null), reading no
// further than that member: the whole object is validated when it is
// decoded. pi writes "role" and "type" first, so this costs a few bytes.
func memberString(data []byte, name string) (string, error) {
	dec := NewDecoder(data)
	defer dec.Free()
	tok, err := dec.ReadToken()
	if err != nil {
		return "", err
	}
	if tok.Kind() != '{' {
		return "", fmt.Errorf("%w, not %s", errNotObject, kindName(tok.Kind()))
	}
	for dec.PeekKind() != '}' {
		key, err := dec.ReadToken()
		if err != nil {
			return "", err
		}
		if key.String() != name {
			if err := dec.SkipValue(); err != nil {
				return "", err
			}
			continue
		}
		val, err := dec.ReadToken()
		if err != nil {
			return "", err
		}
		switch val.Kind() {
		case '"':
			return val.String(), nil
		case 'n':
			return "", nil
		default:
			return "", fmt.Errorf("%q is %s, %w", name, kindName(val.Kind()), errNotString)
		}
	}
	if _, err := dec.ReadToken(); err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return "", nil
}

// firstString returns the plain string (no escapes, valid UTF-8) that
// data's first member holds when data starts with prefix (`{"name":"`, as
// pi writes "role" and "type"); ok is false otherwise, and the caller
// reads data as JSON.
func firstString(data []byte, prefix string) (s []byte, ok bool) {
	rest, ok := bytes.CutPrefix(data, []byte(prefix))
	if !ok {
		return nil, false
	}
	i := bytes.IndexByte(rest, '"')
	if i <= 0 || bytes.IndexByte(rest[:i], '\\') >= 0 || !utf8.Valid(rest[:i]) {
		return nil, false
	}
	j := i + 1
	for j < len(rest) && (rest[j] == ' ' || rest[j] == '\t' || rest[j] == '\r' || rest[j] == '\n') {
		j++
	}
	if j == len(rest) || (rest[j] != ',' && rest[j] != '}') {
		return nil, false
	}
	return rest[:i], true
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "invalid JSON"
}

// UnmarshalJSONFrom decodes content written as a string (one text block),
// null or an array of blocks, each by its "type", straight from the
// stream (json/v2 calls it; UnmarshalJSON goes through it).
func (cs *Contents) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		*cs = Contents{TextContent{Text: tok.String()}}
		return nil
	case 'n':
		_, err := dec.ReadToken()
		*cs = nil
		return err
	case '[':
	default:
		// Consume the value so the caller's error names its place.
		if _, err := dec.ReadValue(); err != nil {
			return err
		}
		return errContentShape
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	out := Contents{}
	for dec.PeekKind() != ']' {
		if c, ok, err := blockFrom(dec); ok {
			if err != nil {
				return err
			}
			out = append(out, c)
			continue
		}
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		c, err := UnmarshalContent(raw)
		if err != nil {
			return err
		}
		out = append(out, c)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	*cs = out
	return nil
}

// blockFrom decodes the next content block straight from the stream, read
// once, when its "type" comes first (as pi and gopi write it) and is
// known; ok is false, with nothing read, otherwise.
func blockFrom(dec *jsontext.Decoder) (c Content, ok bool, err error) {
	next := bytes.TrimLeft(dec.UnreadBuffer(), " \t\r\n,")
	typ, ok := firstString(next, `{"type":"`)
	if !ok {
		return nil, false, nil
	}
	return contentOf(ContentType(typ), func(v any) error { return jsonv2.UnmarshalDecode(dec, v, Lenient) })
}

func (cs *Contents) UnmarshalJSON(data []byte) error {
	if err := jsonv2.Unmarshal(data, cs, Lenient); err != nil {
		return fmt.Errorf("content: %w", err)
	}
	return nil
}
