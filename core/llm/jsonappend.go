package llm

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// The appenders below write what encoding/json.Marshal writes, byte for
// byte, without reflection: the streaming path encodes thousands of
// events a second with them. FuzzAppendJSON (core/agent) and
// FuzzAssistantEncoder hold them to encoding/json's output.

const hexDigits = "0123456789abcdef"

// AppendJSONString quotes s as encoding/json.Marshal does: HTML
// characters (<, >, &) and U+2028/U+2029 as \u escapes, control
// characters as short escapes where JSON has them, invalid UTF-8 as
// U+FFFD.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s)
	return append(dst, '"')
}

// appendEscaped is AppendJSONString without the quotes.
func appendEscaped(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// AppendJSONFloat formats f as encoding/json does: the shortest form that
// reads back the same, in exponent form only below 1e-6 or from 1e21,
// with a one-digit exponent written without a leading zero. NaN and the
// infinities, which JSON cannot hold, are not handled.
func AppendJSONFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-07 → e-7
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// AppendUsage writes u as encoding/json writes Usage.
func AppendUsage(dst []byte, u *Usage) []byte {
	num := func(key string, n int) {
		dst = append(dst, key...)
		dst = strconv.AppendInt(dst, int64(n), 10)
	}
	num(`{"input":`, u.Input)
	num(`,"output":`, u.Output)
	num(`,"cacheRead":`, u.CacheRead)
	num(`,"cacheWrite":`, u.CacheWrite)
	num(`,"totalTokens":`, u.TotalTokens)
	c := u.Cost
	dst = append(dst, `,"cost":{"input":`...)
	dst = AppendJSONFloat(dst, c.Input)
	dst = append(dst, `,"output":`...)
	dst = AppendJSONFloat(dst, c.Output)
	dst = append(dst, `,"cacheRead":`...)
	dst = AppendJSONFloat(dst, c.CacheRead)
	dst = append(dst, `,"cacheWrite":`...)
	dst = AppendJSONFloat(dst, c.CacheWrite)
	dst = append(dst, `,"total":`...)
	dst = AppendJSONFloat(dst, c.Total)
	if c.TotalFromProvider != nil {
		dst = append(dst, `,"totalFromProvider":`...)
		dst = strconv.AppendBool(dst, *c.TotalFromProvider)
	}
	return append(dst, "}}"...)
}

// AssistantEncoder writes snapshots of one streaming assistant message as
// encoding/json.Marshal would, remembering each block's escaped text: as
// a block only ever grows at its end, the next snapshot escapes just what
// was added and copies the rest. A reply of n deltas sent whole with every
// update (the older protocol's message_update) then costs copies, not
// n escapes of the whole text. The zero value is ready; it is not safe
// for concurrent use.
type AssistantEncoder struct {
	blocks []escapedBlock
}

// escapedBlock is one text or thinking block's text, escaped up to Raw's
// length (Raw shares memory with the snapshot it came from).
type escapedBlock struct {
	raw string
	esc []byte
}

// Reset forgets the cached text (a new message starts).
func (e *AssistantEncoder) Reset() { e.blocks = e.blocks[:0] }

// escape appends the escaped form of block i's text s, from the cache
// where s extends what was escaped before.
func (e *AssistantEncoder) escape(dst []byte, i int, s string) []byte {
	for len(e.blocks) <= i {
		e.blocks = append(e.blocks, escapedBlock{})
	}
	b := &e.blocks[i]
	if len(s) < len(b.raw) || !sameStart(s, b.raw) {
		b.raw, b.esc = "", b.esc[:0]
	}
	// Escape up to the last whole rune, so a rune cut between two
	// deltas is escaped as one when its rest arrives.
	cut := len(s)
	for j := len(s) - 1; j >= 0 && j >= len(s)-utf8.UTFMax; j-- {
		if utf8.RuneStart(s[j]) {
			if !utf8.FullRuneInString(s[j:]) {
				cut = j
			}
			break
		}
	}
	if cut > len(b.raw) {
		b.esc = appendEscaped(b.esc, s[len(b.raw):cut])
		b.raw = s[:cut]
	}
	dst = append(dst, b.esc...)
	return appendEscaped(dst, s[len(b.raw):])
}

// sameStart reports whether s begins with prefix; a snapshot of a grown
// block shares its builder's memory, so this is usually one comparison
// of pointers.
func sameStart(s, prefix string) bool {
	if len(prefix) == 0 {
		return true
	}
	if unsafe.StringData(s) == unsafe.StringData(prefix) {
		return true
	}
	return strings.HasPrefix(s, prefix)
}

// Append writes m as encoding/json.Marshal(m) does; false (and dst as it
// was) when it cannot, for the caller to use encoding/json: a block of a
// kind it does not write, or tool arguments that are not JSON.
func (e *AssistantEncoder) Append(dst []byte, m *AssistantMessage) ([]byte, bool) {
	start := len(dst)
	dst = append(dst, `{"role":"assistant","content":`...)
	if m.Content == nil {
		dst = append(dst, "[]"...)
	} else {
		dst = append(dst, '[')
		for i, c := range m.Content {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = e.appendBlock(dst, i, c); !ok {
				return dst[:start], false
			}
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"api":`...)
	dst = AppendJSONString(dst, m.API)
	dst = append(dst, `,"provider":`...)
	dst = AppendJSONString(dst, m.Provider)
	dst = append(dst, `,"model":`...)
	dst = AppendJSONString(dst, m.Model)
	if m.ResponseID != "" {
		dst = append(dst, `,"responseId":`...)
		dst = AppendJSONString(dst, m.ResponseID)
	}
	dst = append(dst, `,"usage":`...)
	dst = AppendUsage(dst, &m.Usage)
	dst = append(dst, `,"stopReason":`...)
	dst = AppendJSONString(dst, string(m.StopReason))
	if m.RawStopReason != "" {
		dst = append(dst, `,"rawStopReason":`...)
		dst = AppendJSONString(dst, m.RawStopReason)
	}
	if m.ErrorMessage != "" {
		dst = append(dst, `,"errorMessage":`...)
		dst = AppendJSONString(dst, m.ErrorMessage)
	}
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, m.Timestamp, 10)
	if m.DurationMs != nil {
		dst = append(dst, `,"durationMs":`...)
		dst = strconv.AppendInt(dst, *m.DurationMs, 10)
	}
	if m.ThinkingLevel != "" {
		dst = append(dst, `,"thinkingLevel":`...)
		dst = AppendJSONString(dst, string(m.ThinkingLevel))
	}
	return append(dst, '}'), true
}

func (e *AssistantEncoder) appendBlock(dst []byte, i int, c Content) ([]byte, bool) {
	switch c := c.(type) {
	case TextContent:
		dst = append(dst, `{"type":"text","text":"`...)
		dst = e.escape(dst, i, c.Text)
		dst = append(dst, '"')
		if c.TextSignature != "" {
			dst = append(dst, `,"textSignature":`...)
			dst = AppendJSONString(dst, c.TextSignature)
		}
		return append(dst, '}'), true
	case ThinkingContent:
		dst = append(dst, `{"type":"thinking","thinking":"`...)
		dst = e.escape(dst, i, c.Thinking)
		dst = append(dst, '"')
		if c.ThinkingSignature != "" {
			dst = append(dst, `,"thinkingSignature":`...)
			dst = AppendJSONString(dst, c.ThinkingSignature)
		}
		if c.Redacted {
			dst = append(dst, `,"redacted":true`...)
		}
		return append(dst, '}'), true
	case ToolCall:
		args := []byte(c.Arguments)
		if len(args) == 0 {
			args = []byte("{}")
		}
		// encoding/json writes a RawMessage compacted, with HTML
		// characters escaped.
		var compact bytes.Buffer
		if err := json.Compact(&compact, args); err != nil {
			return dst, false
		}
		dst = append(dst, `{"type":"toolCall","id":`...)
		dst = AppendJSONString(dst, c.ID)
		dst = append(dst, `,"name":`...)
		dst = AppendJSONString(dst, c.Name)
		dst = append(dst, `,"arguments":`...)
		var esc bytes.Buffer
		json.HTMLEscape(&esc, compact.Bytes())
		dst = append(dst, esc.Bytes()...)
		if c.ThoughtSignature != "" {
			dst = append(dst, `,"thoughtSignature":`...)
			dst = AppendJSONString(dst, c.ThoughtSignature)
		}
		return append(dst, '}'), true
	}
	return dst, false
}

// AppendMessageJSON writes m as encoding/json.Marshal(m) does, for the
// messages that can be large (a pasted file in a user message, a long
// reply); false for any other, which the caller encodes with
// encoding/json. A 20 MB prompt is then copied once per event instead
// of being re-scanned at every level of nested MarshalJSON.
func AppendMessageJSON(dst []byte, m Message) ([]byte, bool) {
	switch m := m.(type) {
	case *UserMessage:
		if m == nil {
			return dst, false
		}
		start := len(dst)
		dst = append(dst, `{"role":"user","content":`...)
		var ok bool
		if dst, ok = appendContents(dst, m.Content); !ok {
			return dst[:start], false
		}
		dst = append(dst, `,"timestamp":`...)
		dst = strconv.AppendInt(dst, m.Timestamp, 10)
		return append(dst, '}'), true
	case *AssistantMessage:
		if m == nil {
			return dst, false
		}
		var enc AssistantEncoder
		return enc.Append(dst, m)
	}
	return dst, false
}

// appendContents writes text and image blocks; false for any other.
func appendContents(dst []byte, cs Contents) ([]byte, bool) {
	if cs == nil {
		return append(dst, "[]"...), true
	}
	dst = append(dst, '[')
	for i, c := range cs {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch c := c.(type) {
		case TextContent:
			dst = append(dst, `{"type":"text","text":`...)
			dst = AppendJSONString(dst, c.Text)
			if c.TextSignature != "" {
				dst = append(dst, `,"textSignature":`...)
				dst = AppendJSONString(dst, c.TextSignature)
			}
			dst = append(dst, '}')
		case ImageContent:
			dst = append(dst, `{"type":"image","data":`...)
			dst = AppendJSONString(dst, c.Data)
			dst = append(dst, `,"mimeType":`...)
			dst = AppendJSONString(dst, c.MimeType)
			dst = append(dst, '}')
		default:
			return dst, false
		}
	}
	return append(dst, ']'), true
}
