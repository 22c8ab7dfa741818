package agent

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/gopi-dev/gopi/core/llm"
)

// AppendJSON appends the event's JSON to dst when it is a lean
// message_update carrying a delta, the event a streaming reply sends
// thousands of times, and reports whether it did; any other event goes
// through MarshalJSON. The bytes decode to exactly what MarshalJSON's
// do: the same keys in the same order, strings escaped by encoding/json.
// What it saves is the reflection and the re-scan of nested MarshalJSON
// output that encoding/json does for every level.
func (e Event) AppendJSON(dst []byte) ([]byte, bool) {
	if e.Type != EventMessageUpdate || e.Message != nil || e.Usage == nil || e.AssistantEvent == nil {
		return dst, false
	}
	ae := e.AssistantEvent
	if ae.Partial != nil {
		return dst, false
	}
	switch ae.Type {
	case llm.EventTextDelta, llm.EventThinkingDelta, llm.EventToolCallDelta:
	default:
		return dst, false
	}
	dst = append(dst, `{"type":"message_update","usage":`...)
	dst = appendUsage(dst, e.Usage)
	dst = append(dst, `,"assistantMessageEvent":{"type":"`...)
	dst = append(dst, ae.Type...)
	dst = append(dst, `","contentIndex":`...)
	dst = strconv.AppendInt(dst, int64(ae.ContentIndex), 10)
	dst = append(dst, `,"delta":`...)
	dst = appendString(dst, ae.Delta)
	dst = append(dst, "}}"...)
	return dst, true
}

// appendUsage writes u as encoding/json writes llm.Usage.
func appendUsage(dst []byte, u *llm.Usage) []byte {
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
	dst = appendFloat(dst, c.Input)
	dst = append(dst, `,"output":`...)
	dst = appendFloat(dst, c.Output)
	dst = append(dst, `,"cacheRead":`...)
	dst = appendFloat(dst, c.CacheRead)
	dst = append(dst, `,"cacheWrite":`...)
	dst = appendFloat(dst, c.CacheWrite)
	dst = append(dst, `,"total":`...)
	dst = appendFloat(dst, c.Total)
	return append(dst, "}}"...)
}

// appendFloat formats f as encoding/json does: the shortest form that
// reads back the same, in exponent form only below 1e-6 or from 1e21,
// with a one-digit exponent written without a leading zero.
func appendFloat(dst []byte, f float64) []byte {
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

const hexDigits = "0123456789abcdef"

// appendString quotes s as encoding/json.Marshal does: HTML characters
// (<, >, &) and U+2028/U+2029 as \u escapes, control characters as short
// escapes where JSON has them, invalid UTF-8 as U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
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
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
