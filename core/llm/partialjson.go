package llm

import (
	"encoding/json"
	"strings"
)

// ParsePartialJSON turns the prefix of a JSON object, as a model streams
// it, into a valid JSON object holding what is complete so far: open
// strings are closed, a dangling key, comma or half-written literal is
// dropped, open arrays and objects are closed. ok is false when nothing
// sensible can be made (the text is not an object).
func ParsePartialJSON(s string) (json.RawMessage, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage("{}"), true
	}
	if json.Valid([]byte(s)) {
		if s[0] == '{' {
			return json.RawMessage(s), true
		}
		return nil, false
	}
	if s[0] != '{' {
		return nil, false
	}
	// Find the open containers and whether the text stops inside a string.
	stack, inString, escaped := scanJSON(s)
	text := s
	if inString {
		if escaped {
			text = text[:len(text)-1]
		}
		// Drop a half-written \u escape.
		if k := strings.LastIndex(text, `\u`); k >= 0 && len(text)-k < 6 && (k == 0 || text[k-1] != '\\') {
			text = text[:k]
		}
		text += `"`
	}
	for attempt := 0; attempt < 8; attempt++ {
		candidate := closeContainers(trimDangling(text), stack)
		if json.Valid([]byte(candidate)) {
			return json.RawMessage(candidate), true
		}
		// Cut back to the last separator and try again.
		cut := strings.LastIndexAny(text, ",{[")
		if cut < 0 {
			break
		}
		if text[cut] == ',' {
			text = text[:cut]
		} else {
			text = text[:cut+1]
		}
		stack = openContainers(text)
	}
	return nil, false
}

// trimDangling removes a trailing comma, colon or a key with no value.
func trimDangling(t string) string {
	for {
		t2 := strings.TrimRight(t, " \t\r\n")
		switch {
		case strings.HasSuffix(t2, ","):
			t = t2[:len(t2)-1]
			continue
		case strings.HasSuffix(t2, ":"):
			// drop the key too
			t2 = strings.TrimRight(t2[:len(t2)-1], " \t\r\n")
			if k := lastStringStart(t2); k >= 0 {
				t = t2[:k]
				continue
			}
			return t2
		}
		// A bare key string right after { or , (no colon yet).
		if strings.HasSuffix(t2, `"`) {
			if k := lastStringStart(t2); k > 0 {
				before := strings.TrimRight(t2[:k], " \t\r\n")
				if strings.HasSuffix(before, "{") || (strings.HasSuffix(before, ",") && insideObject(before)) {
					t = before
					continue
				}
			}
		}
		return t2
	}
}

// lastStringStart finds the opening quote of the string that ends t.
func lastStringStart(t string) int {
	if !strings.HasSuffix(t, `"`) {
		return -1
	}
	for k := len(t) - 2; k >= 0; k-- {
		if t[k] == '"' {
			bs := 0
			for j := k - 1; j >= 0 && t[j] == '\\'; j-- {
				bs++
			}
			if bs%2 == 0 {
				return k
			}
		}
	}
	return -1
}

func insideObject(t string) bool {
	st := openContainers(t)
	return len(st) > 0 && st[len(st)-1] == '{'
}

func openContainers(t string) []byte {
	stack, _, _ := scanJSON(t)
	return stack
}

// scanJSON walks JSON text and reports the containers still open at its
// end, whether it ends inside a string, and whether that string ends in a
// pending backslash escape.
func scanJSON(t string) (stack []byte, inString, escaped bool) {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	return stack, inString, escaped
}

func closeContainers(t string, stack []byte) string {
	var b strings.Builder
	b.WriteString(t)
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i] == '{' {
			b.WriteByte('}')
		} else {
			b.WriteByte(']')
		}
	}
	return b.String()
}
